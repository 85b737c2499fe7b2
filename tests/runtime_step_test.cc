#include "core/runtime_step.h"

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/compact_schedule.h"
#include "core/gpu_time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dcpsched::runtime_step_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// G = 4 in two groups of 2; in microbatch m the group on ranks
// [2 (m % 2), 2 (m % 2) + 2) takes 10 s and the other 1 s: the heavy group
// moves from block to block.
std::vector<TimedMicrobatch> RotatingHeavyGroup(int count) {
  std::vector<TimedMicrobatch> microbatches;
  for (int m = 0; m < count; ++m) {
    const bool heavy_first = m % 2 == 0;
    microbatches.push_back({{{0, 2, heavy_first ? 10.0 : 1.0}, {2, 2, heavy_first ? 1.0 : 10.0}}});
  }
  return microbatches;
}

RuntimeConfig Dev() { return RuntimeConfig{}; }

TEST(SimulateRuntimeStepTest, WithoutABarrierEachBlockRunsItsOwnChain) {
  const absl::StatusOr<RuntimeStep> step = SimulateRuntimeStep(4, RotatingHeavyGroup(4), Dev());
  ASSERT_TRUE(step.ok()) << step.status();
  // Each block: 10 + 1 + 10 + 1.
  EXPECT_EQ(step->step_seconds, 22.0);
  EXPECT_THAT(step->rank_finish_seconds, ElementsAre(22.0, 22.0, 22.0, 22.0));
  EXPECT_EQ(step->busiest_rank_seconds, 22.0);
  EXPECT_EQ(step->bubble_seconds, 0.0);
  EXPECT_EQ(step->bound_seconds, 22.0);
}

TEST(SimulateRuntimeStepTest, LegacyWaitsOnAllRanksAfterEveryMicrobatch) {
  RuntimeConfig legacy;
  legacy.path = RuntimePath::kLegacy;
  const absl::StatusOr<RuntimeStep> step = SimulateRuntimeStep(4, RotatingHeavyGroup(4), legacy);
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->step_seconds, 40.0);
  // The last microbatch starts at 30; its light block ends at 31.
  EXPECT_THAT(step->rank_finish_seconds, ElementsAre(31.0, 31.0, 40.0, 40.0));
  EXPECT_EQ(step->bubble_seconds, 18.0);
}

TEST(SimulateRuntimeStepTest, AnExpertParallelGroupMovesInLockstep) {
  RuntimeConfig config;
  config.expert_parallel_size = 4;
  const absl::StatusOr<RuntimeStep> all = SimulateRuntimeStep(4, RotatingHeavyGroup(4), config);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->step_seconds, 40.0);
  // EP groups inside the CP groups change nothing.
  config.expert_parallel_size = 2;
  const absl::StatusOr<RuntimeStep> within = SimulateRuntimeStep(4, RotatingHeavyGroup(4), config);
  ASSERT_TRUE(within.ok()) << within.status();
  EXPECT_EQ(within->step_seconds, 22.0);
}

TEST(SimulateRuntimeStepTest, RanksWithoutSamplesWaitForNoOne) {
  // Ranks 2 and 3 hold nothing in microbatch 1, when rank 2 is still busy
  // until 5 s and rank 3 free from 1 s: rank 3 goes on at once.
  const std::vector<TimedMicrobatch> microbatches = {
      {{{0, 2, 1.0}, {2, 1, 5.0}, {3, 1, 1.0}}},
      {{{0, 2, 1.0}, {2, 2, 0.0, false}}},
      {{{0, 3, 1.0}, {3, 1, 1.0}}},
  };
  const absl::StatusOr<RuntimeStep> step = SimulateRuntimeStep(4, microbatches, Dev());
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_THAT(step->rank_finish_seconds, ElementsAre(6.0, 6.0, 6.0, 2.0));
  EXPECT_EQ(step->busiest_rank_seconds, 6.0);
}

