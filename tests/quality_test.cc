#include "core/quality.h"

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "core/compact_schedule.h"
#include "core/cost_model.h"
#include "core/types.h"
#include "core/validate.h"
#include "gtest/gtest.h"

namespace dcpsched::quality_test {
namespace {

Microbatch Ranks(std::vector<std::vector<SampleId>> rank_ids) {
  return Microbatch{.rank_ids = std::move(rank_ids)};
}

TEST(MeasureQualityTest, PerfectlyBalancedScheduleHasEfficiencyOne) {
  const std::vector<Sample> samples = {{10, 4}, {11, 4}};
  const Schedule schedule{.microbatches = {Ranks({{10}, {11}})}};

  const absl::StatusOr<ScheduleQuality> quality =
      MeasureQuality(samples, schedule, /*max_seq_len_per_rank=*/4);

  ASSERT_TRUE(quality.ok()) << quality.status();
  EXPECT_EQ(quality->balance_efficiency, 1.0);
  EXPECT_EQ(quality->total_gpus, 2);
  EXPECT_EQ(quality->microbatch_count, 1);
  EXPECT_EQ(quality->microbatch_lower_bound, 1);  // ceil(8 / (2 * 4))
  EXPECT_EQ(quality->critical_path_work, 16.0);
  EXPECT_EQ(quality->total_tokens, 8);
  EXPECT_EQ(quality->min_len, 4);
  EXPECT_EQ(quality->max_len, 4);
  EXPECT_EQ(RankWork(quality->microbatches[0]), (std::vector<double>{16, 16}));
  EXPECT_EQ(RankTokens(quality->microbatches[0]), (std::vector<double>{4, 4}));
}

TEST(MeasureQualityTest, UnbalancedScheduleHasExactRatio) {
  // Ideal (16 + 4) / 2 = 10 per rank; the critical path carries 16.
  const std::vector<Sample> samples = {{0, 4}, {1, 2}};
  const Schedule schedule{.microbatches = {Ranks({{0}, {1}})}};

  const absl::StatusOr<ScheduleQuality> quality =
      MeasureQuality(samples, schedule, 4);

  ASSERT_TRUE(quality.ok()) << quality.status();
  EXPECT_EQ(quality->balance_efficiency, 0.625);
  EXPECT_EQ(quality->microbatches[0].max_work, 16.0);
  EXPECT_EQ(quality->microbatches[0].min_work, 4.0);
}

TEST(MeasureQualityTest, CpSizeIsTheNumberOfRanksHoldingTheSample) {
  // Sample 7 (len 8) is split over ranks 0-1: 8*8/2 = 32 work, 4 tokens each.
  const std::vector<Sample> samples = {{7, 8}, {8, 2}, {9, 2}};
  const Schedule schedule{.microbatches = {Ranks({{7}, {7}, {8}, {9}})}};

  const absl::StatusOr<ScheduleQuality> quality =
      MeasureQuality(samples, schedule, 4);

  ASSERT_TRUE(quality.ok()) << quality.status();
  const MicrobatchLoad& load = quality->microbatches[0];
  EXPECT_EQ(RankWork(load), (std::vector<double>{32, 32, 4, 4}));
  EXPECT_EQ(RankTokens(load), (std::vector<double>{4, 4, 2, 2}));
  // (64 + 4 + 4) / 4 = 18 ideal against 32 on the critical path.
  EXPECT_EQ(quality->balance_efficiency, 18.0 / 32.0);
  // ceil(12 / (4 * 4)) = 1.
  EXPECT_EQ(quality->microbatch_lower_bound, 1);

  ASSERT_EQ(load.groups.size(), 3u);
  EXPECT_EQ(load.groups[0].first_rank, 0);
  EXPECT_EQ(load.groups[0].size, 2);
  EXPECT_EQ(load.groups[0].ids, (std::vector<SampleId>{7}));
  EXPECT_EQ(load.groups[0].work_per_rank, 32.0);
  EXPECT_EQ(load.groups[0].tokens_per_rank, 4.0);
  EXPECT_EQ(load.groups[1].first_rank, 2);
  EXPECT_EQ(load.groups[1].size, 1);
  EXPECT_EQ(load.groups[2].ids, (std::vector<SampleId>{9}));
}

TEST(MeasureQualityTest, CriticalPathSumsTheBusiestRankOfEachMicrobatch) {
  const std::vector<Sample> samples = {{0, 6}, {1, 2}, {2, 4}, {3, 4}};
  const Schedule schedule{
      .microbatches = {Ranks({{0}, {1}}), Ranks({{2}, {3}})}};

  const absl::StatusOr<ScheduleQuality> quality =
      MeasureQuality(samples, schedule, 5);

  ASSERT_TRUE(quality.ok()) << quality.status();
  EXPECT_EQ(quality->critical_path_work, 36.0 + 16.0);
  // (36 + 4 + 16 + 16) / 2 = 36 ideal.
  EXPECT_EQ(quality->balance_efficiency, 36.0 / 52.0);
  EXPECT_EQ(quality->microbatch_count, 2);
  // ceil(16 / (2 * 5)) = 2.
  EXPECT_EQ(quality->microbatch_lower_bound, 2);
}

TEST(MeasureQualityTest, ASampleInTwoMicrobatchesHasItsCpSizeInEach) {
  // Sample 1 on both ranks of microbatch 0 and again of microbatch 1: CP
  // size 2 in each, so the same work 8 * 8 / 2 per rank in both.
  const Schedule twice{.microbatches = {Ranks({{1}, {1}}), Ranks({{1}, {1}})}};
  const absl::StatusOr<ScheduleQuality> quality = MeasureQuality({{1, 8}}, twice, 8);
  ASSERT_TRUE(quality.ok()) << quality.status();
  ASSERT_EQ(quality->microbatches.size(), 2u);
  EXPECT_EQ(RankWork(quality->microbatches[0]), (std::vector<double>{32.0, 32.0}));
  EXPECT_EQ(RankWork(quality->microbatches[1]), (std::vector<double>{32.0, 32.0}));
}

TEST(MeasureQualityTest, LowerBoundRoundsUpExactly) {
  const std::vector<Sample> samples = {{0, 3}, {1, 3}, {2, 1}};
  const Schedule schedule{.microbatches = {Ranks({{0, 1, 2}})}};

  EXPECT_EQ(MeasureQuality(samples, schedule, 7)->microbatch_lower_bound, 1);
  EXPECT_EQ(MeasureQuality(samples, schedule, 6)->microbatch_lower_bound, 2);
  EXPECT_EQ(MeasureQuality(samples, schedule, 1)->microbatch_lower_bound, 7);
}

TEST(MeasureQualityTest, LargestInputsDoNotOverflow) {
  // 2^21 samples of 2^26 tokens: 2^47 tokens (2^47 > G * mslpr = 2^47 - 2^16,
  // so two microbatches at least) and 2^73 squared tokens, past int64.
  constexpr std::int64_t kTotalGpus = 65536;
  constexpr std::int64_t kMaxLen = std::int64_t{1} << 26;
  std::vector<Sample> samples;
  for (std::int64_t id = 0; id < (std::int64_t{1} << 21); ++id) {
    samples.push_back({id, kMaxLen});
  }
  Microbatch microbatch;
  microbatch.rank_ids.resize(kTotalGpus);
  microbatch.rank_ids[0] = {0};
  const Schedule schedule{.microbatches = {microbatch}};

  const absl::StatusOr<ScheduleQuality> quality =
      MeasureQuality(samples, schedule, (std::int64_t{1} << 31) - 1);

  ASSERT_TRUE(quality.ok()) << quality.status();
  EXPECT_EQ(quality->total_tokens, std::int64_t{1} << 47);
  EXPECT_EQ(quality->microbatch_lower_bound, 2);
  // Ideal 2^73 / 2^16 = 2^57 against one sample's 2^52 on the critical path.
  EXPECT_EQ(quality->balance_efficiency, 32.0);
}

TEST(MeasureQualityTest, EmptyScheduleOfNoSamplesIsAllZero) {
  const absl::StatusOr<ScheduleQuality> quality =
      MeasureQuality({}, Schedule{}, 4);

  ASSERT_TRUE(quality.ok()) << quality.status();
  EXPECT_EQ(quality->balance_efficiency, 0.0);
  EXPECT_EQ(quality->microbatch_count, 0);
  EXPECT_EQ(quality->microbatch_lower_bound, 0);
  EXPECT_EQ(quality->total_gpus, 0);
}

// Samples in no particular id order, of distinct lengths: every id is still
// found, and the shortest and longest lengths are told apart.
TEST(MeasureQualityTest, SamplesInAnyIdOrderAreFoundAndTheirLengthsBounded) {
  const std::vector<Sample> samples = {{5, 3}, {2, 7}, {9, 5}};
  const Schedule schedule{.microbatches = {Ranks({{2}, {5}, {9}})}};

  const absl::StatusOr<ScheduleQuality> quality =
      MeasureQuality(samples, schedule, 8);

  ASSERT_TRUE(quality.ok()) << quality.status();
  EXPECT_EQ(RankTokens(quality->microbatches[0]), (std::vector<double>{7, 3, 5}));
  EXPECT_EQ(quality->min_len, 3);
  EXPECT_EQ(quality->max_len, 7);
}

// Many copies of one id: the sort that finds repeats must stay a strict
// ordering, and the repeat is reported.
TEST(MeasureQualityTest, ManyCopiesOfOneIdAreInvalidArgument) {
  const std::vector<Sample> samples(1000, Sample{3, 4});
  const Schedule schedule{.microbatches = {Ranks({{3}})}};

  const absl::StatusOr<ScheduleQuality> quality =
      MeasureQuality(samples, schedule, 4);

  EXPECT_EQ(quality.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(quality.status().message(), "sample id 3 appears twice"))
      << quality.status().message();
}

TEST(MeasureQualityTest, UnknownIdIsInvalidArgument) {
  const std::vector<Sample> samples = {{0, 4}};
  const Schedule schedule{.microbatches = {Ranks({{0}, {5}})}};

  const absl::StatusOr<ScheduleQuality> quality =
      MeasureQuality(samples, schedule, 4);

  EXPECT_EQ(quality.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(quality.status().message(), "sample id 5"))
      << quality.status().message();
  EXPECT_TRUE(absl::StrContains(quality.status().message(), "rank 1"))
      << quality.status().message();
}

// An unknown id between two known ones (it is looked up by binary search).
TEST(MeasureQualityTest, UnknownIdAmongKnownOnesIsInvalidArgument) {
  const std::vector<Sample> samples = {{2, 4}, {6, 4}};
  const Schedule schedule{.microbatches = {Ranks({{2}, {4}}), Ranks({{6}, {6}})}};

  const absl::StatusOr<ScheduleQuality> quality =
      MeasureQuality(samples, schedule, 4);

  EXPECT_EQ(quality.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(quality.status().message(),
                                "microbatch 0 rank 1 holds sample id 4"))
      << quality.status().message();
}

TEST(MeasureQualityTest, RaggedWidthsAreInvalidArgument) {
  const std::vector<Sample> samples = {{0, 4}, {1, 4}};
  const Schedule schedule{.microbatches = {Ranks({{0}, {0}}), Ranks({{1}})}};

  const absl::StatusOr<ScheduleQuality> quality =
      MeasureQuality(samples, schedule, 4);

  EXPECT_EQ(quality.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      absl::StrContains(quality.status().message(), "microbatch 1 has 1 ranks"))
      << quality.status().message();
  // A later microbatch wider than the first is ragged too.
  const Schedule wider{.microbatches = {Ranks({{0}, {0}}), Ranks({{1}, {1}, {1}})}};
  const absl::StatusOr<ScheduleQuality> widened = MeasureQuality(samples, wider, 4);
  EXPECT_EQ(widened.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(widened.status().message(), "microbatch 1 has 3 ranks"))
      << widened.status().message();
}

TEST(MeasureQualityTest, MalformedInputsAreInvalidArgument) {
  const std::vector<Sample> one = {{0, 4}};
  const Schedule placed{.microbatches = {Ranks({{0}})}};
  const std::vector<Sample> repeated = {{0, 4}, {0, 4}};
  // Not the smallest id twice: every neighbour pair must be compared.
  const std::vector<Sample> repeated_later = {{1, 4}, {2, 4}, {2, 4}};
  const std::vector<Sample> zero_len = {{0, 0}};
  const std::vector<Sample> too_long = {{0, kMaxSampleLen + 1}};
  const Schedule no_ranks{.microbatches = {Microbatch{}}};

  EXPECT_EQ(MeasureQuality(one, placed, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MeasureQuality(repeated, placed, 4).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MeasureQuality(repeated_later, Schedule{.microbatches = {Ranks({{1, 2}})}}, 4)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MeasureQuality(zero_len, placed, 4).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MeasureQuality(too_long, placed, 4).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MeasureQuality(one, Schedule{}, 4).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MeasureQuality({}, no_ranks, 4).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// A broken schedule is measured as it stands: an empty rank, a sample in two
// groups of one microbatch (CP size 3: three ranks hold it), an id twice on
// one rank (it counts twice), a sample left out.
TEST(MeasureQualityTest, BrokenScheduleIsMeasuredAsItStands) {
  const std::vector<Sample> samples = {{0, 8}, {1, 2}, {2, 5}};
  const Schedule schedule{.microbatches = {Ranks({{0}, {}, {0, 1, 1}, {0}})}};

  const absl::StatusOr<ScheduleQuality> quality =
      MeasureQuality(samples, schedule, 4);

  ASSERT_TRUE(quality.ok()) << quality.status();
  const MicrobatchLoad& load = quality->microbatches[0];
  const double busiest = (Work(8, 3) + Work(2, 2)) + Work(2, 2);
  EXPECT_EQ(RankWork(load), (std::vector<double>{Work(8, 3), 0.0, busiest, Work(8, 3)}));
  EXPECT_EQ(RankTokens(load)[2], (TokensPerRank(8, 3) + TokensPerRank(2, 2)) + TokensPerRank(2, 2));
  ASSERT_EQ(load.groups.size(), 4u);
  EXPECT_TRUE(load.groups[1].ids.empty());
  EXPECT_EQ(load.max_work, busiest);
  EXPECT_EQ(load.min_work, 0.0);
  EXPECT_EQ(quality->max_rank_work, busiest);
  EXPECT_EQ(quality->balance_efficiency, (93.0 / 4.0) / busiest);
}

// The compact form is measured group by group: a group of three ranks
// carries its ids' work on each of them, and holds a third of the sample.
TEST(MeasureQualityTest, CompactScheduleIsMeasuredByGroup) {
  const CompactSchedule schedule{.microbatches = {
      CompactMicrobatch{.groups = {{.first_rank = 0, .size = 3, .ids = {0}},
                                   {.first_rank = 3, .size = 1, .ids = {1, 2}}}},
      CompactMicrobatch{.groups = {{.first_rank = 0, .size = 4, .ids = {3}}}}}};

  const absl::StatusOr<ScheduleQuality> quality =
      MeasureQuality({{0, 10}, {1, 1}, {2, 3}, {3, 4}}, schedule, 4);

  ASSERT_TRUE(quality.ok()) << quality.status();
  EXPECT_EQ(quality->total_gpus, 4);
  const MicrobatchLoad& first = quality->microbatches[0];
  EXPECT_EQ(first.width(), 4);
  EXPECT_EQ(RankWork(first), (std::vector<double>{Work(10, 3), Work(10, 3), Work(10, 3),
                                                  Work(1, 1) + Work(3, 1)}));
  EXPECT_EQ(RankTokens(first)[0], TokensPerRank(10, 3));
  EXPECT_EQ(first.max_work, Work(10, 3));
  EXPECT_EQ(first.min_work, Work(1, 1) + Work(3, 1));
  EXPECT_EQ(RankWork(quality->microbatches[1]), (std::vector<double>(4, Work(4, 4))));
  EXPECT_EQ(quality->critical_path_work, Work(10, 3) + Work(4, 4));
  EXPECT_EQ(quality->max_rank_work, Work(10, 3));
  EXPECT_EQ(quality->microbatch_lower_bound, 2);  // ceil(18 / (4 * 4))
}

// The per-rank form and its compact form measure the same, bit for bit.
TEST(MeasureQualityTest, PerRankScheduleMeasuresAsItsCompactForm) {
  const std::vector<Sample> samples = {{0, 10}, {1, 1}, {2, 3}};
  const Schedule schedule{.microbatches = {Ranks({{0}, {0}, {0}, {1, 2}})}};

  const ScheduleQuality per_rank = MeasureQuality(samples, schedule, 4).value();
  const ScheduleQuality compact =
      MeasureQuality(samples, CompactFromRanks(schedule), 4).value();

  EXPECT_EQ(per_rank.balance_efficiency, compact.balance_efficiency);
  ASSERT_EQ(per_rank.microbatches[0].groups.size(), 2u);
  EXPECT_EQ(per_rank.microbatches[0].groups[0].size, 3);
  EXPECT_EQ(RankWork(per_rank.microbatches[0]), RankWork(compact.microbatches[0]));
}

TEST(MeasureQualityTest, SumOverRanksAddsRankByRank) {
  MicrobatchLoad load;
  load.groups.resize(2);
  load.groups[0].first_rank = 0;
  load.groups[0].size = 3;
  load.groups[0].work_per_rank = 0.1;
  load.groups[1].first_rank = 3;
  load.groups[1].size = 1;
  load.groups[1].work_per_rank = 0.2;
  EXPECT_EQ(load.width(), 4);
  EXPECT_EQ(SumOverRanks(load, &CpGroupLoad::work_per_rank), ((0.1 + 0.1) + 0.1) + 0.2);
  EXPECT_EQ(MicrobatchLoad{}.width(), 0);
  EXPECT_TRUE(RankWork(MicrobatchLoad{}).empty());
}

TEST(MeasureQualityTest, UnknownIdNamesEveryRankOfItsGroup) {
  const Schedule schedule{.microbatches = {Ranks({{0}, {9}, {9}})}};

  const absl::Status status = MeasureQuality({{0, 1}}, schedule, 4).status();

  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(), "microbatch 0 ranks 1-2 hold sample id 9"))
      << status.message();
}

TEST(MeasureQualityTest, CompactGroupsThatDoNotTileAreInvalidArgument) {
  const CompactSchedule gap{.microbatches = {CompactMicrobatch{
      .groups = {{.first_rank = 0, .size = 1, .ids = {0}},
                 {.first_rank = 2, .size = 1, .ids = {1}}}}}};

  EXPECT_EQ(MeasureQuality({{0, 1}, {1, 1}}, gap, 4).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(MeasureQualityTest, CompactMicrobatchesOfDifferentWidthsAreInvalidArgument) {
  const CompactSchedule schedule{.microbatches = {
      CompactMicrobatch{.groups = {{.first_rank = 0, .size = 2, .ids = {0}}}},
      CompactMicrobatch{.groups = {{.first_rank = 0, .size = 1, .ids = {1}}}}}};

  const absl::Status status = MeasureQuality({{0, 1}, {1, 1}}, schedule, 4).status();

  EXPECT_TRUE(absl::StrContains(status.message(), "microbatch 1 has 1 ranks but microbatch 0 has 2"))
      << status.message();
}

}  // namespace
}  // namespace dcpsched::quality_test
