// Properties of the step arrangement (core/step_arrangement.h): on the
// schedules of packing-aware and of the cost-aware planner, under shipped
// and generated profiles and any runnable runtime, the arranged schedule
// holds the same microbatches (each group's size and ids) in some order,
// every group on an aligned block of its own size or on all G ranks; a
// schedule the runtime could run still is one; the step it reports is the
// runtime step model's for the schedule it returns; it is never slower than
// the schedule it was given; and under the barrier it changes nothing.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/compact_schedule.h"
#include "core/cost_profile.h"
#include "core/gpu_time.h"
#include "core/packing_aware.h"
#include "core/runtime_groups.h"
#include "core/runtime_step.h"
#include "core/step_arrangement.h"
#include "core/types.h"
#include "properties/cost_aware_plan_checks.h"
#include "properties/generators.h"
#include "properties/runtime_generators.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"

namespace dcpsched::properties::step_arrangement_properties {
namespace {

struct Arranged {
  DynamicCpProblem problem;
  CostProfile profile;
  CompactSchedule given;
  ScheduleTime time;
  RuntimeConfig runtime;
  ArrangedSchedule arranged;
};

// A schedule to arrange, by packing-aware or the planner (half each), its
// times, a runtime that runs it, and its arrangement.
Arranged GenArranged(bool mixed_cp_sizes) {
  Arranged case_;
  case_.problem = mixed_cp_sizes ? *GenMixedCpSizeProblem() : *GenValidProblem();
  RC_PRE(!case_.problem.samples.empty());
  case_.profile = AnyProfile();
  const CostProfile& profile = case_.profile;
  if (*rc::gen::arbitrary<bool>()) {
    absl::StatusOr<CompactSchedule> schedule =
        ScheduleDynamicCpCompact(case_.problem.samples, case_.problem.options);
    RC_PRE(schedule.ok());
    case_.given = *std::move(schedule);
  } else {
    absl::StatusOr<CostAwareResult> planned = SchedulePlannerAlone(case_.problem, profile);
    RC_PRE(planned.ok());
    case_.given = std::move(planned->schedule);
  }
  absl::StatusOr<ScheduleTime> time = MeasureScheduleTime(
      case_.problem.samples, case_.given, profile,
      GpuTimeOptions{.max_seq_len_per_rank = case_.problem.options.max_seq_len_per_rank});
  RC_ASSERT(time.ok());
  case_.time = *std::move(time);
  case_.runtime = *GenRunnableRuntimeConfig(case_.problem.options.total_gpus,
                                            MicrobatchCountMultiple(case_.problem.options));
  absl::StatusOr<ArrangedSchedule> arranged = ArrangeForRuntimeStep(
      case_.given, case_.time, case_.problem.options.total_gpus, case_.runtime);
  RC_ASSERT(arranged.ok());
  case_.arranged = *std::move(arranged);
  return case_;
}

// The arranged schedule holds the given microbatches, tiles every
// microbatch with groups on aligned blocks of their size (or all G ranks),
// stays runnable where the given one was, and reports its own step.
void CheckArrangement(const Arranged& case_) {
  const CompactSchedule& arranged = case_.arranged.schedule;
  const std::int64_t gpus = case_.problem.options.total_gpus;
  RC_ASSERT(ContentsOf(arranged) == ContentsOf(case_.given));
  for (const CompactMicrobatch& microbatch : arranged.microbatches) {
    std::int64_t next = 0;
    for (const CpGroupIds& group : microbatch.groups) {
      RC_ASSERT(group.first_rank == next);
      RC_ASSERT(group.size == gpus || group.first_rank % group.size == 0);
      next += group.size;
    }
    RC_ASSERT(next == gpus);
  }
  if (CheckSchedulerOutputRunnable(case_.given, case_.problem.options, "given").ok()) {
    RC_ASSERT(CheckSchedulerOutputRunnable(arranged, case_.problem.options, "arranged").ok());
  }
  const absl::StatusOr<ScheduleTime> time =
      MeasureScheduleTime(case_.problem.samples, arranged, case_.profile, GpuTimeOptions{});
  RC_ASSERT(time.ok());
  const absl::StatusOr<RuntimeStep> step = MeasureRuntimeStep(arranged, *time, case_.runtime);
  RC_ASSERT(step.ok());
  RC_ASSERT(step->step_seconds == case_.arranged.step.step_seconds);
  RC_ASSERT(step->rank_finish_seconds == case_.arranged.step.rank_finish_seconds);
}

RC_GTEST_PROP(StepArrangementProperties, KeepsTheMicrobatchesOnRunnableBlocks, ()) {
  CheckArrangement(GenArranged(false));
}

RC_GTEST_PROP(StepArrangementProperties, KeepsMixedCpSizeMicrobatchesOnRunnableBlocks, ()) {
  CheckArrangement(GenArranged(true));
}

RC_GTEST_PROP(StepArrangementProperties, NeverSlowerThanTheScheduleItWasGiven, ()) {
  const Arranged case_ = GenArranged(*rc::gen::arbitrary<bool>());
  const absl::StatusOr<RuntimeStep> given =
      MeasureRuntimeStep(case_.given, case_.time, case_.runtime);
  RC_ASSERT(given.ok());
  RC_ASSERT(case_.arranged.step.step_seconds <= given->step_seconds);
  RC_TAG(case_.arranged.step.step_seconds < given->step_seconds ? "faster" : "as given");
}

// Under the barrier neither the order nor the blocks change the step: the
// schedule comes back as it was given.
RC_GTEST_PROP(StepArrangementProperties, ChangesNothingUnderTheBarrier, ()) {
  Arranged case_ = GenArranged(false);
  RuntimeConfig legacy = case_.runtime;
  legacy.pipeline = PipelineShape{};
  legacy.path = RuntimePath::kLegacy;
  const absl::StatusOr<ArrangedSchedule> arranged = ArrangeForRuntimeStep(
      case_.given, case_.time, case_.problem.options.total_gpus, legacy);
  RC_ASSERT(arranged.ok());
  RC_ASSERT(arranged->schedule == case_.given);
}

// Any tiling, not only a runnable one: groups of any size at any rank, some
// holding no samples, with any times. The arrangement keeps the
// microbatches, tiles every one, reports its own step and is never slower
// than the schedule given; where a size has too few free aligned blocks for
// its groups, that microbatch keeps its blocks.
RC_GTEST_PROP(StepArrangementProperties, ArrangesAnyTilingNeverSlower, ()) {
  const std::int64_t gpus = *rc::gen::inRange<std::int64_t>(1, 13);
  const int count = *rc::gen::inRange(1, 6);
  CompactSchedule schedule;
  ScheduleTime time;
  SampleId next_id = 0;
  for (int m = 0; m < count; ++m) {
    CompactMicrobatch& microbatch = schedule.microbatches.emplace_back();
    MicrobatchTime& times = time.microbatches.emplace_back();
    for (std::int64_t first = 0; first < gpus;) {
      const std::int64_t size = *rc::gen::inRange<std::int64_t>(1, gpus - first + 1);
      CpGroupIds group{.first_rank = first, .size = size};
      if (*rc::gen::weightedElement<bool>({{5, true}, {1, false}})) group.ids = {next_id++};
      microbatch.groups.push_back(group);
      times.group_seconds.push_back(*rc::gen::inRange(0, 1 << 20) * (10.0 / (1 << 20)));
      times.max_seconds = std::max(times.max_seconds, times.group_seconds.back());
      first += size;
    }
    time.step_seconds += times.max_seconds;
  }
  const RuntimeConfig runtime = *GenRunnableRuntimeConfig(gpus, 1);
  const absl::StatusOr<RuntimeStep> given = MeasureRuntimeStep(schedule, time, runtime);
  RC_ASSERT(given.ok());
  const absl::StatusOr<ArrangedSchedule> arranged =
      ArrangeForRuntimeStep(schedule, time, gpus, runtime);
  RC_ASSERT(arranged.ok());
  RC_ASSERT(ContentsOf(arranged->schedule) == ContentsOf(schedule));
  RC_ASSERT(arranged->step.step_seconds <= given->step_seconds);
  for (const CompactMicrobatch& microbatch : arranged->schedule.microbatches) {
    std::int64_t next = 0;
    for (const CpGroupIds& group : microbatch.groups) {
      RC_ASSERT(group.first_rank == next);
      next += group.size;
    }
    RC_ASSERT(next == gpus);
  }
}

// Times of another schedule are refused as MeasureRuntimeStep refuses them.
RC_GTEST_PROP(StepArrangementProperties, RefusesTimesOfAnotherSchedule, ()) {
  Arranged case_ = GenArranged(false);
  ScheduleTime other = case_.time;
  other.microbatches.push_back(other.microbatches.back());
  const absl::StatusOr<ArrangedSchedule> arranged = ArrangeForRuntimeStep(
      case_.given, other, case_.problem.options.total_gpus, case_.runtime);
  RC_ASSERT(arranged.status() == MeasureRuntimeStep(case_.given, other, case_.runtime).status());
}

}  // namespace
}  // namespace dcpsched::properties::step_arrangement_properties
