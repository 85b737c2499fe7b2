// Properties of the cost-aware scheduler (core/cost_aware.h): on generated
// problems (non-power-of-two G, VPP groups, max_num_seqs, large G) under
// shipped and generated profiles, its schedule keeps every invariant the
// checker knows but the work cap (5), is never slower than packing-aware's
// where that one is runnable, never faster than the bound, is the same on
// every run, and on tiny instances is never faster than the exhaustive time
// oracle's optimum (oracle/exhaustive_time_oracle.h) and within
// kOracleGapTolerance of it; it finds a schedule wherever the oracle does.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/checker.h"
#include "core/compact_schedule.h"
#include "core/cost_aware.h"
#include "core/cost_profile.h"
#include "core/gpu_time.h"
#include "core/packing_aware.h"
#include "core/types.h"
#include "oracle/exhaustive_time_oracle.h"
#include "properties/cost_aware_plan_checks.h"
#include "properties/generators.h"
#include "properties/profile_generators.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"

namespace dcpsched::properties::cost_aware_properties {
namespace {

// Relative slack for floating-point sums that agree in exact arithmetic.
constexpr double kRelativeSlack = 1e-9;
// How much slower than the exhaustive optimum cost_aware may be on the
// tiny instances (docs/cost_aware.md: measured, the worst case seen).
constexpr double kOracleGapTolerance = 2.0;

GpuTimeOptions TimeOptions(const DynamicCpProblem& problem) {
  return {.max_seq_len_per_rank = problem.options.max_seq_len_per_rank};
}

double StepSeconds(const DynamicCpProblem& problem, const CompactSchedule& schedule,
                   const CostProfile& profile) {
  const absl::StatusOr<ScheduleTime> time =
      MeasureScheduleTime(problem.samples, schedule, profile, TimeOptions(problem));
  RC_ASSERT(time.ok());
  return time->step_seconds;
}

// Schedules `problem`; asserts the result is a schedule or FailedPrecondition
// (never another error on a valid problem), and the schedule keeps every
// invariant but 5.
absl::StatusOr<CostAwareResult> ScheduleChecked(const DynamicCpProblem& problem,
                                                const CostProfile& profile) {
  absl::StatusOr<CostAwareResult> result =
      ScheduleCostAware(problem.samples, problem.options, profile);
  if (!result.ok()) {
    RC_ASSERT(result.status().code() == absl::StatusCode::kFailedPrecondition);
    return result;
  }
  for (const Violation& violation :
       FindViolations(problem.samples, result->schedule, problem.options)) {
    if (violation.invariant == Invariant::kWorkCap) continue;
    RC_FAIL(absl::StrCat("invariant ", static_cast<int>(violation.invariant), " (",
                         InvariantName(violation.invariant), "): ", violation.message));
  }
  RC_ASSERT(result->step_seconds == StepSeconds(problem, result->schedule, profile));
  return result;
}

RC_GTEST_PROP(CostAwareProperties, KeepsEveryInvariantButTheWorkCap, ()) {
  (void)ScheduleChecked(*GenValidProblem(), AnyProfile());
}

RC_GTEST_PROP(CostAwareProperties, MixedCpSizesKeepEveryInvariantButTheWorkCap, ()) {
  (void)ScheduleChecked(*GenMixedCpSizeProblem(), AnyProfile());
}

// A profile that ValidateCostProfile refuses is refused with its error,
// whatever the problem.
RC_GTEST_PROP(CostAwareProperties, RefusesAnInvalidProfileWithItsError, ()) {
  const DynamicCpProblem problem = *GenValidProblem();
  CostProfile profile = *GenCostProfile();
  MeasuredCurve& curve = **rc::gen::element(&profile.causal_attention, &profile.full_attention,
                                            &profile.non_attention);
  const std::size_t i = *rc::gen::inRange<std::size_t>(0, curve.seconds.size());
  curve.seconds[i] = *rc::gen::element(-1.0, 0.0, kMinProfileSeconds / 2,
                                       kMaxProfileSeconds * 2);
  const absl::Status invalid = ValidateCostProfile(profile);
  RC_ASSERT(invalid.code() == absl::StatusCode::kInvalidArgument);
  RC_ASSERT(ScheduleCostAware(problem.samples, problem.options, profile).status() == invalid);
}

RC_GTEST_PROP(CostAwareProperties, NeverSlowerThanRunnablePackingAware, ()) {
  const DynamicCpProblem problem = *GenValidProblem();
  RC_PRE(!problem.samples.empty());
  const CostProfile profile = AnyProfile();
  const absl::StatusOr<CompactSchedule> packing_aware =
      ScheduleDynamicCpCompact(problem.samples, problem.options);
  RC_PRE(packing_aware.ok());
  const absl::StatusOr<CostAwareResult> result = ScheduleChecked(problem, profile);
  RC_ASSERT(result.ok());
  RC_ASSERT(result->step_seconds <= StepSeconds(problem, *packing_aware, profile));
  RC_ASSERT(result->packing_aware_step_seconds.has_value());
}

// The result says whose schedule it is, truly: packing-aware's (bit for bit,
// with its time) where that is runnable and not slower, ties included; its
// own plan only where strictly faster, or where packing-aware has no
// runnable schedule, whose reason then quotes packing-aware's error.
RC_GTEST_PROP(CostAwareProperties, TheResultSaysWhoseScheduleItIs, ()) {
  const DynamicCpProblem problem = *GenValidProblem();
  RC_PRE(!problem.samples.empty());
  const CostProfile profile = AnyProfile();
  const absl::StatusOr<CostAwareResult> result = ScheduleChecked(problem, profile);
  RC_PRE(result.ok());
  const absl::StatusOr<CompactSchedule> packing_aware =
      ScheduleDynamicCpCompact(problem.samples, problem.options);
  RC_ASSERT(CostAwareSourceName(result->source) ==
            (result->source == CostAwareSource::kPlanned ? "planned" : "packing_aware"));
  if (!packing_aware.ok()) {
    RC_ASSERT(result->source == CostAwareSource::kPlanned);
    RC_ASSERT(!result->packing_aware_step_seconds.has_value());
    RC_ASSERT(absl::StartsWith(result->reason, "planned: "));
    RC_ASSERT(absl::StrContains(
        result->reason, absl::StrCat("; packing-aware has no runnable schedule here (",
                                     packing_aware.status().message(), ")")));
    return;
  }
  const double packing_seconds = StepSeconds(problem, *packing_aware, profile);
  RC_ASSERT(result->packing_aware_step_seconds.has_value());
  RC_ASSERT(*result->packing_aware_step_seconds == packing_seconds);
  // The planner alone: packing-aware's is kept exactly where the plan is
  // not strictly faster, and the reason says which case it is.
  const absl::StatusOr<CostAwareResult> planned =
      SchedulePlannerAlone(problem, profile);
  const bool plan_is_faster = planned.ok() && planned->step_seconds < packing_seconds;
  RC_ASSERT((result->source == CostAwareSource::kPlanned) == plan_is_faster);
  if (result->source == CostAwareSource::kPackingAware) {
    RC_ASSERT(result->schedule == *packing_aware);
    RC_ASSERT(result->step_seconds == packing_seconds);
    RC_ASSERT(absl::StartsWith(result->reason, "packing_aware: "));
    RC_ASSERT(absl::StrContains(result->reason, planned.ok()
                                                    ? "is not slower than the plan's"
                                                    : "no plan reached a multiple"));
  } else {
    RC_ASSERT(result->schedule == planned->schedule);
    RC_ASSERT(result->step_seconds < packing_seconds);
    RC_ASSERT(absl::StartsWith(result->reason, "planned: "));
    RC_ASSERT(absl::StrContains(result->reason, "against packing-aware's"));
  }
}

RC_GTEST_PROP(CostAwareProperties, NeverFasterThanTheBound, ()) {
  const DynamicCpProblem problem = *GenValidProblem();
  RC_PRE(!problem.samples.empty());
  const CostProfile profile = AnyProfile();
  const absl::StatusOr<CostAwareResult> result = ScheduleChecked(problem, profile);
  RC_PRE(result.ok());
  const absl::StatusOr<ScheduleTime> time =
      MeasureScheduleTime(problem.samples, result->schedule, profile, TimeOptions(problem));
  RC_ASSERT(time.ok());
  RC_ASSERT(time->step_seconds >= time->bound_seconds * (1.0 - kRelativeSlack));
}

RC_GTEST_PROP(CostAwareProperties, SameInputSameSchedule, ()) {
  const DynamicCpProblem problem = *GenValidProblem();
  const CostProfile profile = AnyProfile();
  const absl::StatusOr<CostAwareResult> first =
      ScheduleCostAware(problem.samples, problem.options, profile);
  const absl::StatusOr<CostAwareResult> second =
      ScheduleCostAware(problem.samples, problem.options, profile);
  RC_ASSERT(first.ok() == second.ok());
  if (!first.ok()) {
    RC_ASSERT(first.status() == second.status());
    return;
  }
  RC_ASSERT(first->schedule == second->schedule);
  RC_ASSERT(first->source == second->source);
  RC_ASSERT(first->reason == second->reason);
}

// The planner alone (without packing-aware's schedule to fall back on)
// keeps the invariants too: the fallback must not hide a broken plan.
RC_GTEST_PROP(CostAwareProperties, ThePlanAloneKeepsEveryInvariantButTheWorkCap, ()) {
  const DynamicCpProblem problem = *GenValidProblem();
  const CostProfile profile = AnyProfile();
  const absl::StatusOr<CostAwareResult> result =
      SchedulePlannerAlone(problem, profile);
  if (!result.ok()) {
    RC_ASSERT(result.status().code() == absl::StatusCode::kFailedPrecondition);
    return;
  }
  RC_ASSERT(result->source == CostAwareSource::kPlanned);
  for (const Violation& violation :
       FindViolations(problem.samples, result->schedule, problem.options)) {
    if (violation.invariant == Invariant::kWorkCap) continue;
    RC_FAIL(absl::StrCat("invariant ", static_cast<int>(violation.invariant), ": ",
                         violation.message));
  }
}

// `profile` with every time multiplied by 2^power: the curves' seconds
// scaled, the bandwidths divided. A power of two scales a double exactly.
CostProfile ScaledProfile(CostProfile profile, int power) {
  const double factor = std::ldexp(1.0, power);
  for (MeasuredCurve* curve :
       {&profile.causal_attention, &profile.full_attention, &profile.non_attention}) {
    for (double& seconds : curve->seconds) seconds *= factor;
  }
  if (profile.communication.has_value()) {
    profile.communication->intra_node_gb_per_s /= factor;
    profile.communication->inter_node_gb_per_s /= factor;
  }
  return profile;
}

// The scheduler compares times only with each other (its targets are
// fractions of the batch's own times), so a profile whose every time is 2^k
// times as long gives the same schedule, from the same source, in 2^k times
// the step time.
RC_GTEST_PROP(CostAwareProperties, TheScheduleDoesNotDependOnTheUnitOfTime, ()) {
  const DynamicCpProblem problem = *GenValidProblem();
  const CostProfile profile = AnyProfile();
  const int power = *rc::gen::inRange(-12, 13);
  const CostProfile scaled = ScaledProfile(profile, power);
  RC_PRE(ValidateCostProfile(scaled).ok());
  const absl::StatusOr<CostAwareResult> result =
      ScheduleCostAware(problem.samples, problem.options, profile);
  const absl::StatusOr<CostAwareResult> scaled_result =
      ScheduleCostAware(problem.samples, problem.options, scaled);
  RC_ASSERT(result.ok() == scaled_result.ok());
  if (!result.ok()) return;
  RC_ASSERT(scaled_result->schedule == result->schedule);
  RC_ASSERT(scaled_result->source == result->source);
  RC_ASSERT(scaled_result->step_seconds == std::ldexp(result->step_seconds, power));
}

// Lognormal batches on G that is not a power of two, with VPP: where
// packing-aware is refused most often, cost_aware still schedules them.
RC_GTEST_PROP(CostAwareProperties, SchedulesLognormalBatchesAtNonPowerOfTwoG, ()) {
  DynamicCpProblem problem;
  problem.options.total_gpus = *rc::gen::element<std::int64_t>(6, 10, 12, 14, 24, 48);
  problem.options.max_seq_len_per_rank = *rc::gen::element<std::int64_t>(1024, 2048, 4096);
  problem.options.vpp_group = *rc::gen::inRange<std::int64_t>(1, 5);
  const int count = *rc::gen::inRange(4 * static_cast<int>(*problem.options.vpp_group), 200);
  const std::int64_t longest = problem.options.max_seq_len_per_rank * 4;
  for (int i = 0; i < count; ++i) {
    // Roughly lognormal: a power of two times a uniform factor.
    const std::int64_t len = std::min<std::int64_t>(
        longest, (std::int64_t{1} << *rc::gen::inRange(6, 14)) +
                     *rc::gen::inRange<std::int64_t>(0, 1024));
    problem.samples.push_back({i, len});
  }
  const absl::StatusOr<CostAwareResult> result = ScheduleChecked(problem, ShippedProfile());
  RC_ASSERT(result.ok());
}

// A tiny problem for the exhaustive time oracle: G from 1 to 8 (3, 5, 6 and
// 7 among them), one to five samples of lengths needing CP sizes 1 to 8,
// sometimes min_cp_size 2, a cap or a VPP group of 2 or 3.
rc::Gen<DynamicCpProblem> GenTinyProblem() {
  return rc::gen::exec([] {
    DynamicCpProblem problem;
    problem.options.total_gpus =
        *rc::gen::inRange<std::int64_t>(1, oracle::kTimeOracleMaxGpus + 1);
    const std::int64_t gpus = problem.options.total_gpus;
    problem.options.max_seq_len_per_rank = *rc::gen::element<std::int64_t>(64, 512, 4096);
    if (gpus >= 2 && *rc::gen::inRange(0, 4) == 0) problem.options.min_cp_size = 2;
    if (*rc::gen::inRange(0, 4) == 0) {
      problem.options.max_num_seqs = *rc::gen::inRange<std::int64_t>(1, 4);
    }
    if (*rc::gen::inRange(0, 3) == 0) {
      problem.options.vpp_group = *rc::gen::inRange<std::int64_t>(2, 4);
    }
    const int count = *rc::gen::inRange(1, static_cast<int>(oracle::kTimeOracleMaxSamples) + 1);
    // Every sample fits G ranks: at most the largest power of two <= G
    // times the budget.
    std::int64_t widest = 1;
    while (widest * 2 <= gpus) widest *= 2;
    const std::int64_t longest = widest * problem.options.max_seq_len_per_rank;
    for (int i = 0; i < count; ++i) {
      problem.samples.push_back({i, *rc::gen::inRange<std::int64_t>(1, longest + 1)});
    }
    return problem;
  });
}

// Under any profile: a schedule wherever the oracle finds one, none where it
// finds none, and never faster than the optimum.
RC_GTEST_PROP(CostAwareProperties, SchedulesWhereTheExhaustiveOracleDoesAndNeverBeatsIt, ()) {
  const DynamicCpProblem problem = *GenTinyProblem();
  const CostProfile profile = AnyProfile();
  const absl::StatusOr<oracle::TimeOptimum> optimum = oracle::ExhaustiveFastestSchedule(
      problem.samples, problem.options, ToReference(profile));
  const absl::StatusOr<CostAwareResult> result = ScheduleChecked(problem, profile);
  if (!optimum.ok()) {
    RC_ASSERT(optimum.status().code() == absl::StatusCode::kNotFound);
    RC_ASSERT(!result.ok());
    return;
  }
  RC_ASSERT(result.ok());
  RC_ASSERT(result->step_seconds >= optimum->step_seconds * (1.0 - kRelativeSlack));
}

// Under the shipped (measured, monotone) profiles: within
// kOracleGapTolerance of the optimum. Generated profiles, whose curves may
// fall as sizes grow, are left out here: on them the gap is unbounded
// (docs/cost_aware.md).
RC_GTEST_PROP(CostAwareProperties, WithinToleranceOfTheExhaustiveOptimum, ()) {
  const DynamicCpProblem problem = *GenTinyProblem();
  const CostProfile profile = ShippedProfile();
  const absl::StatusOr<oracle::TimeOptimum> optimum = oracle::ExhaustiveFastestSchedule(
      problem.samples, problem.options, ToReference(profile));
  RC_PRE(optimum.ok() && !problem.samples.empty());
  const absl::StatusOr<CostAwareResult> result = ScheduleChecked(problem, profile);
  RC_ASSERT(result.ok());
  const double gap = result->step_seconds / optimum->step_seconds - 1.0;
  RC_TAG(gap <= kRelativeSlack ? "optimal"
         : gap <= 0.05         ? "within 5%"
         : gap <= 0.2          ? "within 20%"
         : gap <= 0.5          ? "within 50%"
                               : "more than 50% slower");
  RC_ASSERT(result->step_seconds <= optimum->step_seconds * kOracleGapTolerance);
}

}  // namespace
}  // namespace dcpsched::properties::cost_aware_properties
