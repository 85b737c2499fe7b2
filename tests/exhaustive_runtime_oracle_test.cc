// Tests of the exhaustive runtime oracle (oracle/exhaustive_runtime_oracle.h):
// its optimum against the barrier model's exhaustive optimum where the model
// says how they relate, its schedule re-stepped by the reference runtime
// step, its search space on instances small enough to list, and its
// refusals.

#include "oracle/exhaustive_runtime_oracle.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/cost_profile.h"
#include "core/types.h"
#include "gtest/gtest.h"
#include "io/cost_profile_file.h"
#include "oracle/exhaustive_time_oracle.h"
#include "oracle/reference_gpu_time.h"
#include "oracle/reference_runtime_step.h"
#include "properties/profile_generators.h"
#include "tests/test_options.h"

namespace dcpsched::oracle::exhaustive_runtime_oracle_test {
namespace {

// Bounds compared across the two oracles hold in exact arithmetic; the
// steps are sums that round differently.
constexpr double kRelative = 1e-12;

// The shipped 8B profile as the oracles' tables.
ReferenceCostTables Tables() {
  const absl::StatusOr<CostProfile> profile = LoadCostProfile("h200-llama3-8b");
  EXPECT_TRUE(profile.ok()) << profile.status();
  return profile.ok() ? properties::ToReference(*profile) : ReferenceCostTables{};
}

struct TinyProblem {
  std::string name;
  std::vector<Sample> samples;
  DynamicCpOptions options;
};

DynamicCpOptions WithVpp(DynamicCpOptions options, std::int64_t vpp_group) {
  options.vpp_group = vpp_group;
  return options;
}

DynamicCpOptions WithMaxNumSeqs(DynamicCpOptions options, std::int64_t max_num_seqs) {
  options.max_num_seqs = max_num_seqs;
  return options;
}

// Tiny problems of mixed lengths touching every rule: CP sizes 1 to G, a
// token budget that forces splits, max_num_seqs, vpp_group, min_cp_size, a
// G that is no power of two.
std::vector<TinyProblem> TinyProblems() {
  const std::vector<Sample> four = {{10, 3000}, {11, 700}, {12, 1800}, {13, 5000}};
  return {
      {"three on two ranks", {{1, 2500}, {2, 600}, {3, 1400}}, Options(2, 4096)},
      {"four on four ranks", four, Options(4, 4096)},
      {"four on four ranks, one each, vpp 2", four,
       WithVpp(WithMaxNumSeqs(Options(4, 4096), 1), 2)},
      {"four on four ranks, min cp 2", four, Options(4, 4096, 2)},
      {"four on two ranks, tight budget", {{1, 2000}, {2, 1000}, {3, 1500}, {4, 900}},
       Options(2, 2048)},
      {"three on three ranks", {{1, 2000}, {2, 3000}, {3, 700}}, Options(3, 4096)},
  };
}

// Runtimes of every kind the oracle takes.
std::vector<ReferenceRuntime> Runtimes() {
  return {
      ReferenceRuntime{},
      ReferenceRuntime{.layers_per_stage = 2, .forward_share = 0.25},
      ReferenceRuntime{.pipeline_stages = 2},
      ReferenceRuntime{.pipeline_stages = 4},
      ReferenceRuntime{.pipeline_stages = 2, .virtual_stages = 2},
      ReferenceRuntime{.pipeline_stages = 2, .expert_parallel_size = 2},
      ReferenceRuntime{.legacy = true},
  };
}

absl::StatusOr<RuntimeOptimum> Optimum(const TinyProblem& problem,
                                       const ReferenceCostTables& tables,
                                       const ReferenceRuntime& runtime) {
  return ExhaustiveFastestRuntimeStep(problem.samples, problem.options, tables, runtime);
}

// Rank r's one-layer seconds in `microbatch`, each the slowest rank of the
// microbatch with every rank but those of r's CP group emptied (an empty
// rank costs 0).
std::vector<double> RankSecondsByMasking(const std::vector<Sample>& samples,
                                         const Microbatch& microbatch,
                                         const ReferenceCostTables& tables) {
  std::vector<double> seconds;
  for (const std::vector<SampleId>& ids : microbatch.rank_ids) {
    Microbatch masked = microbatch;
    for (std::vector<SampleId>& other : masked.rank_ids) {
      if (other != ids) other.clear();
    }
    const absl::StatusOr<std::vector<double>> slowest =
        ReferenceMicrobatchSeconds(samples, Schedule{{masked}}, tables);
    EXPECT_TRUE(slowest.ok()) << slowest.status();
    seconds.push_back(slowest.ok() ? slowest->front() : 0.0);
  }
  return seconds;
}

// `schedule`'s step under `runtime`, each rank timed by RankSecondsByMasking.
double StepOf(const std::vector<Sample>& samples, const Schedule& schedule,
              const ReferenceCostTables& tables, const ReferenceRuntime& runtime) {
  std::vector<std::vector<double>> rank_seconds;
  for (const Microbatch& microbatch : schedule.microbatches) {
    rank_seconds.push_back(RankSecondsByMasking(samples, microbatch, tables));
  }
  const absl::StatusOr<ReferenceStep> step = ReferenceRuntimeStep(schedule, rank_seconds, runtime);
  EXPECT_TRUE(step.ok()) << step.status();
  return step.ok() ? step->step_seconds : -1.0;
}

// The barrier model's optimum of `problem`.
double BarrierOptimum(const TinyProblem& problem, const ReferenceCostTables& tables) {
  const absl::StatusOr<TimeOptimum> optimum =
      ExhaustiveFastestSchedule(problem.samples, problem.options, tables);
  EXPECT_TRUE(optimum.ok()) << problem.name << ": " << optimum.status();
  return optimum.ok() ? optimum->step_seconds : -1.0;
}

// At L = 1 the legacy path's step is the barrier model's, which depends
// only on each microbatch's slowest rank, not on the order: the two oracles
// search the same schedules by the same times and find the same optimum
// (summed in another order, so to 1e-12).
TEST(ExhaustiveRuntimeOracleTest, LegacyOptimumIsTheBarrierOptimum) {
  const ReferenceCostTables tables = Tables();
  for (const TinyProblem& problem : TinyProblems()) {
    const absl::StatusOr<RuntimeOptimum> optimum =
        Optimum(problem, tables, ReferenceRuntime{.legacy = true});
    ASSERT_TRUE(optimum.ok()) << problem.name << ": " << optimum.status();
    const double barrier = BarrierOptimum(problem, tables);
    EXPECT_NEAR(optimum->step_seconds, barrier, barrier * kRelative) << problem.name;
  }
}

// Without pipelining the dev step of any schedule is at most its barrier
// step (docs/runtime_step.md), and every barrier schedule is among the
// runtime oracle's: its optimum is at most the barrier optimum.
TEST(ExhaustiveRuntimeOracleTest, DevOptimumWithoutPipeliningIsAtMostTheBarrierOptimum) {
  const ReferenceCostTables tables = Tables();
  for (const TinyProblem& problem : TinyProblems()) {
    const absl::StatusOr<RuntimeOptimum> optimum = Optimum(problem, tables, ReferenceRuntime{});
    ASSERT_TRUE(optimum.ok()) << problem.name << ": " << optimum.status();
    EXPECT_LE(optimum->step_seconds, BarrierOptimum(problem, tables) * (1.0 + kRelative))
        << problem.name;
  }
}

// The schedule returned keeps the rules, and stepped again (with each
// rank's time found another way) takes exactly the optimum.
TEST(ExhaustiveRuntimeOracleTest, ReturnedScheduleKeepsTheRulesAndStepsToTheOptimum) {
  const ReferenceCostTables tables = Tables();
  for (const TinyProblem& problem : TinyProblems()) {
    for (const ReferenceRuntime& runtime : Runtimes()) {
      if (problem.options.total_gpus % 2 != 0 && runtime.expert_parallel_size == 2) continue;
      const absl::StatusOr<RuntimeOptimum> optimum = Optimum(problem, tables, runtime);
      if (!optimum.ok() && optimum.status().code() == absl::StatusCode::kNotFound) continue;
      ASSERT_TRUE(optimum.ok()) << problem.name << ": " << optimum.status();
      const Schedule& schedule = optimum->schedule;
      std::map<SampleId, int> microbatches_holding;
      for (const Microbatch& microbatch : schedule.microbatches) {
        ASSERT_EQ(microbatch.rank_ids.size(),
                  static_cast<std::size_t>(problem.options.total_gpus));
        std::map<SampleId, bool> held;
        for (const std::vector<SampleId>& ids : microbatch.rank_ids) {
          EXPECT_FALSE(ids.empty()) << problem.name;
          for (const SampleId id : ids) held[id] = true;
        }
        for (const auto& [id, unused] : held) ++microbatches_holding[id];
      }
      EXPECT_EQ(microbatches_holding.size(), problem.samples.size()) << problem.name;
      for (const auto& [id, count] : microbatches_holding) EXPECT_EQ(count, 1) << problem.name;
      const std::int64_t vpp = problem.options.vpp_group.value_or(1);
      EXPECT_EQ(static_cast<std::int64_t>(schedule.microbatches.size()) % vpp, 0);
      EXPECT_EQ(StepOf(problem.samples, schedule, tables, runtime), optimum->step_seconds)
          << problem.name << " at P = " << runtime.pipeline_stages;
      EXPECT_LE(optimum->schedules_stepped, optimum->schedules_enumerated);
    }
  }
}

// The barrier oracle's fastest schedule is one of the runtime oracle's
// wherever the runtime accepts its microbatch count: stepped by the runtime,
// it is never faster than the runtime's optimum.
TEST(ExhaustiveRuntimeOracleTest, NoScheduleOfTheBarrierOracleBeatsTheOptimum) {
  const ReferenceCostTables tables = Tables();
  for (const TinyProblem& problem : TinyProblems()) {
    const absl::StatusOr<TimeOptimum> barrier =
        ExhaustiveFastestSchedule(problem.samples, problem.options, tables);
    ASSERT_TRUE(barrier.ok()) << problem.name << ": " << barrier.status();
    const auto count = static_cast<std::int64_t>(barrier->schedule.microbatches.size());
    for (const ReferenceRuntime& runtime : Runtimes()) {
      if (problem.options.total_gpus % 2 != 0 && runtime.expert_parallel_size == 2) continue;
      if (!ReferenceStageOrder(runtime, count, 0).ok()) continue;
      const absl::StatusOr<RuntimeOptimum> optimum = Optimum(problem, tables, runtime);
      ASSERT_TRUE(optimum.ok()) << problem.name << ": " << optimum.status();
      EXPECT_LE(optimum->step_seconds,
                StepOf(problem.samples, barrier->schedule, tables, runtime))
          << problem.name << " at P = " << runtime.pipeline_stages;
    }
  }
}

// The last pipeline rank runs F0 B0 F1 B1 ... as a rank without pipelining
// runs its whole ops, on the same synchronised sets, each forward and
// backward taking together what the whole op takes, and waits besides for
// its inputs: every schedule's step at P > 1 (V = 1, same L and f) is at
// least its step at P = 1, so the optimum is too.
TEST(ExhaustiveRuntimeOracleTest, PipelinedOptimumIsAtLeastTheUnpipelinedOptimum) {
  const ReferenceCostTables tables = Tables();
  for (const TinyProblem& problem : TinyProblems()) {
    const absl::StatusOr<RuntimeOptimum> flat = Optimum(problem, tables, ReferenceRuntime{});
    ASSERT_TRUE(flat.ok()) << problem.name << ": " << flat.status();
    for (const std::int64_t stages : {2, 4}) {
      const absl::StatusOr<RuntimeOptimum> piped =
          Optimum(problem, tables, ReferenceRuntime{.pipeline_stages = stages});
      ASSERT_TRUE(piped.ok()) << problem.name << ": " << piped.status();
      EXPECT_GE(piped->step_seconds, flat->step_seconds * (1.0 - kRelative))
          << problem.name << " at P = " << stages;
    }
  }
}

// Two samples on two ranks, room for both on one rank: the whole search
// space is one microbatch with both on both ranks or one on each rank
// (either way round), or two microbatches of one sample on both ranks, in
// either order. The optimum is the least of their steps, at every runtime.
TEST(ExhaustiveRuntimeOracleTest, TwoSamplesOnTwoRanksTriesEveryScheduleOrderAndPlacement) {
  const ReferenceCostTables tables = Tables();
  const TinyProblem problem{"two on two ranks", {{1, 3000}, {2, 1000}}, Options(2, 8192)};
  const std::vector<Schedule> every = {
      {{Microbatch{{{1, 2}, {1, 2}}}}},
      {{Microbatch{{{1}, {2}}}}},
      {{Microbatch{{{2}, {1}}}}},
      {{Microbatch{{{1}, {1}}}, Microbatch{{{2}, {2}}}}},
      {{Microbatch{{{2}, {2}}}, Microbatch{{{1}, {1}}}}},
  };
  for (const ReferenceRuntime& runtime : Runtimes()) {
    const absl::StatusOr<RuntimeOptimum> optimum = Optimum(problem, tables, runtime);
    if (runtime.virtual_stages > 1) {
      // N = P = 2: one microbatch is refused (N > M), so only the two
      // orders of two microbatches remain.
      ASSERT_TRUE(optimum.ok()) << optimum.status();
      EXPECT_EQ(optimum->schedules_enumerated, 2);
      EXPECT_EQ(optimum->step_seconds,
                std::min(StepOf(problem.samples, every[3], tables, runtime),
                         StepOf(problem.samples, every[4], tables, runtime)));
      continue;
    }
    ASSERT_TRUE(optimum.ok()) << optimum.status();
    EXPECT_EQ(optimum->schedules_enumerated, 5);
    double least = StepOf(problem.samples, every[0], tables, runtime);
    for (const Schedule& schedule : every) {
      least = std::min(least, StepOf(problem.samples, schedule, tables, runtime));
    }
    EXPECT_EQ(optimum->step_seconds, least) << "P = " << runtime.pipeline_stages;
  }
}

// Four samples on four ranks, no limit but the runs: a part of k samples has
// 1, 3, 19 or 111 placements (k = 1..4: each sample on one tile of a tiling
// of the ranks by aligned runs, every tile used); with every order, 111 +
// (4 * 19 + 3 * 9) * 2 + 6 * 3 * 6 + 24 = 449 schedules. The bound skips
// some, never the optimum (the P = 1 relation above holds with it).
TEST(ExhaustiveRuntimeOracleTest, FourSamplesOnFourRanksCoverTheWholeSearchSpace) {
  const ReferenceCostTables tables = Tables();
  const TinyProblem problem{
      "four on four ranks", {{10, 3000}, {11, 700}, {12, 1800}, {13, 2500}}, Options(4, 8192)};
  for (const ReferenceRuntime& runtime : Runtimes()) {
    if (runtime.virtual_stages > 1) continue;  // refuses odd counts
    const absl::StatusOr<RuntimeOptimum> optimum = Optimum(problem, tables, runtime);
    ASSERT_TRUE(optimum.ok()) << optimum.status();
    EXPECT_EQ(optimum->schedules_enumerated, 449);
  }
}

// Counts the runtime refuses are left out: interleaving with N = P = 2
// refuses one microbatch (N > M) and three (a last group of 1 < P), so three
// samples are scheduled in two microbatches.
TEST(ExhaustiveRuntimeOracleTest, SkipsMicrobatchCountsTheRuntimeRefuses) {
  const ReferenceCostTables tables = Tables();
  const TinyProblem problem{"three on two ranks", {{1, 2500}, {2, 600}, {3, 1400}},
                            Options(2, 4096)};
  const absl::StatusOr<RuntimeOptimum> optimum =
      Optimum(problem, tables, ReferenceRuntime{.pipeline_stages = 2, .virtual_stages = 2});
  ASSERT_TRUE(optimum.ok()) << optimum.status();
  EXPECT_EQ(optimum->schedule.microbatches.size(), 2u);
}

TEST(ExhaustiveRuntimeOracleTest, EmptyBatchTakesNoTime) {
  const ReferenceCostTables tables = Tables();
  const absl::StatusOr<RuntimeOptimum> optimum =
      ExhaustiveFastestRuntimeStep({}, Options(2, 4096), tables, ReferenceRuntime{});
  ASSERT_TRUE(optimum.ok()) << optimum.status();
  EXPECT_EQ(optimum->step_seconds, 0.0);
  EXPECT_TRUE(optimum->schedule.microbatches.empty());
}

TEST(ExhaustiveRuntimeOracleTest, RefusesInstancesAboveItsLimits) {
  const ReferenceCostTables tables = Tables();
  const std::vector<Sample> five = {{1, 100}, {2, 100}, {3, 100}, {4, 100}, {5, 100}};
  EXPECT_EQ(ExhaustiveFastestRuntimeStep(five, Options(4, 4096), tables, ReferenceRuntime{})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ExhaustiveFastestRuntimeStep({{1, 100}}, Options(8, 4096), tables,
                                         ReferenceRuntime{})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ExhaustiveFastestRuntimeStep({{1, 100}}, Options(2, 4096), tables,
                                         ReferenceRuntime{.pipeline_stages = 8})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ExhaustiveFastestRuntimeStep({{1, 100}}, Options(2, 4096), tables,
                                         ReferenceRuntime{.pipeline_stages = 2,
                                                          .virtual_stages = 3})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  // Input the specification refuses: a sample longer than G ranks hold.
  EXPECT_EQ(ExhaustiveFastestRuntimeStep({{1, 9000}}, Options(2, 4096), tables,
                                         ReferenceRuntime{})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ExhaustiveRuntimeOracleTest, RefusesRuntimesTheStepRefuses) {
  const ReferenceCostTables tables = Tables();
  const std::vector<Sample> samples = {{1, 1000}, {2, 2000}};
  const std::vector<ReferenceRuntime> refused = {
      ReferenceRuntime{.pipeline_stages = 0},
      ReferenceRuntime{.virtual_stages = 0},
      ReferenceRuntime{.virtual_stages = 2},  // V > 1 needs P > 1
      ReferenceRuntime{.layers_per_stage = 0},
      ReferenceRuntime{.forward_share = 1.0},
      ReferenceRuntime{.pipeline_stages = 2, .legacy = true},
      ReferenceRuntime{.expert_parallel_size = -1},
      ReferenceRuntime{.expert_parallel_size = 3},  // does not divide G = 4
  };
  for (const ReferenceRuntime& runtime : refused) {
    const absl::StatusOr<RuntimeOptimum> optimum =
        ExhaustiveFastestRuntimeStep(samples, Options(4, 4096), tables, runtime);
    EXPECT_EQ(optimum.status().code(), absl::StatusCode::kInvalidArgument)
        << optimum.status();
  }
}

TEST(ExhaustiveRuntimeOracleTest, NotFoundWhenNoCountIsAccepted) {
  const ReferenceCostTables tables = Tables();
  const std::vector<Sample> samples = {{1, 1000}, {2, 2000}};
  // vpp_group 3 needs three microbatches; two samples make at most two.
  EXPECT_EQ(ExhaustiveFastestRuntimeStep(samples, WithVpp(Options(2, 4096), 3), tables,
                                         ReferenceRuntime{})
                .status()
                .code(),
            absl::StatusCode::kNotFound);
  // Interleaving with N = 3 refuses every count below 3.
  const absl::StatusOr<RuntimeOptimum> refused = ExhaustiveFastestRuntimeStep(
      samples, Options(2, 4096), tables,
      ReferenceRuntime{.pipeline_stages = 2, .virtual_stages = 2, .microbatch_group_size = 3});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kNotFound) << refused.status();
  // On one rank holding one sample at a time, three samples make exactly
  // three microbatches, which vpp_group 2 refuses.
  EXPECT_EQ(ExhaustiveFastestRuntimeStep({{1, 1000}, {2, 2000}, {3, 500}},
                                         WithVpp(WithMaxNumSeqs(Options(1, 4096), 1), 2), tables,
                                         ReferenceRuntime{})
                .status()
                .code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace dcpsched::oracle::exhaustive_runtime_oracle_test
