// Checks shared by the cost-aware scheduler's properties
// (properties/cost_aware*_properties.cc): the planner run alone, and what
// every plan it makes must keep. The checks RC_ASSERT, so they run inside a
// RapidCheck property.

#ifndef DCPSCHED_PROPERTIES_COST_AWARE_PLAN_CHECKS_H_
#define DCPSCHED_PROPERTIES_COST_AWARE_PLAN_CHECKS_H_

#include "absl/status/statusor.h"
#include "core/cost_aware.h"
#include "core/cost_aware_plan.h"
#include "core/cost_profile.h"
#include "core/sample_costs.h"
#include "core/types.h"

namespace dcpsched::properties {

// ScheduleCostAware without packing-aware's schedule to fall back on: what
// the planner alone returns.
absl::StatusOr<CostAwareResult> SchedulePlannerAlone(const DynamicCpProblem& problem,
                                                     const CostProfile& profile);

// `plan` (of `problem` under `profile`, planned with `costs`) has a number
// of microbatches that is a multiple of vpp_group, its schedule keeps every
// invariant the checker knows but the work cap (5), its step_seconds is the
// step time MeasureScheduleTime measures, and its microbatches come slowest
// first.
void CheckPlan(const DynamicCpProblem& problem, const CostProfile& profile,
               const SampleCosts& costs, const Plan& plan);

}  // namespace dcpsched::properties

#endif  // DCPSCHED_PROPERTIES_COST_AWARE_PLAN_CHECKS_H_
