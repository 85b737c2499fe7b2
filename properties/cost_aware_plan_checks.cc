#include "properties/cost_aware_plan_checks.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/checker.h"
#include "core/compact_schedule.h"
#include "core/cost_aware.h"
#include "core/cost_aware_plan.h"
#include "core/cost_model.h"
#include "core/cost_profile.h"
#include "core/gpu_time.h"
#include "core/sample_costs.h"
#include "core/types.h"
#include "properties/profile_generators.h"
#include "rapidcheck.h"

namespace dcpsched::properties {
namespace {

// Relative slack for floating-point sums that agree in exact arithmetic.
constexpr double kRelativeSlack = 1e-9;

}  // namespace

void AddSamplesThatFitGRanks(DynamicCpProblem& problem, int count) {
  std::int64_t widest = 1;
  while (widest * 2 <= problem.options.total_gpus) widest *= 2;
  const std::int64_t longest = widest * problem.options.max_seq_len_per_rank;
  for (int i = 0; i < count; ++i) {
    problem.samples.push_back({i, *rc::gen::inRange<std::int64_t>(1, longest + 1)});
  }
}

rc::Gen<DynamicCpProblem> GenCountBoundProblem() {
  return rc::gen::exec([] {
    DynamicCpProblem problem;
    problem.options.total_gpus = *rc::gen::inRange<std::int64_t>(1, 17);
    problem.options.max_seq_len_per_rank =
        *rc::gen::element<std::int64_t>(1, 2, 5, 8, 64, 512);
    if (*rc::gen::arbitrary<bool>()) {
      problem.options.vpp_group = *rc::gen::inRange<std::int64_t>(2, 5);
    }
    if (*rc::gen::arbitrary<bool>()) {
      problem.options.max_num_seqs = *rc::gen::inRange<std::int64_t>(1, 3);
    }
    AddSamplesThatFitGRanks(problem, *rc::gen::inRange(1, 41));
    return problem;
  });
}

CostProfile AnyProfile() {
  return *rc::gen::arbitrary<bool>() ? *GenCostProfile() : ShippedProfile();
}

double GenTarget(SampleCosts& costs) {
  const int kind = *rc::gen::inRange(0, 8);
  if (kind < 2) return std::numeric_limits<double>::infinity();
  const std::size_t n = costs.sample_count();
  if (kind < 4 && n > 0) {
    // Exactly one sample's seconds alone, or two samples' together, at a
    // size both may use: the planner's comparisons with the target tie.
    const std::size_t i = *rc::gen::inRange<std::size_t>(0, n);
    const std::size_t j = *rc::gen::inRange<std::size_t>(0, n);
    const std::size_t k = *rc::gen::inRange<std::size_t>(
        std::max(costs.first_size(i), costs.first_size(j)), costs.sizes().size());
    if (kind == 2) return costs.Alone(i, k);
    const std::int64_t size = costs.sizes()[k];
    return costs.RankSeconds(
        TokensPerRank(costs.sample(i).len, size) + TokensPerRank(costs.sample(j).len, size),
        costs.Attention(i, k) + costs.Attention(j, k));
  }
  double fastest = std::numeric_limits<double>::infinity();
  double slowest = 0.0;
  for (std::size_t i = 0; i < costs.sample_count(); ++i) {
    for (std::size_t k = costs.first_size(i); k < costs.sizes().size(); ++k) {
      fastest = std::min(fastest, costs.Alone(i, k));
      slowest = std::max(slowest, costs.Alone(i, k));
    }
  }
  const double position = *rc::gen::inRange(0, 1001) / 1000.0;
  return std::exp(std::log(fastest / 10) + position * std::log(100 * slowest / fastest));
}

MicrobatchContents ContentsOf(const CompactSchedule& schedule) {
  MicrobatchContents contents;
  for (const CompactMicrobatch& microbatch : schedule.microbatches) {
    auto& groups = contents.emplace_back();
    for (const CpGroupIds& group : microbatch.groups) groups.emplace_back(group.size, group.ids);
    std::sort(groups.begin(), groups.end());
  }
  std::sort(contents.begin(), contents.end());
  return contents;
}

absl::StatusOr<CostAwareResult> SchedulePlannerAlone(const DynamicCpProblem& problem,
                                                     const CostProfile& profile) {
  CostAwareOptions planner_alone{.keep_packing_aware_if_faster = false};
  planner_alone.runtime.path = RuntimePath::kLegacy;
  return ScheduleCostAware(problem.samples, problem.options, profile, planner_alone);
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
