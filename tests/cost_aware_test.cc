// Unit tests of the cost-aware scheduler (core/cost_aware.h) where the
// properties' generated runtimes do not reach: a runtime that cannot run
// packing-aware's schedule (interleaving without --vpp, so packing-aware's
// microbatch count is free to be one interleaving refuses).

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "core/checker.h"
#include "core/cost_aware.h"
#include "core/cost_profile.h"
#include "core/gpu_time.h"
#include "core/packing_aware.h"
#include "core/runtime_step.h"
#include "core/types.h"
#include "io/cost_profile_file.h"
#include "gtest/gtest.h"

namespace dcpsched {
namespace {

// Ten samples of 1000 to 1900 tokens on G = 4, mslpr 2048: packing-aware
// makes 3 microbatches.
std::vector<Sample> TenSamples() {
  std::vector<Sample> samples;
  for (std::int64_t i = 0; i < 10; ++i) samples.push_back({i, 1000 + (i * 37) % 900});
  return samples;
}

RuntimeConfig InterleavedOverTwoStages() {
  RuntimeConfig runtime;
  runtime.pipeline.stages = 2;
  runtime.pipeline.virtual_stages = 2;
  return runtime;
}

TEST(ScheduleCostAwareTest, SchedulesWhereTheRuntimeCannotRunPackingAwaresSchedule) {
  const std::vector<Sample> samples = TenSamples();
  const DynamicCpOptions options{.total_gpus = 4, .max_seq_len_per_rank = 2048};
  const absl::StatusOr<CostProfile> profile = LoadCostProfile("h200-llama3-8b");
  ASSERT_TRUE(profile.ok());
  const RuntimeConfig runtime = InterleavedOverTwoStages();
  const absl::StatusOr<CompactSchedule> packing_aware =
      ScheduleDynamicCpCompact(samples, options);
  ASSERT_TRUE(packing_aware.ok());
  // Interleaving over P = 2 refuses packing-aware's count (its last group
  // of microbatches would be shorter than P).
  ASSERT_FALSE(CheckRuntimeConfig(runtime, options.total_gpus,
                                  static_cast<std::int64_t>(packing_aware->microbatches.size()))
                   .ok());

  const absl::StatusOr<CostAwareResult> result =
      ScheduleCostAware(samples, options, *profile, CostAwareOptions{.runtime = runtime});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(CheckRuntimeConfig(runtime, options.total_gpus,
                                 static_cast<std::int64_t>(result->schedule.microbatches.size()))
                  .ok());
  for (const Violation& violation : FindViolations(samples, result->schedule, options)) {
    EXPECT_EQ(violation.invariant, Invariant::kWorkCap) << violation.message;
  }
  EXPECT_FALSE(result->packing_aware_step_seconds.has_value());
  EXPECT_TRUE(absl::StrContains(result->reason, "the runtime cannot run packing-aware's"))
      << result->reason;
  const absl::StatusOr<ScheduleTime> time =
      MeasureScheduleTime(samples, result->schedule, *profile, {});
  ASSERT_TRUE(time.ok());
  const absl::StatusOr<RuntimeStep> step = MeasureRuntimeStep(result->schedule, *time, runtime);
  ASSERT_TRUE(step.ok());
  EXPECT_EQ(result->step_seconds, step->step_seconds);
}

}  // namespace
}  // namespace dcpsched
