// Tests of the exhaustive oracle: hand-checked optima of tiny instances, its
// limits, and the bound it gives the packing-aware step (the step, when it
// places every sample, can never beat the optimum over all placements).

#include "oracle/exhaustive_oracle.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "core/types.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_options.h"
#include "core/packing_aware.h"
#include "oracle/reference_oracle.h"

namespace dcpsched::oracle::exhaustive_oracle_test {
namespace {

// Two equal samples on two ranks: each alone gives 100 per rank; both split
// over both ranks gives 50 + 50 = 100 too (a tie), one alone and one split
// gives 150. Placements: each sample takes rank 0, rank 1 or both (3 x 3 =
// 9); the two that leave a rank empty (both on rank 0, both on rank 1) are
// excluded: 7.
TEST(ExhaustiveOracleTest, TwoEqualSamplesOnTwoRanks) {
  const absl::StatusOr<ExhaustiveOptimum> best =
      ExhaustiveBestPlacement({{1, 10}, {2, 10}}, Options(2, 100));
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_EQ(best->scaled_max_work, 100 * kWorkScale);
  EXPECT_EQ(best->max_work, 100.0);
  EXPECT_EQ(best->placements_enumerated, 7);
  // Enumeration order: sample 0's choices (rank 0, rank 1, ranks 0-1) are
  // the slowest digit; the first placement of work 100 is 1 on rank 0, 2 on
  // rank 1.
  EXPECT_EQ(best->microbatch.rank_ids, (RankLists{{1}, {2}}));
}

// With mslpr = 10 a sample of 10 fills a rank, so the two samples cannot
// share one: only "one on each rank" (two ways) and "both split over both
// ranks" (5 + 5 = 10 tokens per rank) remain: 3. With an 11, which needs both
// ranks (5.5 tokens each), the 10 fits nowhere (15.5 or 10.5 > 10): none.
TEST(ExhaustiveOracleTest, TokenBudgetLimitsPlacements) {
  const absl::StatusOr<ExhaustiveOptimum> best =
      ExhaustiveBestPlacement({{1, 10}, {2, 10}}, Options(2, 10));
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_EQ(best->placements_enumerated, 3);
  EXPECT_EQ(best->scaled_max_work, 100 * kWorkScale);
  EXPECT_EQ(
      ExhaustiveBestPlacement({{1, 10}, {2, 11}}, Options(2, 10)).status().code(),
      absl::StatusCode::kNotFound);
}

// One long and two short samples on two ranks: the long one alone on a rank
// costs 100 there; split over both ranks it costs 50 per rank, and the two
// shorts (9 each) spread one per rank: 59 < 100.
TEST(ExhaustiveOracleTest, SplittingALongSampleBeatsKeepingItOnOneRank) {
  const absl::StatusOr<ExhaustiveOptimum> best =
      ExhaustiveBestPlacement({{1, 10}, {2, 3}, {3, 3}}, Options(2, 100));
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_EQ(best->scaled_max_work, 59 * kWorkScale);
  EXPECT_EQ(best->placement[0].cp_size, 2);
}

// G = 3: a CP size of 3 (= G) is allowed, and work/3 stays exact.
TEST(ExhaustiveOracleTest, FullGroupOfThree) {
  const absl::StatusOr<ExhaustiveOptimum> best =
      ExhaustiveBestPlacement({{1, 3}}, Options(3, 100));
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_EQ(best->placements_enumerated, 1);  // one sample must cover 3 ranks
  EXPECT_EQ(best->scaled_max_work, 3 * 3 * kWorkScale / 3);
  EXPECT_EQ(best->max_work, 3.0);
  EXPECT_EQ(best->microbatch.rank_ids, (RankLists{{1}, {1}, {1}}));
}

// min_cp_size raises every CP size.
TEST(ExhaustiveOracleTest, MinCpSizeIsRespected) {
  const absl::StatusOr<ExhaustiveOptimum> best =
      ExhaustiveBestPlacement({{1, 4}, {2, 4}}, Options(4, 100, 2));
  ASSERT_TRUE(best.ok()) << best.status();
  for (const SamplePlacement& p : best->placement) EXPECT_GE(p.cp_size, 2);
  EXPECT_EQ(best->scaled_max_work, 8 * kWorkScale);  // each on its own pair
}

TEST(ExhaustiveOracleTest, Limits) {
  const std::vector<Sample> seven = {{0, 1}, {1, 1}, {2, 1}, {3, 1},
                                     {4, 1}, {5, 1}, {6, 1}};
  EXPECT_EQ(ExhaustiveBestPlacement(seven, Options(4, 100)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ExhaustiveBestPlacement({{0, 1}}, Options(5, 100)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ExhaustiveBestPlacement({{0, 9}}, Options(2, 4)).status().code(),
            absl::StatusCode::kInvalidArgument);  // needs 4 > G ranks
  EXPECT_EQ(
      ExhaustiveBestPlacement({{0, 1}, {0, 2}}, Options(2, 4)).status().code(),
      absl::StatusCode::kInvalidArgument);  // duplicate id
  EXPECT_EQ(ExhaustiveBestPlacement({}, Options(2, 4)).status().code(),
            absl::StatusCode::kNotFound);
  // One sample of cp_min 1 cannot cover 2 ranks unless split: found.
  EXPECT_TRUE(ExhaustiveBestPlacement({{0, 1}}, Options(2, 4)).ok());
  // The largest instance enumerates quickly.
  const std::vector<Sample> six = {{0, 1}, {1, 2}, {2, 3},
                                   {3, 4}, {4, 5}, {5, 6}};
  const absl::StatusOr<ExhaustiveOptimum> largest =
      ExhaustiveBestPlacement(six, Options(4, 1000));
  ASSERT_TRUE(largest.ok()) << largest.status();
  EXPECT_GT(largest->placements_enumerated, 0);
}

// The cap only removes placements: a cap of at least the sample count
// removes none, a smaller one leaves a subset whose optimum is no better,
// and every rank of the optimum found keeps the cap.
TEST(ExhaustiveOracleTest, SequenceCapOnlyRemovesPlacements) {
  std::mt19937_64 random(20261202);
  int capped_compared = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const std::int64_t gpus = 1 + static_cast<std::int64_t>(random() % 4);
    const std::int64_t mslpr = 1 + static_cast<std::int64_t>(random() % 24);
    const int count = 1 + static_cast<int>(random() % 5);
    std::vector<Sample> samples;
    for (int i = 0; i < count; ++i) {
      samples.push_back({i, 1 + static_cast<std::int64_t>(random() % mslpr)});
    }
    const DynamicCpOptions uncapped = Options(gpus, mslpr);
    const absl::StatusOr<ExhaustiveOptimum> free_best =
        ExhaustiveBestPlacement(samples, uncapped);
    DynamicCpOptions loose = uncapped;
    loose.max_num_seqs = count + static_cast<std::int64_t>(random() % 3);
    const absl::StatusOr<ExhaustiveOptimum> loose_best =
        ExhaustiveBestPlacement(samples, loose);
    ASSERT_EQ(loose_best.status().code(), free_best.status().code());
    if (!free_best.ok()) continue;
    EXPECT_EQ(loose_best->placements_enumerated, free_best->placements_enumerated);
    EXPECT_EQ(loose_best->scaled_max_work, free_best->scaled_max_work);

    DynamicCpOptions capped = uncapped;
    capped.max_num_seqs = 1 + static_cast<std::int64_t>(random() % 3);
    const absl::StatusOr<ExhaustiveOptimum> capped_best =
        ExhaustiveBestPlacement(samples, capped);
    if (!capped_best.ok()) {
      EXPECT_EQ(capped_best.status().code(), absl::StatusCode::kNotFound);
      continue;
    }
    EXPECT_LE(capped_best->placements_enumerated, free_best->placements_enumerated);
    EXPECT_GE(capped_best->scaled_max_work, free_best->scaled_max_work);
    for (const std::vector<SampleId>& ids : capped_best->microbatch.rank_ids) {
      EXPECT_LE(static_cast<std::int64_t>(ids.size()), *capped.max_num_seqs);
    }
    ++capped_compared;
  }
  EXPECT_GT(capped_compared, 50);
  DynamicCpOptions zero = Options(2, 4);
  zero.max_num_seqs = 0;
  EXPECT_EQ(ExhaustiveBestPlacement({{0, 1}}, zero).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ExhaustiveOracleTest, ScaledMaxRankWork) {
  const Microbatch microbatch{{{1, 2}, {1}}};
  const absl::StatusOr<std::int64_t> work =
      ScaledMaxRankWork(microbatch, {{1, 10}, {2, 3}});
  ASSERT_TRUE(work.ok()) << work.status();
  EXPECT_EQ(*work, (50 + 9) * kWorkScale);
  EXPECT_EQ(ScaledMaxRankWork(microbatch, {{1, 10}}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// A random tiny instance for the exhaustive oracle: G of 1..4, mslpr of
// 1..24, min_cp_size sometimes above 1, and one to six samples no longer than
// the largest power of two <= G holds (so cp_min(len) <= G).
struct TinyInstance {
  std::vector<Sample> samples;
  DynamicCpOptions options;
};

TinyInstance RandomTinyInstance(std::mt19937_64& random) {
  const std::int64_t gpus = 1 + static_cast<std::int64_t>(random() % 4);
  const std::int64_t mslpr = 1 + static_cast<std::int64_t>(random() % 24);
  std::int64_t min_cp = 1;
  while (min_cp * 2 <= gpus && random() % 3 == 0) min_cp *= 2;
  std::int64_t widest = 1;
  while (widest * 2 <= gpus) widest *= 2;
  const auto longest = static_cast<std::uint64_t>(mslpr * widest);
  const int count = 1 + static_cast<int>(random() % 6);
  TinyInstance instance{{}, Options(gpus, mslpr, min_cp)};
  for (int i = 0; i < count; ++i) {
    instance.samples.push_back({100 + i, 1 + static_cast<std::int64_t>(random() % longest)});
  }
  return instance;
}

// The step is one of the enumerated placements whenever it places every
// sample, so its max rank work is never below the optimum; and its rank work
// (a double) is the exact work rounded.
TEST(ExhaustiveOracleTest, StepNeverBeatsTheOptimum) {
  std::mt19937_64 random(20240611);
  int compared = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const TinyInstance instance = RandomTinyInstance(random);
    const std::vector<Sample>& samples = instance.samples;
    const DynamicCpOptions& options = instance.options;
    const std::int64_t gpus = options.total_gpus;
    const absl::StatusOr<PackedMicrobatch> step =
        ReferencePackingAwareStep(samples, options);
    if (!step.ok()) {
      // Only upstream's expand-once defect (G = 3) may stop the step here.
      EXPECT_EQ(step.status().code(), absl::StatusCode::kFailedPrecondition);
      EXPECT_EQ(gpus, 3);
      continue;
    }
    if (!step->leftovers.empty()) continue;
    const absl::StatusOr<ExhaustiveOptimum> best =
        ExhaustiveBestPlacement(samples, options);
    ASSERT_TRUE(best.ok()) << best.status() << " trial " << trial;
    const absl::StatusOr<std::int64_t> step_work =
        ScaledMaxRankWork(step->microbatch, samples);
    ASSERT_TRUE(step_work.ok()) << step_work.status();
    EXPECT_LE(best->scaled_max_work, *step_work) << "trial " << trial;
    const double step_max =
        *std::max_element(step->rank_work.begin(), step->rank_work.end());
    const double exact = static_cast<double>(*step_work) / kWorkScale;
    EXPECT_NEAR(step_max, exact, 1e-9 * exact) << "trial " << trial;
    ++compared;
  }
  EXPECT_GT(compared, 400);
}

// The core's step under max_num_seqs: its microbatch is a placement of the
// samples it placed that keeps the cap on every rank, so it never beats the
// optimum over those samples under that cap.
TEST(ExhaustiveOracleTest, CappedCoreStepKeepsTheCapAndNeverBeatsTheOptimum) {
  std::mt19937_64 random(20261203);
  int compared = 0;
  int with_leftovers = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    TinyInstance instance = RandomTinyInstance(random);
    const std::vector<Sample>& samples = instance.samples;
    DynamicCpOptions& options = instance.options;
    const std::int64_t gpus = options.total_gpus;
    const auto count = static_cast<std::int64_t>(samples.size());
    options.max_num_seqs = random() % 4 == 0 ? count : 1 + static_cast<std::int64_t>(random() % 3);
    const absl::StatusOr<PackedMicrobatch> step = PackingAwareStep(samples, options);
    if (!step.ok()) {
      // Only upstream's expand-once defect (G = 3) may stop the step here.
      EXPECT_EQ(step.status().code(), absl::StatusCode::kFailedPrecondition);
      EXPECT_EQ(gpus, 3);
      continue;
    }
    for (const std::vector<SampleId>& ids : step->microbatch.rank_ids) {
      EXPECT_LE(static_cast<std::int64_t>(ids.size()), *options.max_num_seqs)
          << "trial " << trial;
    }
    std::vector<Sample> placed;
    for (const Sample& sample : samples) {
      if (std::find(step->leftovers.begin(), step->leftovers.end(), sample) ==
          step->leftovers.end()) {
        placed.push_back(sample);
      }
    }
    if (!step->leftovers.empty()) ++with_leftovers;
    const absl::StatusOr<ExhaustiveOptimum> best = ExhaustiveBestPlacement(placed, options);
    ASSERT_TRUE(best.ok()) << best.status() << " trial " << trial;
    const absl::StatusOr<std::int64_t> step_work = ScaledMaxRankWork(step->microbatch, placed);
    ASSERT_TRUE(step_work.ok()) << step_work.status();
    EXPECT_LE(best->scaled_max_work, *step_work) << "trial " << trial;
    ++compared;
  }
  EXPECT_GT(compared, 1000);
  EXPECT_GT(with_leftovers, 100);
}

}  // namespace
}  // namespace dcpsched::oracle::exhaustive_oracle_test
