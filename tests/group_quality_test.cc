#include "io/group_quality.h"

#include <cstddef>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "core/compact_schedule.h"
#include "core/quality.h"
#include "core/types.h"
#include "gtest/gtest.h"

namespace dcpsched {
namespace {

// Its figures must be MeasureQuality's on the per-rank form, bit for bit.
void ExpectSameAsPerRank(const std::vector<Sample>& samples,
                         const Schedule& schedule, std::int64_t budget) {
  const ScheduleQuality per_rank =
      MeasureQuality(samples, schedule, budget).value();
  const GroupedQuality grouped =
      MeasureGroupedQuality(samples, CompactFromRanks(schedule), budget)
          .value();
  EXPECT_EQ(grouped.total_gpus, per_rank.total_gpus);
  EXPECT_EQ(grouped.balance_efficiency, per_rank.balance_efficiency);
  EXPECT_EQ(grouped.microbatch_count, per_rank.microbatch_count);
  EXPECT_EQ(grouped.microbatch_lower_bound, per_rank.microbatch_lower_bound);
  EXPECT_EQ(grouped.critical_path_work, per_rank.critical_path_work);
  EXPECT_EQ(grouped.total_tokens, per_rank.total_tokens);
  EXPECT_EQ(grouped.min_len, per_rank.min_len);
  EXPECT_EQ(grouped.max_len, per_rank.max_len);
  ASSERT_EQ(grouped.microbatches.size(), per_rank.microbatches.size());
  for (std::size_t m = 0; m < grouped.microbatches.size(); ++m) {
    const GroupedLoad& load = grouped.microbatches[m];
    const MicrobatchLoad& expected = per_rank.microbatches[m];
    EXPECT_EQ(load.max_work, expected.max_work);
    EXPECT_EQ(load.min_work, expected.min_work);
    EXPECT_EQ(RankTokens(load), expected.rank_tokens);
    EXPECT_EQ(RankWork(load), expected.rank_work);
    ASSERT_EQ(load.groups.size(), expected.groups.size());
    for (std::size_t g = 0; g < load.groups.size(); ++g) {
      EXPECT_EQ(load.groups[g].first_rank, expected.groups[g].first_rank);
      EXPECT_EQ(load.groups[g].size, expected.groups[g].size);
      EXPECT_EQ(load.groups[g].ids, expected.groups[g].ids);
      EXPECT_EQ(load.groups[g].tokens_per_rank,
                expected.groups[g].tokens_per_rank);
      EXPECT_EQ(load.groups[g].work_per_rank, expected.groups[g].work_per_rank);
    }
  }
}

TEST(MeasureGroupedQualityTest, EqualsMeasureQualityOnTheExpansion) {
  // Sample 0 (10 tokens) on 3 ranks: 10/3 tokens and 100/3 work, inexact.
  ExpectSameAsPerRank({{0, 10}, {1, 1}, {2, 3}, {3, 4}},
                      Schedule{.microbatches = {
                                   Microbatch{.rank_ids = {{0}, {0}, {0}, {1, 2}}},
                                   Microbatch{.rank_ids = {{3}, {3}, {3}, {3}}}}},
                      4);
}

TEST(MeasureGroupedQualityTest, BrokenSchedulesMeasureAsTheirExpansion) {
  // An empty rank, a sample in two groups of one microbatch (CP size 3 in
  // all), a repeated id, a sample left out.
  ExpectSameAsPerRank({{0, 8}, {1, 2}, {2, 5}},
                      Schedule{.microbatches = {Microbatch{
                                   .rank_ids = {{0}, {}, {0, 1, 1}, {0}}}}},
                      4);
}

TEST(MeasureGroupedQualityTest, SumOverRanksAddsRankByRank) {
  GroupedLoad load;
  load.groups.resize(2);
  load.groups[0].first_rank = 0;
  load.groups[0].size = 3;
  load.groups[0].work_per_rank = 0.1;
  load.groups[1].first_rank = 3;
  load.groups[1].size = 1;
  load.groups[1].work_per_rank = 0.2;
  EXPECT_EQ(load.width(), 4);
  EXPECT_EQ(SumOverRanks(load, &CpGroupLoad::work_per_rank),
            ((0.1 + 0.1) + 0.1) + 0.2);
}

TEST(MeasureGroupedQualityTest, UnknownIdNamesItsMicrobatchAndGroup) {
  const CompactSchedule schedule{.microbatches = {CompactMicrobatch{
      .groups = {{.first_rank = 0, .size = 1, .ids = {0}},
                 {.first_rank = 1, .size = 1, .ids = {9}}}}}};

  const absl::Status status =
      MeasureGroupedQuality({{0, 1}}, schedule, 4).status();

  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(),
                                "microbatch 0 group 1 holds sample id 9"))
      << status.message();
}

TEST(MeasureGroupedQualityTest, GroupsThatDoNotTileAreAnError) {
  const CompactSchedule gap{.microbatches = {CompactMicrobatch{
      .groups = {{.first_rank = 0, .size = 1, .ids = {0}},
                 {.first_rank = 2, .size = 1, .ids = {1}}}}}};

  EXPECT_EQ(MeasureGroupedQuality({{0, 1}, {1, 1}}, gap, 4).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(MeasureGroupedQualityTest, MicrobatchesOfDifferentWidthsAreAnError) {
  const CompactSchedule schedule{.microbatches = {
      CompactMicrobatch{.groups = {{.first_rank = 0, .size = 2, .ids = {0}}}},
      CompactMicrobatch{.groups = {{.first_rank = 0, .size = 1, .ids = {1}}}}}};

  const absl::Status status =
      MeasureGroupedQuality({{0, 1}, {1, 1}}, schedule, 4).status();

  EXPECT_TRUE(absl::StrContains(status.message(),
                                "microbatch 1 has 1 ranks but microbatch 0 has 2"))
      << status.message();
}

}  // namespace
}  // namespace dcpsched
