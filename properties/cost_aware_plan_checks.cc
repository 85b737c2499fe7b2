#include "properties/cost_aware_plan_checks.h"

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/checker.h"
#include "core/compact_schedule.h"
#include "core/cost_aware.h"
#include "core/cost_aware_plan.h"
#include "core/cost_profile.h"
#include "core/gpu_time.h"
#include "core/sample_costs.h"
#include "core/types.h"
#include "rapidcheck.h"

namespace dcpsched::properties {
namespace {

// Relative slack for floating-point sums that agree in exact arithmetic.
constexpr double kRelativeSlack = 1e-9;

}  // namespace

absl::StatusOr<CostAwareResult> SchedulePlannerAlone(const DynamicCpProblem& problem,
                                                     const CostProfile& profile) {
  return ScheduleCostAware(problem.samples, problem.options, profile,
                           CostAwareOptions{.keep_packing_aware_if_faster = false});
}

void CheckPlan(const DynamicCpProblem& problem, const CostProfile& profile,
               const SampleCosts& costs, const Plan& plan) {
  RC_ASSERT(static_cast<std::int64_t>(plan.microbatches.size()) %
                MicrobatchCountMultiple(problem.options) ==
            0);
  const CompactSchedule schedule = PlanToCompact(costs, plan);
  for (const Violation& violation :
       FindViolations(problem.samples, schedule, problem.options)) {
    if (violation.invariant == Invariant::kWorkCap) continue;
    RC_FAIL(absl::StrCat("invariant ", static_cast<int>(violation.invariant), " (",
                         InvariantName(violation.invariant), "): ", violation.message));
  }
  const absl::StatusOr<ScheduleTime> time =
      MeasureScheduleTime(problem.samples, schedule, profile,
                          {.max_seq_len_per_rank = problem.options.max_seq_len_per_rank});
  RC_ASSERT(time.ok());
  RC_ASSERT(std::abs(plan.step_seconds - time->step_seconds) <=
            kRelativeSlack * time->step_seconds);
  for (std::size_t m = 1; m < time->microbatches.size(); ++m) {
    RC_ASSERT(time->microbatches[m - 1].max_seconds >=
              time->microbatches[m].max_seconds * (1.0 - kRelativeSlack));
  }
}

}  // namespace dcpsched::properties
