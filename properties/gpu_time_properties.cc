// Properties of the GPU-time measure (core/gpu_time.h, core/cost_profile.h):
// on the schedules of every scheduler for generated problems and generated
// profiles, the step time is at least the bound and equals the reference
// oracle's (oracle/reference_gpu_time.h); on the shipped profiles, which are
// monotone, more tokens never take less time and adding a sample never
// makes a microbatch faster.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/compact_schedule.h"
#include "core/cost_profile.h"
#include "core/dp_balanced.h"
#include "core/gpu_time.h"
#include "core/legacy.h"
#include "core/packing_aware.h"
#include "core/types.h"
#include "io/cost_profile_file.h"
#include "oracle/reference_gpu_time.h"
#include "properties/generators.h"
#include "properties/profile_generators.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"

namespace dcpsched::properties::gpu_time_properties {
namespace {

// Relative slack for comparing floating-point sums that agree in exact
// arithmetic but round differently.
constexpr double kRelativeSlack = 1e-9;

// Asserts `step` >= `bound` up to rounding.
void AssertAtLeastTheBound(const ScheduleTime& time) {
  RC_ASSERT(time.bound_seconds > 0.0);
  RC_ASSERT(time.step_seconds >= time.bound_seconds * (1.0 - kRelativeSlack));
  RC_ASSERT(time.gpu_efficiency <= 1.0 + kRelativeSlack);
}

// Measures a dynamic-CP scheduler's schedule of `problem` (when it has one)
// and asserts the step is at least the bound.
void AssertScheduleIsAtLeastTheBound(const DynamicCpProblem& problem,
                                     const absl::StatusOr<CompactSchedule>& schedule,
                                     const CostProfile& profile) {
  RC_PRE(schedule.ok() && !problem.samples.empty());
  const absl::StatusOr<ScheduleTime> time = MeasureScheduleTime(
      problem.samples, *schedule, profile,
      GpuTimeOptions{.max_seq_len_per_rank = problem.options.max_seq_len_per_rank});
  RC_ASSERT(time.ok());
  AssertAtLeastTheBound(*time);
}

RC_GTEST_PROP(GpuTimeProperties, PackingAwareStepIsAtLeastTheBound, ()) {
  const DynamicCpProblem problem = *GenValidProblem();
  AssertScheduleIsAtLeastTheBound(
      problem, ScheduleDynamicCpCompact(problem.samples, problem.options), *GenCostProfile());
}

RC_GTEST_PROP(GpuTimeProperties, LegacyStepIsAtLeastTheBound, ()) {
  const DynamicCpProblem problem = *GenMixedCpSizeProblem();
  AssertScheduleIsAtLeastTheBound(
      problem, ScheduleLegacyCompact(problem.samples, problem.options), *GenCostProfile());
}

// MeasureScheduleTimeWithoutBound is MeasureScheduleTime without the bound:
// the same step and group seconds bit for bit on every schedule, and the
// same error where the schedule cannot be measured (here: one with a sample
// dropped, or one measured against a batch with an id missing).
RC_GTEST_PROP(GpuTimeProperties, MeasureScheduleTimeWithoutBoundIsMeasureScheduleTime, ()) {
  const DynamicCpProblem problem = *GenValidProblem();
  const CostProfile profile = *GenCostProfile();
  const absl::StatusOr<CompactSchedule> schedule =
      ScheduleDynamicCpCompact(problem.samples, problem.options);
  RC_PRE(schedule.ok());
  std::vector<Sample> samples = problem.samples;
  if (!samples.empty() && *rc::gen::arbitrary<bool>()) {
    samples.erase(samples.begin() +
                  *rc::gen::inRange<std::size_t>(0, samples.size()));
  }
  const absl::StatusOr<ScheduleTime> time = MeasureScheduleTime(
      samples, *schedule, profile,
      GpuTimeOptions{.max_seq_len_per_rank = problem.options.max_seq_len_per_rank});
  const absl::StatusOr<ScheduleTime> unbounded =
      MeasureScheduleTimeWithoutBound(samples, *schedule, profile);
  RC_ASSERT(unbounded.status() == time.status());
  if (!time.ok()) return;
  RC_ASSERT(std::memcmp(&unbounded->step_seconds, &time->step_seconds, sizeof(double)) == 0);
  RC_ASSERT(unbounded->bound_seconds == 0.0);
  RC_ASSERT(unbounded->gpu_efficiency == 0.0);
  RC_ASSERT(unbounded->microbatches.size() == time->microbatches.size());
  for (std::size_t m = 0; m < time->microbatches.size(); ++m) {
    RC_ASSERT(unbounded->microbatches[m].group_seconds == time->microbatches[m].group_seconds);
    RC_ASSERT(unbounded->microbatches[m].max_seconds == time->microbatches[m].max_seconds);
  }
}

// StepSecondsLowerBound minimises each sample over the CP sizes its options
// allow, so options that allow more sizes never raise it: no token budget
// (max_seq_len_per_rank < 1: no cp_min) and a fixed size each only lower
// it or leave it, and a fixed size outside [1, G] is no size at all.
RC_GTEST_PROP(GpuTimeProperties, BoundNeverRisesAsTheOptionsAllowMoreSizes, ()) {
  const DynamicCpProblem problem = *GenValidProblem();
  const CostProfile profile = *rc::gen::arbitrary<bool>() ? *GenCostProfile() : ShippedProfile();
  const std::int64_t total_gpus = problem.options.total_gpus;
  const auto bound = [&](std::int64_t mslpr, std::optional<std::int64_t> fixed) {
    return StepSecondsLowerBound(
        problem.samples, total_gpus, profile,
        GpuTimeOptions{.max_seq_len_per_rank = mslpr, .fixed_cp_size = fixed});
  };
  const std::int64_t mslpr = problem.options.max_seq_len_per_rank;
  const std::int64_t no_budget = *rc::gen::inRange<std::int64_t>(-1, 1);
  const std::int64_t fixed = *rc::gen::inRange<std::int64_t>(1, total_gpus + 1);
  const double budgeted = bound(mslpr, std::nullopt);
  const double unbudgeted = bound(no_budget, std::nullopt);
  RC_ASSERT(unbudgeted <= budgeted);
  RC_ASSERT(bound(mslpr, fixed) <= budgeted);
  RC_ASSERT(bound(no_budget, fixed) <= bound(mslpr, fixed));
  RC_ASSERT(bound(no_budget, fixed) <= unbudgeted);
  const std::int64_t outside =
      *rc::gen::element<std::int64_t>(0, -1, total_gpus + 1, total_gpus * 2);
  RC_ASSERT(bound(mslpr, outside) == budgeted);
  RC_ASSERT(bound(no_budget, outside) == unbudgeted);
}

RC_GTEST_PROP(GpuTimeProperties, DpBalancedStepIsAtLeastTheBound, ()) {
  const DpBalancedProblem problem = *GenDpBalancedProblem();
  const CostProfile profile = *GenCostProfile();
  const absl::StatusOr<CompactSchedule> schedule =
      ScheduleDpBalancedCompact(problem.lens, problem.options);
  RC_PRE(schedule.ok() && !problem.lens.empty());
  std::vector<Sample> samples;  // dp_balanced names samples by position
  for (std::size_t i = 0; i < problem.lens.size(); ++i) {
    samples.push_back({static_cast<SampleId>(i), problem.lens[i]});
  }
  const absl::StatusOr<ScheduleTime> time = MeasureScheduleTime(
      samples, *schedule, profile,
      GpuTimeOptions{.max_seq_len_per_rank = problem.options.max_seq_len_per_rank,
                     .fixed_cp_size = problem.options.cp_size});
  RC_ASSERT(time.ok());
  AssertAtLeastTheBound(*time);
}

bool Close(double a, double b) {
  return std::abs(a - b) <= kRelativeSlack * std::max(std::abs(a), std::abs(b));
}

RC_GTEST_PROP(GpuTimeProperties, MatchesTheOracle, ()) {
  const DynamicCpProblem problem = *GenValidProblem();
  const CostProfile profile =
      *rc::gen::arbitrary<bool>() ? *GenCostProfile() : ShippedProfile();
  const absl::StatusOr<Schedule> schedule =
      *rc::gen::arbitrary<bool>() ? ScheduleDynamicCp(problem.samples, problem.options)
                                  : ScheduleLegacy(problem.samples, problem.options);
  RC_PRE(schedule.ok());
  const absl::StatusOr<ScheduleTime> time = MeasureScheduleTime(
      problem.samples, *schedule, profile,
      GpuTimeOptions{.max_seq_len_per_rank = problem.options.max_seq_len_per_rank});
  const absl::StatusOr<std::vector<double>> reference =
      oracle::ReferenceMicrobatchSeconds(problem.samples, *schedule, ToReference(profile));
  RC_ASSERT(time.ok() && reference.ok());
  RC_ASSERT(time->microbatches.size() == reference->size());
  double step = 0.0;
  for (std::size_t m = 0; m < reference->size(); ++m) {
    RC_ASSERT(Close(time->microbatches[m].max_seconds, (*reference)[m]));
    step += (*reference)[m];
  }
  RC_ASSERT(Close(time->step_seconds, step));
}

RC_GTEST_PROP(GpuTimeProperties, ShippedProfilesNeverTakeLessForMore, ()) {
  const CostProfile profile = ShippedProfile();
  const double smaller = *rc::gen::inRange(1, 1 << 20) / 4.0;
  const double larger = smaller + *rc::gen::inRange(0, 1 << 20) / 4.0;
  RC_ASSERT(NonAttentionSeconds(profile, smaller) <= NonAttentionSeconds(profile, larger));
  RC_ASSERT(CausalAttentionSeconds(profile, smaller) <= CausalAttentionSeconds(profile, larger));
  RC_ASSERT(FullAttentionSeconds(profile, smaller) <= FullAttentionSeconds(profile, larger));
}

RC_GTEST_PROP(GpuTimeProperties, AddingASampleNeverMakesAMicrobatchFaster, ()) {
  const DynamicCpProblem problem = *GenValidProblem();
  const CostProfile profile = ShippedProfile();
  const absl::StatusOr<CompactSchedule> schedule =
      ScheduleDynamicCpCompact(problem.samples, problem.options);
  RC_PRE(schedule.ok());
  RC_PRE(!schedule->microbatches.empty());
  const CompactMicrobatch& chosen =
      *rc::gen::elementOf(schedule->microbatches);
  CompactSchedule before{{chosen}};
  CompactSchedule after = before;
  std::vector<CpGroupIds>& groups = after.microbatches[0].groups;
  CpGroupIds& group = groups[*rc::gen::inRange<std::size_t>(0, groups.size())];
  SampleId extra = 0;
  for (const Sample& sample : problem.samples) extra = std::max(extra, sample.id + 1);
  std::vector<Sample> samples = problem.samples;
  samples.push_back({extra, *rc::gen::inRange<std::int64_t>(1, 1 << 18)});
  group.ids.insert(group.ids.begin() + *rc::gen::inRange<std::size_t>(0, group.ids.size() + 1),
                   extra);
  const GpuTimeOptions options{.max_seq_len_per_rank = problem.options.max_seq_len_per_rank};
  const absl::StatusOr<ScheduleTime> slower = MeasureScheduleTime(samples, after, profile, options);
  // `before` leaves the extra sample out: measure it against the samples it holds.
  std::vector<Sample> held;
  for (const CpGroupIds& g : chosen.groups) {
    for (const SampleId id : g.ids) {
      for (const Sample& sample : problem.samples) {
        if (sample.id == id) held.push_back(sample);
      }
    }
  }
  const absl::StatusOr<ScheduleTime> faster = MeasureScheduleTime(held, before, profile, options);
  RC_ASSERT(slower.ok() && faster.ok());
  RC_ASSERT(slower->step_seconds >= faster->step_seconds);
}

}  // namespace
}  // namespace dcpsched::properties::gpu_time_properties
