// The reference runtime step (oracle/reference_runtime_step.h) on instances
// small enough to work out by hand from docs/runtime_step.md: the op orders
// of Megatron-LM's three schedules, the step of the dev runtime (no barrier
// between microbatches) and of the legacy one, expert-parallel lockstep, and
// every refusal. The core's model (core/runtime_step.h) is compared with it
// elsewhere; these pin the yardstick itself.

#include "oracle/reference_runtime_step.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/types.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dcpsched::oracle::reference_runtime_step_test {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// A schedule of the given per-rank id lists, one entry a microbatch.
Schedule Microbatches(std::vector<std::vector<std::vector<SampleId>>> microbatches) {
  Schedule schedule;
  for (auto& ranks : microbatches) schedule.microbatches.push_back(Microbatch{std::move(ranks)});
  return schedule;
}

// An order as "F0 B0 F1 ..." (V = 1) or "F0.1" (microbatch 0, chunk 1).
std::string Spell(const std::vector<ReferenceOp>& order, bool with_chunk) {
  std::string text;
  for (const ReferenceOp& op : order) {
    if (!text.empty()) text += ' ';
    text += op.forward ? 'F' : 'B';
    text += std::to_string(op.microbatch);
    if (with_chunk) text += "." + std::to_string(op.chunk);
  }
  return text;
}

std::string OrderOf(const ReferenceRuntime& runtime, std::int64_t m, std::int64_t p,
                    bool with_chunk = false) {
  const absl::StatusOr<std::vector<ReferenceOp>> order = ReferenceStageOrder(runtime, m, p);
  if (!order.ok()) return std::string(order.status().message());
  return Spell(*order, with_chunk);
}

// Megatron-LM's signed notation: +k the forward of chunk k - 1, -k its
// backward.
std::vector<int> Signed(const std::vector<ReferenceOp>& order) {
  std::vector<int> result;
  for (const ReferenceOp& op : order) {
    const int k = static_cast<int>(op.chunk) + 1;
    result.push_back(op.forward ? k : -k);
  }
  return result;
}

ReferenceStep StepOf(const Schedule& schedule, const std::vector<std::vector<double>>& seconds,
                     const ReferenceRuntime& runtime) {
  absl::StatusOr<ReferenceStep> step = ReferenceRuntimeStep(schedule, seconds, runtime);
  EXPECT_TRUE(step.ok()) << step.status();
  return step.ok() ? *step : ReferenceStep{};
}

absl::StatusCode CodeOf(const Schedule& schedule, const std::vector<std::vector<double>>& seconds,
                        const ReferenceRuntime& runtime) {
  return ReferenceRuntimeStep(schedule, seconds, runtime).status().code();
}

// --- op orders -----------------------------------------------------------------

TEST(ReferenceRuntimeStepOrderTest, NoPipeliningRunsEachMicrobatchForwardThenBackward) {
  EXPECT_EQ(OrderOf(ReferenceRuntime{}, 3, 0), "F0 B0 F1 B1 F2 B2");
  EXPECT_EQ(OrderOf(ReferenceRuntime{}, 0, 0), "");
}