// P = 2, one rank, two microbatches of 3 s: F = 1, B = 2. Stage 0 runs
// F0 F1 B0 B1 and stage 1 F0 B0 F1 B1: stage 1's F0 [1, 2], B0 [2, 4],
// F1 [4, 5], B1 [5, 7]; stage 0's B0 [4, 6], B1 [7, 9].
TEST(SimulateRuntimeStepTest, OneFOneBOnTwoStages) {
  RuntimeConfig config;
  config.pipeline.stages = 2;
  const std::vector<TimedMicrobatch> microbatches = {{{{0, 1, 3.0}}}, {{{0, 1, 3.0}}}};
  const absl::StatusOr<RuntimeStep> step = SimulateRuntimeStep(1, microbatches, config);
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->step_seconds, 9.0);
  EXPECT_EQ(step->busiest_rank_seconds, 6.0);
  EXPECT_EQ(step->bubble_seconds, 3.0);
  // Stage 1 waits F(0) before and stage 0 B(1) after its 6 s.
  EXPECT_EQ(step->bound_seconds, 9.0);
}

TEST(SimulateRuntimeStepTest, LayersScaleEveryOp) {
  RuntimeConfig config;
  config.layers_per_stage = 3;
  const absl::StatusOr<RuntimeStep> step = SimulateRuntimeStep(4, RotatingHeavyGroup(2), config);
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->step_seconds, 33.0);
}

TEST(SimulateRuntimeStepTest, NoMicrobatchesTakeNoTime) {
  const absl::StatusOr<RuntimeStep> step = SimulateRuntimeStep(2, {}, Dev());
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->step_seconds, 0.0);
  EXPECT_THAT(step->rank_finish_seconds, ElementsAre(0.0, 0.0));
}

