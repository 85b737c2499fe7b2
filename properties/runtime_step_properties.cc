// Properties of the runtime step model (core/runtime_step.h) and the op
// order it runs (core/pipeline_order.h): on generated schedules, op times
// and runtimes (P <= 4, V <= 3, any group size, layers, forward share,
// expert-parallel size, both paths), the step, every rank's finish time and
// the busiest rank's work are the event-simulation oracle's
// (oracle/reference_runtime_step.h), both refuse the same runtimes, and
// the op orders are the oracle's. Beside the oracle: without pipelining
// the step is the ranks' longest chain and the barrier model bounds it;
// the bound lies between the busiest rank's work and the step; an op that
// takes longer never makes the step shorter; and the legacy path is
// MeasureScheduleTime's step bit for bit.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/compact_schedule.h"
#include "core/cost_profile.h"
#include "core/gpu_time.h"
#include "core/packing_aware.h"
#include "core/pipeline_order.h"
#include "core/runtime_step.h"
#include "core/types.h"
#include "oracle/reference_runtime_step.h"
#include "properties/generators.h"
#include "properties/profile_generators.h"
#include "properties/runtime_generators.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"

namespace dcpsched {

// How RapidCheck prints the generated values of a failing case.
void showValue(const TimedMicrobatch& microbatch, std::ostream& os) {
  for (const TimedGroup& group : microbatch.groups) {
    os << "[" << group.first_rank << "+" << group.size << ": " << group.seconds
       << (group.holds_samples ? "" : " empty") << "] ";
  }
}


}  // namespace dcpsched

