// Properties of the cost-aware planner (core/cost_aware_plan.h), plan by
// plan, not only the one the scheduler keeps: at any target and any
// smallest size, PlanForTarget's plan keeps every invariant but the work
// cap (5) at a multiple of vpp_group, says its step time as
// MeasureScheduleTime measures it, and lists its microbatches slowest
// first; PlanForPartition does the same for any partition of the samples,
// with no microbatch holding samples of two parts. And the scheduler
// (core/cost_aware.h), its planner alone, is never slower than the plans
// its header says it always tries (+infinity, the first coarse target, and
// on small batches every sample on wider groups), and returns exactly the
// plan that the search its header describes, run here from PlanForTarget,
// keeps.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/checker.h"
#include "core/compact_schedule.h"
#include "core/cost_aware.h"
#include "core/cost_aware_fallback.h"
#include "core/cost_aware_plan.h"
#include "core/cost_aware_targets.h"
#include "core/cost_profile.h"
#include "core/gpu_time.h"
#include "core/sample_costs.h"
#include "core/types.h"
#include "properties/cost_aware_plan_checks.h"
#include "properties/generators.h"
#include "properties/profile_generators.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"

namespace dcpsched::properties::cost_aware_plan_properties {
namespace {

// Relative slack for floating-point sums that agree in exact arithmetic.
constexpr double kRelativeSlack = 1e-9;

RC_GTEST_PROP(CostAwarePlanProperties, PlanForTargetKeepsEveryInvariantButTheWorkCap, ()) {
  const DynamicCpProblem problem = *GenValidProblem();
  RC_PRE(!problem.samples.empty());
  const CostProfile profile = AnyProfile();
  SampleCosts costs(problem.samples, problem.options, profile);
  const double target = GenTarget(costs);
  const std::size_t smallest = static_cast<std::size_t>(
      *rc::gen::inRange<int>(0, static_cast<int>(costs.sizes().size())));
  const absl::StatusOr<Plan> plan = PlanForTarget(costs, target, smallest);
  RC_TAG(plan.ok() ? "a plan" : "no multiple of vpp_group");
  if (!plan.ok()) {
    RC_ASSERT(plan.status().code() == absl::StatusCode::kFailedPrecondition);
    return;
  }
  CheckPlan(problem, profile, costs, *plan);
  // No sample on fewer ranks than the smallest size asked for, where it
  // could use that size.
  const CompactSchedule schedule = PlanToCompact(costs, *plan);
  std::map<std::int64_t, std::int64_t> size_of;
  for (const CompactMicrobatch& microbatch : schedule.microbatches) {
    for (const CpGroupIds& group : microbatch.groups) {
      for (const std::int64_t id : group.ids) size_of[id] = group.size;
    }
  }
  for (std::size_t i = 0; i < costs.sample_count(); ++i) {
    RC_ASSERT(size_of.at(costs.sample(i).id) >=
              costs.sizes()[std::max(smallest, costs.first_size(i))]);
  }
}

RC_GTEST_PROP(CostAwarePlanProperties, PlanForPartitionKeepsEveryInvariantAndThePartition,
              ()) {
  const DynamicCpProblem problem = *GenValidProblem();
  RC_PRE(!problem.samples.empty());
  const CostProfile profile = AnyProfile();
  SampleCosts costs(problem.samples, problem.options, profile);
  const int parts = *rc::gen::inRange(1, static_cast<int>(problem.samples.size()) + 1);
  std::vector<std::vector<std::size_t>> members(static_cast<std::size_t>(parts));
  std::vector<int> part_of(problem.samples.size());
  for (std::size_t i = 0; i < problem.samples.size(); ++i) {
    part_of[i] = i < members.size() ? static_cast<int>(i) : *rc::gen::inRange(0, parts);
    members[static_cast<std::size_t>(part_of[i])].push_back(i);
  }
  const Plan plan = PlanForPartition(costs, members);
  // PlanForPartition promises no VPP multiple: check the rest.
  DynamicCpProblem unaligned = problem;
  unaligned.options.vpp_group.reset();
  CheckPlan(unaligned, profile, costs, plan);
  RC_ASSERT(plan.microbatches.size() >= members.size());
  std::map<std::int64_t, int> part_by_id;
  for (std::size_t i = 0; i < problem.samples.size(); ++i) {
    part_by_id[problem.samples[i].id] = part_of[i];
  }
  for (const CompactMicrobatch& microbatch : PlanToCompact(costs, plan).microbatches) {
    const int part = part_by_id.at(microbatch.groups.front().ids.front());
    for (const CpGroupIds& group : microbatch.groups) {
      for (const std::int64_t id : group.ids) RC_ASSERT(part_by_id.at(id) == part);
    }
  }
}

// The plans cost_aware.h says the scheduler always tries.
RC_GTEST_PROP(CostAwarePlanProperties, TheSchedulerIsNeverSlowerThanThePlansItAlwaysTries,
              ()) {
  const DynamicCpProblem problem = *GenValidProblem();
  RC_PRE(!problem.samples.empty());
  const CostProfile profile = AnyProfile();
  const absl::StatusOr<CostAwareResult> result =
      SchedulePlannerAlone(problem, profile);
  SampleCosts costs(problem.samples, problem.options, profile);
  double slowest_alone = 0.0;
  for (std::size_t i = 0; i < costs.sample_count(); ++i) {
    slowest_alone = std::max(slowest_alone, costs.Alone(i, costs.first_size(i)));
  }
  const double infinity = std::numeric_limits<double>::infinity();
  std::vector<absl::StatusOr<Plan>> tried;
  tried.push_back(PlanForTarget(costs, infinity));
  tried.push_back(PlanForTarget(costs, slowest_alone * 0.8));
  if (costs.sample_count() * costs.sizes().size() <= 1024) {
    for (std::size_t smallest = 1; smallest < costs.sizes().size(); ++smallest) {
      tried.push_back(PlanForTarget(costs, infinity, smallest));
    }
  }
  for (const absl::StatusOr<Plan>& plan : tried) {
    if (!plan.ok()) continue;
    RC_ASSERT(result.ok());
    RC_ASSERT(result->step_seconds <= plan->step_seconds * (1.0 + kRelativeSlack));
  }
}

// The search of core/cost_aware.h, step by step, from PlanForTarget alone:
// targets +infinity, then 0.8, 0.8^2, ... times the slowest sample alone at
// its smallest size, at most 24, until the first below the longest sample's
// fastest time alone (the first longest on ties), stopping at the first
// target that finds nothing faster once a plan exists; on batches of at
// most 1024 samples x sizes, +infinity with every sample on at least each
// wider size; then, where the best came from a finite target T, T x
// 0.8^-0.5 and T x 0.8^0.5. A plan replaces the best only when strictly
// faster. Without a plan, the fallback's (core/cost_aware_fallback.h), and
// without that, the last target's error.
struct SearchModel {
  std::optional<Plan> best;
  double best_target = 0.0;
  absl::Status last_error;

