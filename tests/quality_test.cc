#include "core/quality.h"

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "core/types.h"
#include "core/validate.h"
#include "gtest/gtest.h"

namespace dcpsched {
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
  EXPECT_EQ(quality->microbatches[0].rank_work, (std::vector<double>{16, 16}));
  EXPECT_EQ(quality->microbatches[0].rank_tokens, (std::vector<double>{4, 4}));
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
  EXPECT_EQ(load.rank_work, (std::vector<double>{32, 32, 4, 4}));
  EXPECT_EQ(load.rank_tokens, (std::vector<double>{4, 4, 2, 2}));
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
  EXPECT_EQ(quality->microbatches[0].rank_work, (std::vector<double>{32.0, 32.0}));
  EXPECT_EQ(quality->microbatches[1].rank_work, (std::vector<double>{32.0, 32.0}));
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
  EXPECT_EQ(quality->microbatches[0].rank_tokens, (std::vector<double>{7, 3, 5}));
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

}  // namespace
}  // namespace dcpsched