namespace dcpsched::properties::runtime_step_properties {
namespace {

// Relative slack between sums that agree in exact arithmetic but are
// rounded in another order.
constexpr double kRelativeSlack = 1e-9;

bool Close(double a, double b) {
  return std::abs(a - b) <= kRelativeSlack * std::max({std::abs(a), std::abs(b), 1e-300});
}

// 1 to 6 microbatches of G ranks tiled by groups of random sizes, some without samples, with op
// times from 0 to 10 s (whole seconds half the time, so that ties occur).
rc::Gen<std::vector<TimedMicrobatch>> GenTimedMicrobatches(std::int64_t total_gpus) {
  return rc::gen::exec([total_gpus] {
    const int count = *rc::gen::inRange(1, 7);
    std::vector<TimedMicrobatch> microbatches(static_cast<std::size_t>(count));
    const bool whole = *rc::gen::arbitrary<bool>();
    for (TimedMicrobatch& microbatch : microbatches) {
      for (std::int64_t first = 0; first < total_gpus;) {
        const std::int64_t size = *rc::gen::inRange<std::int64_t>(1, total_gpus - first + 1);
        const double seconds = whole ? *rc::gen::inRange(0, 11)
                                     : *rc::gen::inRange(0, 1 << 20) * (10.0 / (1 << 20));
        const bool holds_samples = *rc::gen::weightedElement<bool>({{5, true}, {1, false}});
        microbatch.groups.push_back({first, size, seconds, holds_samples});
        first += size;
      }
    }
    return microbatches;
  });
}

// The runtime on the pipeline of one rank: no pipelining, dev or legacy.
RuntimeConfig WithoutPipelining(RuntimeConfig config) {
  config.pipeline = PipelineShape{};
  return config;
}

// The per-rank schedule and times the oracle reads: group g of microbatch m
// holds one id of its own (none without samples), and each of its ranks
// takes the group's seconds.
struct PerRank {
  Schedule schedule;
  std::vector<std::vector<double>> rank_seconds;
};

PerRank ExpandTimed(const std::vector<TimedMicrobatch>& microbatches) {
  PerRank expanded;
  SampleId next_id = 0;
  for (const TimedMicrobatch& microbatch : microbatches) {
    Microbatch& ranks = expanded.schedule.microbatches.emplace_back();
    std::vector<double>& seconds = expanded.rank_seconds.emplace_back();
    for (const TimedGroup& group : microbatch.groups) {
      const std::vector<SampleId> ids =
          group.holds_samples ? std::vector<SampleId>{next_id++} : std::vector<SampleId>{};
      for (std::int64_t r = 0; r < group.size; ++r) {
        ranks.rank_ids.push_back(ids);
        seconds.push_back(group.seconds);
      }
    }
  }
  return expanded;
}

// The core and the oracle agree: both refuse, or both give the same step,
// finish times and busiest work.
void AssertMatchesTheOracle(const absl::StatusOr<RuntimeStep>& step,
                            const absl::StatusOr<oracle::ReferenceStep>& reference) {
  RC_ASSERT(step.ok() == reference.ok());
  if (!step.ok()) {
    RC_ASSERT(step.status().code() == absl::StatusCode::kInvalidArgument);
    RC_ASSERT(reference.status().code() == absl::StatusCode::kInvalidArgument);
    return;
  }
  RC_ASSERT(Close(step->step_seconds, reference->step_seconds));
  RC_ASSERT(Close(step->busiest_rank_seconds, reference->busiest_rank_seconds));
  RC_ASSERT(step->rank_finish_seconds.size() == reference->rank_finish_seconds.size());
  for (std::size_t r = 0; r < step->rank_finish_seconds.size(); ++r) {
    RC_ASSERT(Close(step->rank_finish_seconds[r], reference->rank_finish_seconds[r]));
  }
}

RC_GTEST_PROP(RuntimeStepProperties, SimulateRuntimeStepIsTheOraclesStep, ()) {
  const std::int64_t total_gpus = *rc::gen::inRange<std::int64_t>(1, 9);
  const std::vector<TimedMicrobatch> microbatches = *GenTimedMicrobatches(total_gpus);
  const RuntimeConfig config = *GenRuntimeConfig(total_gpus);
  const PerRank expanded = ExpandTimed(microbatches);
  const absl::StatusOr<oracle::ReferenceStep> reference = oracle::ReferenceRuntimeStep(
      expanded.schedule, expanded.rank_seconds, ToReference(config));
  AssertMatchesTheOracle(SimulateRuntimeStep(total_gpus, microbatches, config), reference);
}

// packing_aware's schedule of `problem` (a case without one is discarded)
// and its times by `profile`.
struct TimedSchedule {
  CompactSchedule schedule;
  ScheduleTime time;
};

TimedSchedule PackingAwareTimed(const DynamicCpProblem& problem, const CostProfile& profile) {
  absl::StatusOr<CompactSchedule> schedule =
      ScheduleDynamicCpCompact(problem.samples, problem.options);
  // Two preconditions: RC_PRE's captured && evaluates both sides.
  RC_PRE(schedule.ok());
  RC_PRE(!schedule->microbatches.empty());
  absl::StatusOr<ScheduleTime> time =
      MeasureScheduleTime(problem.samples, *schedule, profile, GpuTimeOptions{});
  RC_ASSERT(time.ok());
  return {*std::move(schedule), *std::move(time)};
}

// On packing_aware's schedules of problems that need several CP sizes (G
// 2-16, some up to 64: the oracle is rank by rank), measured by a generated
// profile.
RC_GTEST_PROP(RuntimeStepProperties, MeasureRuntimeStepIsTheOraclesStep, ()) {
  const DynamicCpProblem problem = *GenMixedCpSizeProblem();
  const CostProfile profile = *GenCostProfile();
  const TimedSchedule timed = PackingAwareTimed(problem, profile);
  const CompactSchedule* schedule = &timed.schedule;
  const ScheduleTime* time = &timed.time;
  const RuntimeConfig config = *GenRuntimeConfig(problem.options.total_gpus);
  const absl::StatusOr<Schedule> per_rank = ExpandSchedule(*schedule);
  RC_ASSERT(per_rank.ok());
  std::vector<std::vector<double>> rank_seconds;
  for (std::size_t m = 0; m < schedule->microbatches.size(); ++m) {
    std::vector<double>& seconds = rank_seconds.emplace_back();
    const std::vector<CpGroupIds>& groups = schedule->microbatches[m].groups;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      seconds.insert(seconds.end(), static_cast<std::size_t>(groups[g].size),
                     time->microbatches[m].group_seconds[g]);
    }
  }
  AssertMatchesTheOracle(
      MeasureRuntimeStep(*schedule, *time, config),
      oracle::ReferenceRuntimeStep(*per_rank, rank_seconds, ToReference(config)));
}

// At L = 1 the legacy step is MeasureScheduleTime's, bit for bit.
RC_GTEST_PROP(RuntimeStepProperties, LegacyStepIsTheBarrierModelsBitForBit, ()) {
  const DynamicCpProblem problem = *GenValidProblem();
  const CostProfile profile = *rc::gen::arbitrary<bool>() ? *GenCostProfile() : ShippedProfile();
  const TimedSchedule timed = PackingAwareTimed(problem, profile);
  const CompactSchedule* schedule = &timed.schedule;
  const ScheduleTime* time = &timed.time;
  RuntimeConfig legacy;
  legacy.path = RuntimePath::kLegacy;
  const absl::StatusOr<RuntimeStep> step = MeasureRuntimeStep(*schedule, *time, legacy);
  RC_ASSERT(step.ok());
  RC_ASSERT(step->step_seconds == time->step_seconds);
}

// Without pipelining each rank runs its own chain: a group starts when its
// ranks have all finished the microbatch before (rank by rank, here), and
// the step is the latest finish. The barrier model (legacy) is never
// faster, bit for bit: it waits at least as long before every microbatch.
RC_GTEST_PROP(RuntimeStepProperties, WithoutPipeliningTheStepIsTheLongestChain, ()) {
  const std::int64_t total_gpus = *rc::gen::inRange<std::int64_t>(1, 9);
  const std::vector<TimedMicrobatch> microbatches = *GenTimedMicrobatches(total_gpus);
  RuntimeConfig config = WithoutPipelining(*GenRuntimeConfig(total_gpus));
  config.path = RuntimePath::kDev;
  config.expert_parallel_size.reset();
  const absl::StatusOr<RuntimeStep> step = SimulateRuntimeStep(total_gpus, microbatches, config);
  RC_ASSERT(step.ok());
  std::vector<double> finish(static_cast<std::size_t>(total_gpus), 0.0);
  const double layers = static_cast<double>(config.layers_per_stage);
  for (const TimedMicrobatch& microbatch : microbatches) {
    for (const TimedGroup& group : microbatch.groups) {
      const auto first = finish.begin() + group.first_rank;
      const auto end = first + group.size;
      if (!group.holds_samples) continue;
      std::fill(first, end, *std::max_element(first, end) + layers * group.seconds);
    }
  }
  RC_ASSERT(step->rank_finish_seconds == finish);
  RC_ASSERT(step->step_seconds == *std::max_element(finish.begin(), finish.end()));
  config.path = RuntimePath::kLegacy;
  const absl::StatusOr<RuntimeStep> barrier = SimulateRuntimeStep(total_gpus, microbatches, config);
  RC_ASSERT(barrier.ok());
  RC_ASSERT(step->step_seconds <= barrier->step_seconds);
}

// busiest <= bound <= step: exactly for the first (the bound includes the
// busiest work) and, at P = 1, the second; up to rounding at P > 1, where
// the step adds op times in another order than the bound.
RC_GTEST_PROP(RuntimeStepProperties, BoundLiesBetweenTheBusiestWorkAndTheStep, ()) {
  const std::int64_t total_gpus = *rc::gen::inRange<std::int64_t>(1, 9);
  const std::vector<TimedMicrobatch> microbatches = *GenTimedMicrobatches(total_gpus);
  const RuntimeConfig config = *GenRuntimeConfig(total_gpus);
  const absl::StatusOr<RuntimeStep> step = SimulateRuntimeStep(total_gpus, microbatches, config);
  RC_PRE(step.ok());
  RC_ASSERT(step->busiest_rank_seconds <= step->bound_seconds);
  RC_ASSERT(step->bubble_seconds == step->step_seconds - step->busiest_rank_seconds);
  if (config.pipeline.stages == 1) {
    RC_ASSERT(step->bound_seconds <= step->step_seconds);
  } else {
    RC_ASSERT(step->bound_seconds <= step->step_seconds * (1.0 + kRelativeSlack));
  }
}

// The model is monotone: an op that takes longer never ends the step
// sooner (up to rounding of the forward share's split).
RC_GTEST_PROP(RuntimeStepProperties, StepNeverShrinksWhenAnOpTakesLonger, ()) {
  const std::int64_t total_gpus = *rc::gen::inRange<std::int64_t>(1, 9);
  std::vector<TimedMicrobatch> microbatches = *GenTimedMicrobatches(total_gpus);
  const RuntimeConfig config = *GenRuntimeConfig(total_gpus);
  const absl::StatusOr<RuntimeStep> before = SimulateRuntimeStep(total_gpus, microbatches, config);
  RC_PRE(before.ok());
  TimedMicrobatch& microbatch =
      microbatches[*rc::gen::inRange<std::size_t>(0, microbatches.size())];
  TimedGroup& group = microbatch.groups[*rc::gen::inRange<std::size_t>(0, microbatch.groups.size())];
  group.seconds += *rc::gen::element(1e-9, 0.5, 3.0);
  const absl::StatusOr<RuntimeStep> after = SimulateRuntimeStep(total_gpus, microbatches, config);
  RC_ASSERT(after.ok());
  RC_ASSERT(after->step_seconds >= before->step_seconds * (1.0 - kRelativeSlack));
  RC_ASSERT(after->busiest_rank_seconds >= before->busiest_rank_seconds * (1.0 - kRelativeSlack));
}

// Every pipeline rank's order is the oracle's, for every shape Megatron-LM
// runs, and both refuse the same shapes.
RC_GTEST_PROP(RuntimeStepProperties, PipelineStageOrderIsTheOraclesOrder, ()) {
  const PipelineShape shape{
      .stages = *rc::gen::inRange<std::int64_t>(1, 7),
      .virtual_stages = *rc::gen::inRange<std::int64_t>(1, 5),
      .microbatch_group_size = *rc::gen::inRange<std::int64_t>(0, 9)};
  const std::int64_t microbatches = *rc::gen::inRange<std::int64_t>(0, 17);
  const oracle::ReferenceRuntime runtime{.pipeline_stages = shape.stages,
                                         .virtual_stages = shape.virtual_stages,
                                         .microbatch_group_size = shape.microbatch_group_size};
  const bool runs = CheckPipelineShape(shape, microbatches).ok();
  for (std::int64_t p = 0; p < shape.stages; ++p) {
    const absl::StatusOr<std::vector<oracle::ReferenceOp>> reference =
        oracle::ReferenceStageOrder(runtime, microbatches, p);
    RC_ASSERT(reference.ok() == runs);
    if (!runs) continue;
    const std::vector<StageOp> order = PipelineStageOrder(shape, microbatches, p);
    RC_ASSERT(order.size() == reference->size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      RC_ASSERT(order[i].microbatch == (*reference)[i].microbatch);
      RC_ASSERT(order[i].chunk == (*reference)[i].chunk);
      RC_ASSERT(order[i].forward == (*reference)[i].forward);
    }
  }
}

}  // namespace
}  // namespace dcpsched::properties::runtime_step_properties
