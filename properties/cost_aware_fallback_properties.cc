// Properties of the cost-aware scheduler's fallback over microbatch counts
// (core/cost_aware_fallback.h): the balanced spread puts every sample once,
// longest first, each on the microbatch that was lightest when it came, and
// the other puts the longest each alone and the rest together; the
// fallback's plan keeps every invariant but the work cap (5) at a count
// that is a multiple of vpp_group; it is exactly the first fastest plan over
// the counts and spreads the header names (computed here from the batch, not
// from the fallback's code), and none where none of them is a multiple; and
// the scheduler returns a schedule wherever the fallback finds one.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/checker.h"
#include "core/compact_schedule.h"
#include "core/cost_aware.h"
#include "core/cost_aware_fallback.h"
#include "core/cost_aware_plan.h"
#include "core/cost_profile.h"
#include "core/gpu_time.h"
#include "core/sample_costs.h"
#include "core/types.h"
#include "properties/cost_aware_plan_checks.h"
#include "properties/generators.h"
#include "properties/profile_generators.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"

namespace dcpsched::properties::cost_aware_fallback_properties {
namespace {

DynamicCpProblem AnyProblem() {
  return *rc::gen::arbitrary<bool>() ? *GenCountBoundProblem() : *GenValidProblem();
}

std::int64_t Len(const SampleCosts& costs, std::size_t i) { return costs.sample(i).len; }

// `spread` holds `count` microbatches, none empty, each sample of `costs`
// once, each microbatch's samples longest first (ties by index).
void CheckSpread(const SampleCosts& costs, std::int64_t count,
                 const std::vector<std::vector<std::size_t>>& spread) {
  RC_ASSERT(static_cast<std::int64_t>(spread.size()) == count);
  std::vector<int> seen(costs.sample_count(), 0);
  for (const std::vector<std::size_t>& members : spread) {
    RC_ASSERT(!members.empty());
    for (std::size_t p = 0; p < members.size(); ++p) {
      RC_ASSERT(members[p] < costs.sample_count());
      ++seen[members[p]];
      if (p > 0) {
        const std::size_t a = members[p - 1];
        const std::size_t b = members[p];
        RC_ASSERT(Len(costs, a) > Len(costs, b) || (Len(costs, a) == Len(costs, b) && a < b));
      }
    }
  }
  for (const int times : seen) RC_ASSERT(times == 1);
}

RC_GTEST_PROP(CostAwareFallbackProperties,
              SpreadOverMicrobatchesPutsEachSampleOnceLongestFirstOnTheLightest, ()) {
  const DynamicCpProblem problem = AnyProblem();
  RC_PRE(!problem.samples.empty());
  const CostProfile profile = ShippedProfile();
  const SampleCosts costs(problem.samples, problem.options, profile);
  const std::int64_t count =
      *rc::gen::inRange<std::int64_t>(1, static_cast<std::int64_t>(problem.samples.size()) + 1);
  const std::vector<std::vector<std::size_t>> spread = SpreadOverMicrobatches(costs, count);
  // No more microbatches than samples: the lightest is empty until each has
  // one.
  CheckSpread(costs, count, spread);
  std::vector<std::int64_t> tokens;
  for (const std::vector<std::size_t>& members : spread) {
    std::int64_t sum = 0;
    for (const std::size_t i : members) sum += Len(costs, i);
    tokens.push_back(sum);
  }
  // Each microbatch's last sample came when it was the lightest: without
  // that sample it holds no more than any other holds in the end.
  const std::int64_t lightest = *std::min_element(tokens.begin(), tokens.end());
  for (std::size_t m = 0; m < spread.size(); ++m) {
    RC_ASSERT(tokens[m] - Len(costs, spread[m].back()) <= lightest);
  }
}

RC_GTEST_PROP(CostAwareFallbackProperties, SpreadLongestAlonePutsTheLongestEachAlone, ()) {
  const DynamicCpProblem problem = AnyProblem();
  RC_PRE(!problem.samples.empty());
  const CostProfile profile = ShippedProfile();
  const SampleCosts costs(problem.samples, problem.options, profile);
  const std::int64_t count =
      *rc::gen::inRange<std::int64_t>(1, static_cast<std::int64_t>(problem.samples.size()) + 1);
  const std::vector<std::vector<std::size_t>> spread = SpreadLongestAlone(costs, count);
  CheckSpread(costs, count, spread);
  // From the second on, one sample each, in order, none shorter than (or,
  // on a tie, after) any sample of the first.
  for (std::size_t m = 1; m < spread.size(); ++m) {
    RC_ASSERT(spread[m].size() == 1);
    const std::size_t alone = spread[m][0];
    if (m > 1) {
      const std::size_t before = spread[m - 1][0];
      RC_ASSERT(Len(costs, before) > Len(costs, alone) ||
                (Len(costs, before) == Len(costs, alone) && before < alone));
    }
    const std::size_t first = spread[0][0];
    RC_ASSERT(Len(costs, alone) > Len(costs, first) ||
              (Len(costs, alone) == Len(costs, first) && alone < first));
  }
}

RC_GTEST_PROP(CostAwareFallbackProperties,
              PlanOverMicrobatchCountsKeepsEveryInvariantButTheWorkCap, ()) {
  const DynamicCpProblem problem = AnyProblem();
  const CostProfile profile = AnyProfile();
  SampleCosts costs(problem.samples, problem.options, profile);
  const std::optional<Plan> plan = PlanOverMicrobatchCounts(costs);
  RC_TAG(plan.has_value() ? "a plan" : "none");
  if (plan.has_value()) CheckPlan(problem, profile, costs, *plan);
}

// The counts the header names, from the batch alone: multiples of
// vpp_group from the number of samples down to the fewest the token budget
// allows, rounded up, every one where they are fewer than 33 multiples,
// else every sixteenth of the distance. The fallback's plan is the first
// fastest of them (from the most microbatches down) whose count stays a
// multiple, or none where none does.
RC_GTEST_PROP(CostAwareFallbackProperties, PlanOverMicrobatchCountsIsTheFastestOverTheCounts,
              ()) {
  const DynamicCpProblem problem = AnyProblem();
  const CostProfile profile = AnyProfile();
  const std::int64_t multiple = MicrobatchCountMultiple(problem.options);
  std::int64_t tokens = 0;
  for (const Sample& sample : problem.samples) tokens += sample.len;
  const std::int64_t capacity =
      problem.options.total_gpus * problem.options.max_seq_len_per_rank;
  std::int64_t fewest = 1;
  while (fewest * capacity < tokens) ++fewest;
  std::int64_t lowest = 1;  // in multiples of vpp_group
  while (lowest * multiple < fewest) ++lowest;
  const std::int64_t highest = static_cast<std::int64_t>(problem.samples.size()) / multiple;
  std::vector<std::int64_t> counts;
  const std::int64_t distance = highest - lowest;
  const std::int64_t stride = distance < 32 ? 1 : distance / 16;
  for (std::int64_t m = highest; m >= lowest; m -= stride) counts.push_back(m * multiple);
  SampleCosts costs(problem.samples, problem.options, profile);
  std::optional<Plan> fastest;
  for (const std::int64_t count : counts) {
    for (const auto spread : {SpreadOverMicrobatches, SpreadLongestAlone}) {
      Plan plan = PlanForPartition(costs, spread(costs, count));
      if (static_cast<std::int64_t>(plan.microbatches.size()) % multiple != 0) continue;
      if (!fastest.has_value() || plan.step_seconds < fastest->step_seconds) {
        fastest = std::move(plan);
      }
    }
  }
  const std::optional<Plan> plan = PlanOverMicrobatchCounts(costs);
  RC_TAG(counts.empty()        ? "no count"
         : !fastest.has_value() ? "none aligned"
         : distance >= 32       ? "a plan, strided counts"
                                : "a plan");
  RC_ASSERT(plan.has_value() == fastest.has_value());
  if (!plan.has_value()) return;
  RC_ASSERT(plan->step_seconds == fastest->step_seconds);
  RC_ASSERT(PlanToCompact(costs, *plan) == PlanToCompact(costs, *fastest));
}

// A problem where the targets' plans may all end at one sample per
// microbatch and a count that is no multiple of vpp_group: G that is not a
// power of two, a budget of a few tokens, max_num_seqs 1, a VPP group of 2
// to 4 and few samples.
rc::Gen<DynamicCpProblem> GenFallbackProneProblem() {
  return rc::gen::exec([] {
    DynamicCpProblem problem;
    problem.options.total_gpus = *rc::gen::element<std::int64_t>(6, 10, 10, 10, 12, 14);
    problem.options.max_seq_len_per_rank = *rc::gen::inRange<std::int64_t>(1, 9);
    problem.options.vpp_group = *rc::gen::inRange<std::int64_t>(2, 5);
    problem.options.max_num_seqs = 1;
    AddSamplesThatFitGRanks(problem, *rc::gen::inRange(static_cast<int>(*problem.options.vpp_group), 13));
    return problem;
  });
}

// Wherever the fallback finds a plan, the scheduler (its planner alone, so
// packing-aware's schedule cannot stand in) returns a schedule.
RC_GTEST_PROP(CostAwareFallbackProperties, TheSchedulerSchedulesWhereTheFallbackDoes, ()) {
  const DynamicCpProblem problem =
      *rc::gen::inRange(0, 4) > 0 ? *GenFallbackProneProblem() : AnyProblem();
  const CostProfile profile = ShippedProfile();
  SampleCosts costs(problem.samples, problem.options, profile);
  const std::optional<Plan> fallback = PlanOverMicrobatchCounts(costs);
  const absl::StatusOr<CostAwareResult> result =
      SchedulePlannerAlone(problem, profile);
  RC_TAG(!fallback.has_value() ? "no fallback plan"
         : result.ok()          ? "scheduled"
                                : "refused");
  if (!fallback.has_value()) return;
  RC_ASSERT(result.ok());
}

}  // namespace
}  // namespace dcpsched::properties::cost_aware_fallback_properties