  void Try(SampleCosts& costs, double target, std::size_t smallest = 0) {
    absl::StatusOr<Plan> plan = PlanForTarget(costs, target, smallest);
    if (!plan.ok()) {
      last_error = plan.status();
      return;
    }
    if (best.has_value() && !(plan->step_seconds < best->step_seconds)) return;
    best = *std::move(plan);
    best_target = target;
  }
};

// The plan the search keeps, or the last target's error where none.
absl::StatusOr<Plan> ModelSearch(SampleCosts& costs) {
  constexpr double kRatio = 0.8;
  const double infinity = std::numeric_limits<double>::infinity();
  double top = 0.0;
  std::size_t longest = 0;
  for (std::size_t i = 0; i < costs.sample_count(); ++i) {
    top = std::max(top, costs.Alone(i, costs.first_size(i)));
    if (costs.sample(i).len > costs.sample(longest).len) longest = i;
  }
  double bottom = infinity;
  for (std::size_t k = costs.first_size(longest); k < costs.sizes().size(); ++k) {
    bottom = std::min(bottom, costs.Alone(longest, k));
  }
  std::vector<double> targets = {infinity};
  double target = top;
  for (int coarse = 0; coarse < 24; ++coarse) {
    target *= kRatio;
    targets.push_back(target);
    if (target < bottom) break;
  }
  SearchModel search;
  for (const double t : targets) {
    const std::optional<double> before =
        search.best.has_value() ? std::optional<double>(search.best->step_seconds)
                                : std::nullopt;
    search.Try(costs, t);
    if (before.has_value() && search.best->step_seconds >= *before) break;
  }
  if (costs.sample_count() * costs.sizes().size() <= 1024) {
    for (std::size_t smallest = 1; smallest < costs.sizes().size(); ++smallest) {
      search.Try(costs, infinity, smallest);
    }
  }
  if (search.best.has_value() && std::isfinite(search.best_target)) {
    const double center = search.best_target;
    search.Try(costs, center * std::pow(kRatio, -0.5));
    search.Try(costs, center * std::pow(kRatio, 0.5));
  }
  if (search.best.has_value()) return *std::move(search.best);
  std::optional<Plan> fallback = PlanOverMicrobatchCounts(costs);
  if (fallback.has_value()) return *std::move(fallback);
  return search.last_error;
}

// CoarseTargets(top, bottom) is +infinity, then top x kTargetRatio and each
// next the one before times the ratio, all but the last at or above
// `bottom`, the last below it unless there are kMaxCoarseTargets finite
// ones. `bottom` is drawn as a term of the series itself half the time (the
// last target then ties it), as far as 40 terms down (past the bound).
RC_GTEST_PROP(CostAwarePlanProperties, CoarseTargetsDescendToTheFirstBelowTheBottom, ()) {
  const double top = std::pow(10.0, *rc::gen::inRange(-60, 31) / 10.0);
  double bottom = top;
  const int terms = *rc::gen::inRange(0, 41);
  for (int k = 0; k < terms; ++k) bottom *= kTargetRatio;
  if (*rc::gen::arbitrary<bool>()) bottom *= std::pow(10.0, *rc::gen::inRange(-10, 11) / 10.0);
  const std::vector<double> targets = CoarseTargets(top, bottom);
  RC_ASSERT(targets.size() >= 2);
  RC_ASSERT(targets[0] == std::numeric_limits<double>::infinity());
  const std::size_t finite = targets.size() - 1;
  RC_ASSERT(finite <= static_cast<std::size_t>(kMaxCoarseTargets));
  RC_ASSERT(targets[1] == top * kTargetRatio);
  for (std::size_t t = 2; t < targets.size(); ++t) {
    RC_ASSERT(targets[t] == targets[t - 1] * kTargetRatio);
  }
  for (std::size_t t = 1; t + 1 < targets.size(); ++t) RC_ASSERT(targets[t] >= bottom);
  RC_TAG(finite == static_cast<std::size_t>(kMaxCoarseTargets) ? "at the bound"
         : std::find(targets.begin(), targets.end(), bottom) != targets.end()
             ? "a target ties the bottom"
             : "ends below the bottom");
  RC_ASSERT(targets.back() < bottom || finite == static_cast<std::size_t>(kMaxCoarseTargets));
}

// A batch at the edge of the widening sweep (1024 samples x runtime sizes):
// G = 2, 8, 32 or 64 (2, 4, 6 or 7 sizes) and a sample count just below,
// at, just above or twice the threshold.
rc::Gen<DynamicCpProblem> GenWideningEdgeProblem() {
  return rc::gen::exec([] {
    DynamicCpProblem problem;
    const int log2_gpus = *rc::gen::element(1, 3, 5, 6);
    problem.options.total_gpus = std::int64_t{1} << log2_gpus;
    problem.options.max_seq_len_per_rank = 4096;
    const int sizes = log2_gpus + 1;
    const int edge = 1024 / sizes;
    const int count = *rc::gen::element(edge - 1, edge, edge + 1, 2 * edge);
    const std::int64_t longest = problem.options.total_gpus * 4096;
    for (int i = 0; i < count; ++i) {
      problem.samples.push_back(
          {i, std::min<std::int64_t>(longest, *rc::gen::inRange<std::int64_t>(1, 16384))});
    }
    return problem;
  });
}

RC_GTEST_PROP(CostAwarePlanProperties, TheSchedulerKeepsTheFastestPlanOfTheSearchItDescribes,
              ()) {
  const int source = *rc::gen::inRange(0, 8);
  const DynamicCpProblem problem = source == 0   ? *GenWideningEdgeProblem()
                                   : source <= 2 ? *GenCountBoundProblem()
                                                 : *GenValidProblem();
  RC_PRE(!problem.samples.empty());
  const CostProfile profile = AnyProfile();
  const absl::StatusOr<CostAwareResult> result =
      SchedulePlannerAlone(problem, profile);
  SampleCosts costs(problem.samples, problem.options, profile);
  const absl::StatusOr<Plan> plan = ModelSearch(costs);
  RC_TAG(plan.ok() ? "a plan" : "refused");
  RC_ASSERT(result.ok() == plan.ok());
  if (!plan.ok()) {
    // The refusal says why: too few samples for vpp_group, before any
    // plan, or else why the last target found no plan.
    RC_ASSERT(absl::StrContains(
        result.status().message(),
        static_cast<std::int64_t>(problem.samples.size()) <
                MicrobatchCountMultiple(problem.options)
            ? "every microbatch needs at least one sample"
            : plan.status().message()));
    return;
  }
  RC_ASSERT(result->schedule == PlanToCompact(costs, *plan));
}

}  // namespace
}  // namespace dcpsched::properties::cost_aware_plan_properties