TEST(ReferenceRuntimeStepOrderTest, OneFOneBAtFourStagesAndSixMicrobatches) {
  // w = min(P - p - 1, M) warm-up forwards, then 1F1B pairs, then the last w
  // backwards.
  const ReferenceRuntime runtime{.pipeline_stages = 4};
  EXPECT_EQ(OrderOf(runtime, 6, 0), "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5");
  EXPECT_EQ(OrderOf(runtime, 6, 1), "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 B4 B5");
  EXPECT_EQ(OrderOf(runtime, 6, 2), "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 B5");
  EXPECT_EQ(OrderOf(runtime, 6, 3), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5");
}

TEST(ReferenceRuntimeStepOrderTest, OneFOneBWarmUpIsCappedByTheMicrobatchCount) {
  // P = 4, M = 2: pipeline rank 0 would warm up 3 forwards; it has 2.
  const ReferenceRuntime runtime{.pipeline_stages = 4};
  EXPECT_EQ(OrderOf(runtime, 2, 0), "F0 F1 B0 B1");
  EXPECT_EQ(OrderOf(runtime, 2, 3), "F0 B0 F1 B1");
}

TEST(ReferenceRuntimeStepOrderTest, UpstreamDocstringExample) {
  // PP2, M = 5, V = 2, N = 3: schedule table microbatch ids 0 1 2 0 1 2 3 4 3 4,
  // chunks 0 0 0 1 1 1 0 0 1 1. Pipeline rank 0 warms up
  // (2 - 0 - 1) * 2 + (2 - 1) * 3 = 5 forwards, as the docstring's order does.
  const ReferenceRuntime runtime{
      .pipeline_stages = 2, .virtual_stages = 2, .microbatch_group_size = 3};
  const absl::StatusOr<std::vector<ReferenceOp>> order = ReferenceStageOrder(runtime, 5, 0);
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_THAT(Signed(*order), ElementsAre(1, 1, 1, 2, 2, 2, -2, 1, -2, 1, -2, 2, -1, 2, -1, -1,
                                          -2, -2, -1, -1));
  // The forwards are the table in order.
  std::vector<std::int64_t> forward_ids;
  std::vector<std::int64_t> forward_chunks;
  for (const ReferenceOp& op : *order) {
    if (!op.forward) continue;
    forward_ids.push_back(op.microbatch);
    forward_chunks.push_back(op.chunk);
  }
  EXPECT_THAT(forward_ids, ElementsAre(0, 1, 2, 0, 1, 2, 3, 4, 3, 4));
  EXPECT_THAT(forward_chunks, ElementsAre(0, 0, 0, 1, 1, 1, 0, 0, 1, 1));
  // Backward i is table entry i with its chunk reversed.
  EXPECT_EQ(Spell(*order, true),
            "F0.0 F1.0 F2.0 F0.1 F1.1 F2.1 B0.1 F3.0 B1.1 F4.0 B2.1 F3.1 B0.0 F4.1 B1.0 "
            "B2.0 B3.1 B4.1 B3.0 B4.0");
}

TEST(ReferenceRuntimeStepOrderTest, InterleavedLastPipelineRankWarmsUpOneGroup) {
  // Same configuration, pipeline rank 1: w = 0 * 2 + 1 * 3 = 3.
  const ReferenceRuntime runtime{
      .pipeline_stages = 2, .virtual_stages = 2, .microbatch_group_size = 3};
  EXPECT_EQ(OrderOf(runtime, 5, 1, true),
            "F0.0 F1.0 F2.0 F0.1 B0.1 F1.1 B1.1 F2.1 B2.1 F3.0 B0.0 F4.0 B1.0 F3.1 B2.0 "
            "F4.1 B3.1 B4.1 B3.0 B4.0");
}

TEST(ReferenceRuntimeStepOrderTest, GroupSizeZeroMeansThePipelineStages) {
  const ReferenceRuntime zero{.pipeline_stages = 2, .virtual_stages = 2};
  const ReferenceRuntime two{
      .pipeline_stages = 2, .virtual_stages = 2, .microbatch_group_size = 2};
  for (std::int64_t p = 0; p < 2; ++p) {
    EXPECT_EQ(OrderOf(zero, 4, p, true), OrderOf(two, 4, p, true));
  }
}

TEST(ReferenceRuntimeStepOrderTest, RefusesWhatMegatronRefuses) {
  const auto code = [](const ReferenceRuntime& runtime, std::int64_t m, std::int64_t p) {
    return ReferenceStageOrder(runtime, m, p).status().code();
  };
  const ReferenceRuntime vpp{
      .pipeline_stages = 2, .virtual_stages = 2, .microbatch_group_size = 3};
  EXPECT_EQ(code(vpp, 2, 0), absl::StatusCode::kInvalidArgument);  // N > M
  EXPECT_EQ(code(vpp, 4, 0), absl::StatusCode::kInvalidArgument);  // last group of 1 < P
  EXPECT_EQ(code(vpp, 3, 0), absl::StatusCode::kOk);
  EXPECT_EQ(code(vpp, 5, 0), absl::StatusCode::kOk);               // last group of 2 = P
  const ReferenceRuntime small_group{
      .pipeline_stages = 4, .virtual_stages = 2, .microbatch_group_size = 2};
  EXPECT_EQ(code(small_group, 8, 0), absl::StatusCode::kInvalidArgument);  // N < P
  EXPECT_EQ(code(ReferenceRuntime{.virtual_stages = 2}, 4, 0),
            absl::StatusCode::kInvalidArgument);  // V > 1 without pipelining
  EXPECT_EQ(code(ReferenceRuntime{.pipeline_stages = 0}, 4, 0),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(ReferenceRuntime{.virtual_stages = 0}, 4, 0),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(ReferenceRuntime{.pipeline_stages = 2}, 4, 2),
            absl::StatusCode::kInvalidArgument);  // no pipeline rank 2
  EXPECT_EQ(code(ReferenceRuntime{.pipeline_stages = 2}, 4, -1),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(ReferenceRuntime{}, -1, 0), absl::StatusCode::kInvalidArgument);
  // The group size plays no part without interleaving.
  EXPECT_EQ(code(ReferenceRuntime{.pipeline_stages = 2, .microbatch_group_size = 7}, 3, 0),
            absl::StatusCode::kOk);
}

// --- the step --------------------------------------------------------------------

// Four ranks; the heavy sample moves from ranks 0-1 to ranks 2-3.
//   microbatch 0: {1} {1} {2} {3}  seconds 10 10 1 3
//   microbatch 1: {4} {5} {6} {6}  seconds 1 1 10 10
Schedule MovingHeavyGroup() { return Microbatches({{{1}, {1}, {2}, {3}}, {{4}, {5}, {6}, {6}}}); }
const std::vector<std::vector<double>> kMovingSeconds = {{10, 10, 1, 3}, {1, 1, 10, 10}};

TEST(ReferenceRuntimeStepTest, NoPipeliningIsEachRanksLongestPath) {
  // Ranks 0, 1: 10 then 1 alone = 11. Ranks 2 and 3 start sample 6 together
  // once both are free: max(1, 3) + 10 = 13. The barrier sum is 20.
  const ReferenceStep step = StepOf(MovingHeavyGroup(), kMovingSeconds, ReferenceRuntime{});
  EXPECT_EQ(step.step_seconds, 13.0);
  EXPECT_THAT(step.rank_finish_seconds, ElementsAre(11.0, 11.0, 13.0, 13.0));
  EXPECT_EQ(step.busiest_rank_seconds, 13.0);  // rank 3: 3 + 10
}

TEST(ReferenceRuntimeStepTest, LayersPerStageScaleEveryOp) {
  const ReferenceStep step =
      StepOf(MovingHeavyGroup(), kMovingSeconds, ReferenceRuntime{.layers_per_stage = 2});
  EXPECT_EQ(step.step_seconds, 26.0);
  EXPECT_THAT(step.rank_finish_seconds, ElementsAre(22.0, 22.0, 26.0, 26.0));
  EXPECT_EQ(step.busiest_rank_seconds, 26.0);
}

TEST(ReferenceRuntimeStepTest, LegacyIsTheBarrierSum) {
  const ReferenceStep step =
      StepOf(MovingHeavyGroup(), kMovingSeconds, ReferenceRuntime{.legacy = true});
  EXPECT_EQ(step.step_seconds, 20.0);  // 10 + 10
  // Every rank starts the last microbatch at 10 and ends its own time later.
  EXPECT_THAT(step.rank_finish_seconds, ElementsAre(11.0, 11.0, 20.0, 20.0));
  EXPECT_EQ(step.busiest_rank_seconds, 13.0);
  EXPECT_EQ(StepOf(MovingHeavyGroup(), kMovingSeconds,
                   ReferenceRuntime{.layers_per_stage = 3, .legacy = true})
                .step_seconds,
            60.0);
}

TEST(ReferenceRuntimeStepTest, AnEmptyRankWaitsForNoOneAndTakesNoTime) {
  // Rank 1 holds nothing in microbatch 0 (its seconds are ignored) and
  // sample 3 alone in microbatch 1.
  const Schedule schedule = Microbatches({{{1}, {}}, {{2}, {3}}});
  const ReferenceStep step = StepOf(schedule, {{5, 7}, {1, 2}}, ReferenceRuntime{});
  EXPECT_EQ(step.step_seconds, 6.0);
  EXPECT_THAT(step.rank_finish_seconds, ElementsAre(6.0, 2.0));
  EXPECT_EQ(step.busiest_rank_seconds, 6.0);
  EXPECT_EQ(StepOf(schedule, {{5, 7}, {1, 2}}, ReferenceRuntime{.legacy = true}).step_seconds,
            7.0);  // 5 + 2
}

TEST(ReferenceRuntimeStepTest, NoMicrobatchesIsAnEmptyStep) {
  const ReferenceStep step = StepOf(Schedule{}, {}, ReferenceRuntime{.pipeline_stages = 2});
  EXPECT_EQ(step.step_seconds, 0.0);
  EXPECT_THAT(step.rank_finish_seconds, IsEmpty());
}

TEST(ReferenceRuntimeStepTest, OneFOneBOnTwoStagesByHand) {
  // P = 2, f = 1/4: microbatch 0 takes 4 (F 1, B 3), microbatch 1 takes 8
  // (F 2, B 6). Pipeline rank 0 runs F0 F1 B0 B1, rank 1 F0 B0 F1 B1:
  //   p0 F0 [0, 1]   p0 F1 [1, 3]
  //   p1 F0 [1, 2]   p1 B0 [2, 5]   p1 F1 [5, 7]   p1 B1 [7, 13]
  //   p0 B0 [5, 8]   p0 B1 [13, 19]
  // The step 19 is the bound p F(0) + W + p B(M - 1) = 1 + 12 + 6. Rank 1
  // holds nothing and takes no time.
  const Schedule schedule = Microbatches({{{1}, {}}, {{2}, {}}});
  const ReferenceStep step =
      StepOf(schedule, {{4, 0}, {8, 0}},
             ReferenceRuntime{.pipeline_stages = 2, .forward_share = 0.25});
  EXPECT_EQ(step.step_seconds, 19.0);
  EXPECT_THAT(step.rank_finish_seconds, ElementsAre(19.0, 0.0));
  EXPECT_EQ(step.busiest_rank_seconds, 12.0);
}

TEST(ReferenceRuntimeStepTest, InterleavedOnTwoStagesByHand) {
  // P = 2, V = 2, N = 2, M = 2, t = 8: each chunk's op of L t / V = 4
  // split F 1, B 3. Stages
  // v = c P + p. Pipeline rank 0 (w = 4) runs every forward then every
  // backward; rank 1 (w = 2):
  //   p0 F(0,v0) [0,1]  F(1,v0) [1,2]  F(0,v2) [2,3]  F(1,v2) [3,4]
  //   p1 F(0,v1) [1,2]  F(1,v1) [2,3]  F(0,v3) [3,4]  B(0,v3) [4,7]
  //      F(1,v3) [7,8]  B(1,v3) [8,11]
  //   p0 B(0,v2) [7,10] B(1,v2) [11,14]
  //   p1 B(0,v1) [11,14] B(1,v1) [14,17]
  //   p0 B(0,v0) [14,17] B(1,v0) [17,20]
  const Schedule schedule = Microbatches({{{1}}, {{2}}});
  const ReferenceStep step = StepOf(
      schedule, {{8}, {8}},
      ReferenceRuntime{.pipeline_stages = 2, .virtual_stages = 2, .forward_share = 0.25});
  EXPECT_EQ(step.step_seconds, 20.0);
  EXPECT_THAT(step.rank_finish_seconds, ElementsAre(20.0));
  EXPECT_EQ(step.busiest_rank_seconds, 16.0);  // L * (8 + 8)
}

TEST(ReferenceRuntimeStepTest, UpstreamExampleRunsToTheEnd) {
  // The docstring's configuration on two ranks that each hold their own
  // sample: no deadlock, and every pipeline rank does L times the rank's
  // one-layer time, over its V chunks (each op L t / V).
  const Schedule schedule =
      Microbatches({{{1}, {2}}, {{3}, {4}}, {{5}, {6}}, {{7}, {8}}, {{9}, {10}}});
  const std::vector<std::vector<double>> seconds = {{8, 16}, {8, 16}, {8, 16}, {8, 16}, {8, 16}};
  const ReferenceStep step =
      StepOf(schedule, seconds,
             ReferenceRuntime{.pipeline_stages = 2, .virtual_stages = 2,
                              .microbatch_group_size = 3, .forward_share = 0.25});
  EXPECT_EQ(step.busiest_rank_seconds, 80.0);  // 5 * 16
  EXPECT_EQ(step.rank_finish_seconds.size(), 2u);
  EXPECT_EQ(step.rank_finish_seconds[1], 2.0 * step.rank_finish_seconds[0]);
  EXPECT_GE(step.step_seconds, 2.0 + 80.0 + 6.0);  // the doc's bound at p = 1
}

// Two CP groups per microbatch, ranks 0-1 and 2-3:
//   microbatch 0: seconds 5 5 2 2
//   microbatch 1: seconds 1 1 4 4
Schedule TwoGroups() { return Microbatches({{{1}, {1}, {2}, {2}}, {{3}, {3}, {4}, {4}}}); }
const std::vector<std::vector<double>> kTwoGroupSeconds = {{5, 5, 2, 2}, {1, 1, 4, 4}};

TEST(ReferenceRuntimeStepTest, WithoutExpertParallelismGroupsRunApart) {
  const ReferenceStep step = StepOf(TwoGroups(), kTwoGroupSeconds, ReferenceRuntime{});
  EXPECT_EQ(step.step_seconds, 6.0);
  EXPECT_THAT(step.rank_finish_seconds, ElementsAre(6.0, 6.0, 6.0, 6.0));
}

TEST(ReferenceRuntimeStepTest, ExpertParallelLockstepMakesGroupsWaitForEachOther) {
  // E = 4 = G: all four ranks start each microbatch together and end it
  // with the slowest: 5, then 5 + 4.
  const ReferenceStep step =
      StepOf(TwoGroups(), kTwoGroupSeconds, ReferenceRuntime{.expert_parallel_size = 4});
  EXPECT_EQ(step.step_seconds, 9.0);
  EXPECT_THAT(step.rank_finish_seconds, ElementsAre(9.0, 9.0, 9.0, 9.0));
  EXPECT_EQ(step.busiest_rank_seconds, 6.0);  // the ranks' own sums
  // E = 2: the EP blocks are the CP groups, nothing more waits.
  EXPECT_EQ(StepOf(TwoGroups(), kTwoGroupSeconds, ReferenceRuntime{.expert_parallel_size = 2})
                .step_seconds,
            6.0);
}

TEST(ReferenceRuntimeStepTest, ExpertParallelSetsJoinTransitively) {
  // E = 2, blocks {0, 1} and {2, 3}. In microbatch 0 sample 2 spans ranks
  // 1-2, so both blocks run it as one set: all end at 5. Microbatch 1 has
  // one sample a rank: blocks apart, 5 + max(1, 1) and 5 + max(4, 1).
  const Schedule schedule = Microbatches({{{1}, {2}, {2}, {3}}, {{4}, {5}, {6}, {7}}});
  const ReferenceStep step = StepOf(schedule, {{1, 2, 2, 5}, {1, 1, 4, 1}},
                                    ReferenceRuntime{.expert_parallel_size = 2});
  EXPECT_THAT(step.rank_finish_seconds, ElementsAre(6.0, 6.0, 9.0, 9.0));
  EXPECT_EQ(step.step_seconds, 9.0);
  // Without EP: rank 0 alone 1 + 1, ranks 1-2 together 2 then apart, rank 3 5 + 1.
  EXPECT_THAT(StepOf(schedule, {{1, 2, 2, 5}, {1, 1, 4, 1}}, ReferenceRuntime{})
                  .rank_finish_seconds,
              ElementsAre(2.0, 3.0, 6.0, 6.0));
}

TEST(ReferenceRuntimeStepTest, AnEmptyRankJoinsItsExpertParallelGroup) {
  // E = 2: rank 1 holds nothing in microbatch 0 but still waits for rank 0.
  const Schedule schedule = Microbatches({{{1}, {}}, {{2}, {3}}});
  const ReferenceStep step =
      StepOf(schedule, {{5, 0}, {1, 3}}, ReferenceRuntime{.expert_parallel_size = 2});
  EXPECT_THAT(step.rank_finish_seconds, ElementsAre(8.0, 8.0));
  EXPECT_EQ(step.busiest_rank_seconds, 6.0);
}

TEST(ReferenceRuntimeStepTest, RefusesBadConfigurationsAndShapes) {
  const Schedule schedule = TwoGroups();
  const std::vector<std::vector<double>>& seconds = kTwoGroupSeconds;
  const auto invalid = absl::StatusCode::kInvalidArgument;
  EXPECT_EQ(CodeOf(schedule, seconds, ReferenceRuntime{}), absl::StatusCode::kOk);
  // Shapes.
  EXPECT_EQ(CodeOf(schedule, {{5, 5, 2, 2}}, ReferenceRuntime{}), invalid);
  EXPECT_EQ(CodeOf(schedule, {{5, 5, 2, 2}, {1, 1, 4}}, ReferenceRuntime{}), invalid);
  EXPECT_EQ(CodeOf(Microbatches({{{1}, {1}, {2}, {2}}, {{3}, {3}, {4}}}), {{5, 5, 2, 2}, {1, 1, 4}},
                   ReferenceRuntime{}),
            invalid);
  // Configuration.
  EXPECT_EQ(CodeOf(schedule, seconds, ReferenceRuntime{.pipeline_stages = 0}), invalid);
  EXPECT_EQ(CodeOf(schedule, seconds, ReferenceRuntime{.virtual_stages = 0}), invalid);
  EXPECT_EQ(CodeOf(schedule, seconds, ReferenceRuntime{.layers_per_stage = 0}), invalid);
  EXPECT_EQ(CodeOf(schedule, seconds, ReferenceRuntime{.forward_share = 0.0}), invalid);
  EXPECT_EQ(CodeOf(schedule, seconds, ReferenceRuntime{.forward_share = 1.0}), invalid);
  EXPECT_EQ(CodeOf(schedule, seconds, ReferenceRuntime{.forward_share = -0.5}), invalid);
  EXPECT_EQ(CodeOf(schedule, seconds, ReferenceRuntime{.virtual_stages = 2}), invalid);
  EXPECT_EQ(CodeOf(schedule, seconds, ReferenceRuntime{.pipeline_stages = 2, .legacy = true}),
            invalid);
  EXPECT_EQ(CodeOf(schedule, seconds, ReferenceRuntime{.expert_parallel_size = 3}), invalid);
  EXPECT_EQ(CodeOf(schedule, seconds, ReferenceRuntime{.expert_parallel_size = -1}), invalid);
  // The pipeline refusals (M = 2).
  EXPECT_EQ(CodeOf(schedule, seconds,
                   ReferenceRuntime{.pipeline_stages = 2, .virtual_stages = 2,
                                    .microbatch_group_size = 3}),
            invalid);  // N > M
  EXPECT_EQ(CodeOf(schedule, seconds,
                   ReferenceRuntime{.pipeline_stages = 2, .virtual_stages = 2,
                                    .microbatch_group_size = 1}),
            invalid);  // N < P
  EXPECT_EQ(CodeOf(Microbatches({{{1}}, {{2}}, {{3}}}), {{1}, {1}, {1}},
                   ReferenceRuntime{.pipeline_stages = 2, .virtual_stages = 2}),
            invalid);  // last group of 1 < P
  EXPECT_EQ(CodeOf(schedule, seconds, ReferenceRuntime{.pipeline_stages = 2, .virtual_stages = 2}),
            absl::StatusCode::kOk);
}

}  // namespace
}  // namespace dcpsched::oracle::reference_runtime_step_test