void ExpectRefused(std::int64_t total_gpus, const std::vector<TimedMicrobatch>& microbatches,
                   const RuntimeConfig& config, const std::string& says) {
  const absl::StatusOr<RuntimeStep> step = SimulateRuntimeStep(total_gpus, microbatches, config);
  EXPECT_EQ(step.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(step.status().message(), HasSubstr(says));
}

TEST(SimulateRuntimeStepTest, RefusesGroupsThatDoNotTileTheRanks) {
  ExpectRefused(0, {}, Dev(), "it needs 1 or more");
  ExpectRefused(4, {{{{1, 3, 1.0}}}}, Dev(), "must start at rank 0");
  ExpectRefused(4, {{{{0, 0, 1.0}}}}, Dev(), "group 0 has ranks");
  ExpectRefused(4, {{{{0, 5, 1.0}}}}, Dev(), "end by rank 4");
  ExpectRefused(4, {{{{0, 2, 1.0}}}}, Dev(), "cover ranks [0, 2)");
  ExpectRefused(4, {{{{0, 4, -1.0}}}}, Dev(), "finite and not negative");
  ExpectRefused(4, {{{{0, 4, std::numeric_limits<double>::infinity()}}}}, Dev(), "finite and not negative");
}

TEST(CheckRuntimeConfigTest, RefusesWhatNoRuntimeRuns) {
  RuntimeConfig config;
  config.path = RuntimePath::kLegacy;
  config.pipeline.stages = 2;
  EXPECT_THAT(CheckRuntimeConfig(config, 4, 2).message(), HasSubstr("give --runtime dev"));
  config = RuntimeConfig{};
  config.layers_per_stage = 0;
  EXPECT_THAT(CheckRuntimeConfig(config, 4, 2).message(), HasSubstr("--layers-per-stage"));
  for (const double share : {0.0, 1.0, std::numeric_limits<double>::quiet_NaN()}) {
    config = RuntimeConfig{};
    config.forward_share = share;
    EXPECT_THAT(CheckRuntimeConfig(config, 4, 2).message(), HasSubstr("strictly between 0 and 1"));
  }
  for (const std::int64_t ep : {0, 3}) {
    config = RuntimeConfig{};
    config.expert_parallel_size = ep;
    EXPECT_THAT(CheckRuntimeConfig(config, 4, 2).message(), HasSubstr("give a divisor of 4"));
  }
  config = RuntimeConfig{};
  config.pipeline.stages = 0;
  EXPECT_THAT(CheckRuntimeConfig(config, 4, 2).message(), HasSubstr("--pp 1 or more"));
  EXPECT_TRUE(CheckRuntimeConfig(RuntimeConfig{}, 4, 2).ok());
  EXPECT_STREQ(RuntimePathName(RuntimePath::kDev), "dev");
  EXPECT_STREQ(RuntimePathName(RuntimePath::kLegacy), "legacy");
}

TEST(CheckRuntimeConfigTest, RefusesMoreOpsThanTheModelHolds) {
  for (const auto& [stages, chunks, microbatches] :
       std::vector<std::array<std::int64_t, 3>>{{std::int64_t{1} << 23, 1, 1},
                                                {1 << 12, 1 << 11, 1 << 12},
                                                {1 << 10, 2, std::int64_t{1} << 12}}) {
    RuntimeConfig config;
    config.pipeline.stages = stages;
    config.pipeline.virtual_stages = chunks;
    config.pipeline.microbatch_group_size = chunks > 1 ? stages : 0;
    EXPECT_THAT(CheckRuntimeConfig(config, 4, microbatches).message(),
                HasSubstr("give fewer stages"))
        << stages << " x " << chunks << " x " << microbatches;
  }
  RuntimeConfig config;
  config.pipeline.stages = 1 << 10;
  config.pipeline.virtual_stages = 2;
  config.pipeline.microbatch_group_size = 1 << 11;
  EXPECT_TRUE(CheckRuntimeConfig(config, 4, 1 << 11).ok());
}

TEST(DescribeRuntimeTest, NamesEveryPartOfTheRuntime) {
  RuntimeConfig config;
  EXPECT_EQ(DescribeRuntime(config), "dev runtime, no pipelining, 1 layer per stage");
  config.pipeline.stages = 4;
  config.layers_per_stage = 2;
  config.expert_parallel_size = 8;
  EXPECT_EQ(DescribeRuntime(config),
            "dev runtime, 1F1B over P = 4 stages, forward 0.3333 of a layer, 2 layers per "
            "stage, EP 8 in lockstep");
  config.pipeline.virtual_stages = 2;
  EXPECT_THAT(DescribeRuntime(config), HasSubstr("x V = 2 chunks in groups of 4 microbatches"));
  config.pipeline.microbatch_group_size = 6;
  EXPECT_THAT(DescribeRuntime(config), HasSubstr("in groups of 6 microbatches"));
  config = RuntimeConfig{};
  config.path = RuntimePath::kLegacy;
  EXPECT_EQ(DescribeRuntime(config), "legacy runtime, no pipelining, 1 layer per stage");
}

TEST(MeasureRuntimeStepTest, TimesTheScheduleItWasMeasuredFor) {
  CompactSchedule schedule;
  schedule.microbatches.push_back({{{0, 2, {1}}, {2, 2, {}}}});
  ScheduleTime time;
  time.microbatches.push_back({{4.0, 0.0}, 4.0});
  const absl::StatusOr<RuntimeStep> step = MeasureRuntimeStep(schedule, time, Dev());
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_THAT(step->rank_finish_seconds, ElementsAre(4.0, 4.0, 0.0, 0.0));
  // Another schedule's times.
  time.microbatches[0].group_seconds.push_back(1.0);
  EXPECT_THAT(MeasureRuntimeStep(schedule, time, Dev()).status().message(),
              HasSubstr("are of 3 groups"));
  time.microbatches.push_back({});
  EXPECT_THAT(MeasureRuntimeStep(schedule, time, Dev()).status().message(),
              HasSubstr("are of 2 microbatches"));
}

TEST(MeasureRuntimeStepTest, AScheduleOfNoMicrobatchesTakesNoTime) {
  const absl::StatusOr<RuntimeStep> step = MeasureRuntimeStep({}, {}, Dev());
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->step_seconds, 0.0);
  RuntimeConfig config;
  config.pipeline.virtual_stages = 2;
  EXPECT_EQ(MeasureRuntimeStep({}, {}, config).status().code(),
            absl::StatusCode::kInvalidArgument);
  // A first microbatch without groups has no ranks.
  CompactSchedule schedule;
  schedule.microbatches.emplace_back();
  ScheduleTime time;
  time.microbatches.emplace_back();
  EXPECT_THAT(MeasureRuntimeStep(schedule, time, Dev()).status().message(),
              HasSubstr("it needs 1 or more"));
}

}  // namespace
}  // namespace dcpsched::runtime_step_test
