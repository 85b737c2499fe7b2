// Inputs and checks shared by the cost-aware scheduler's properties
// (properties/cost_aware*_properties.cc): the problems, profiles and targets
// they draw, the planner run alone, and what every plan it makes must keep.
// The draws and checks use RapidCheck, so they run inside a property.

#ifndef DCPSCHED_PROPERTIES_COST_AWARE_PLAN_CHECKS_H_
#define DCPSCHED_PROPERTIES_COST_AWARE_PLAN_CHECKS_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/compact_schedule.h"
#include "core/cost_aware.h"
#include "core/cost_aware_plan.h"
#include "core/cost_profile.h"
#include "core/sample_costs.h"
#include "core/types.h"
#include "rapidcheck.h"

namespace dcpsched::properties {

// Draws `count` samples (ids 0 to count - 1) of 1 token up to what the
// widest power-of-two group of `problem`'s G ranks holds, and adds them.
void AddSamplesThatFitGRanks(DynamicCpProblem& problem, int count);

// A small problem where the counts matter: G up to 16 (non-powers of two
// among them), a budget of 1 to 512 tokens so the batch often needs more
// than one microbatch, VPP groups of 2 to 4, max_num_seqs 1 or 2 in half of
// them, and up to 40 samples that fit G ranks.
rc::Gen<DynamicCpProblem> GenCountBoundProblem();

// Draws a profile: arbitrary (GenCostProfile) or shipped, half each.
CostProfile AnyProfile();

// Draws a target: +infinity (one in four); exactly one sample's seconds
// alone at a size, or two samples' together (one in four), where the
// planner's comparisons with the target tie; else anywhere from a tenth of
// the fastest sample of `costs` alone to ten times the slowest.
double GenTarget(SampleCosts& costs);

// ScheduleCostAware without packing-aware's schedule to fall back on, under
// the barrier (the legacy runtime, where neither the order nor the rank
// blocks change the step, so nothing is rearranged): what the planner alone
// returns at the full token budget.
absl::StatusOr<CostAwareResult> SchedulePlannerAlone(const DynamicCpProblem& problem,
                                                     const CostProfile& profile);

// A schedule's microbatches as each one's groups (size and ids), sorted,
// the microbatches sorted too: what a rearrangement of the schedule
// (core/step_arrangement.h: another order, other rank blocks) keeps.
using MicrobatchContents =
    std::vector<std::vector<std::pair<std::int64_t, std::vector<SampleId>>>>;
MicrobatchContents ContentsOf(const CompactSchedule& schedule);

// `plan` (of `problem` under `profile`, planned with `costs`) has a number
// of microbatches that is a multiple of vpp_group, its schedule keeps every
// invariant the checker knows but the work cap (5), its step_seconds is the
// step time MeasureScheduleTime measures, and its microbatches come slowest
// first.
void CheckPlan(const DynamicCpProblem& problem, const CostProfile& profile,
               const SampleCosts& costs, const Plan& plan);

}  // namespace dcpsched::properties

#endif  // DCPSCHED_PROPERTIES_COST_AWARE_PLAN_CHECKS_H_
