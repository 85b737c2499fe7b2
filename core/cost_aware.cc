#include "core/cost_aware.h"

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
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/compact_schedule.h"
#include "core/cost_aware_fallback.h"
#include "core/cost_aware_plan.h"
#include "core/cost_aware_targets.h"
#include "core/cost_profile.h"
#include "core/gpu_time.h"
#include "core/packing_aware.h"
#include "core/runtime_groups.h"
#include "core/sample_costs.h"
#include "core/types.h"
#include "core/validate.h"

namespace dcpsched {
namespace {

// The descent stops at the first target that finds nothing faster: below
// the best target, samples only widen further. (Two in a row found the same
// schedules on the committed batches, docs/cost_aware.md, at 1.7x the time
// on the G = 512 one.)
constexpr int kMaxTargetsWithoutGain = 1;
// Batches with at most this many samples x runtime sizes also try wider
// groups for every sample.
constexpr std::size_t kMaxWideningWork = 1024;

// The targets to try for `costs`: from the slowest sample at its smallest
// size down to the longest sample at its fastest.
std::vector<double> CoarseTargets(SampleCosts& costs) {
  double top = 0.0;
  std::size_t longest = 0;
  for (std::size_t i = 0; i < costs.sample_count(); ++i) {
    top = std::max(top, costs.Alone(i, costs.first_size(i)));
    if (costs.sample(i).len > costs.sample(longest).len) longest = i;
  }
  double bottom = costs.Alone(longest, costs.first_size(longest));
  for (std::size_t k = costs.first_size(longest); k < costs.sizes().size(); ++k) {
    bottom = std::min(bottom, costs.Alone(longest, k));
  }
  return dcpsched::CoarseTargets(top, bottom);
}

struct BestPlan {
  std::optional<Plan> plan;
  // The target `plan` came from; +infinity, which is never refined, until
  // one is found (0 would be outside PlanForTarget's targets).
  double target = std::numeric_limits<double>::infinity();
  absl::Status last_error = absl::OkStatus();

  void Consider(SampleCosts& costs, double target_seconds, std::size_t smallest_size = 0) {
    absl::StatusOr<Plan> candidate = PlanForTarget(costs, target_seconds, smallest_size);
    if (!candidate.ok()) {
      last_error = candidate.status();
      return;
    }
    if (!plan.has_value() || candidate->step_seconds < plan->step_seconds) {
      plan = *std::move(candidate);
      target = target_seconds;
    }
  }
};

// The fastest plan over the targets.
BestPlan PlanOverTargets(SampleCosts& costs) {
  BestPlan best;
  int worse = 0;  // targets in a row that found nothing faster
  for (const double target : CoarseTargets(costs)) {
    const double before = best.plan.has_value() ? best.plan->step_seconds : 0.0;
    const bool had = best.plan.has_value();
    best.Consider(costs, target);
    worse = had && best.plan->step_seconds >= before ? worse + 1 : 0;
    if (worse == kMaxTargetsWithoutGain) break;
  }
  // Small batches also try every sample on wider groups: with few samples
  // the granularity of one rank's budget, not the time, decides the count.
  if (costs.sample_count() * costs.sizes().size() <= kMaxWideningWork) {
    for (std::size_t smallest = 1; smallest < costs.sizes().size(); ++smallest) {
      best.Consider(costs, std::numeric_limits<double>::infinity(), smallest);
    }
  }
  for (const double step : {0.5}) {
    if (!best.plan.has_value() || !std::isfinite(best.target)) break;
    const double center = best.target;
    for (const double power : {-step, step}) {
      best.Consider(costs, center * std::pow(kTargetRatio, power));
    }
  }
  return best;
}

std::string Milliseconds(double seconds) {
  return absl::StrFormat("%.3f ms", seconds * 1e3);
}

double StepSeconds(absl::Span<const Sample> samples, const CompactSchedule& schedule,
                   const CostProfile& profile) {
  const absl::StatusOr<double> seconds = MeasureStepSeconds(samples, schedule, profile);
  return seconds.ok() ? *seconds : std::numeric_limits<double>::infinity();
}

// Packing-aware's schedule where Megatron-LM's runtime can run it; otherwise
// why not (its own failure, or invariant 11).
absl::StatusOr<CompactSchedule> RunnableUpstream(absl::Span<const Sample> samples,
                                                 const DynamicCpOptions& options) {
  absl::StatusOr<CompactSchedule> upstream = ScheduleDynamicCpAsUpstream(samples, options);
  if (!upstream.ok()) return upstream;
  if (absl::Status runnable = CheckSchedulerOutputRunnable(*upstream, options, "packing-aware");
      !runnable.ok()) {
    return runnable;
  }
  return upstream;
}

}  // namespace

absl::string_view CostAwareSourceName(CostAwareSource source) {
  switch (source) {
    case CostAwareSource::kPlanned:
      return "planned";
    case CostAwareSource::kPackingAware:
      return "packing_aware";
  }
  return "planned";
}

absl::StatusOr<CostAwareResult> ScheduleCostAware(absl::Span<const Sample> samples,
                                                  const DynamicCpOptions& options,
                                                  const CostProfile& profile,
                                                  const CostAwareOptions& cost_aware) {
  if (absl::Status status = ValidateDynamicCpProblem(samples, options); !status.ok()) {
    return status;
  }
  if (absl::Status status = ValidateCostProfile(profile); !status.ok()) return status;
  if (samples.empty()) return CostAwareResult{.reason = "planned: no samples"};
  const std::int64_t vpp = MicrobatchCountMultiple(options);
  if (static_cast<std::int64_t>(samples.size()) < vpp) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cost_aware cannot schedule ", samples.size(), " samples into a multiple of vpp_group=",
        vpp, " microbatches: every microbatch needs at least one sample; give at least ",
        vpp, " samples or a smaller vpp_group"));
  }

  SampleCosts costs(samples, options, profile);
  BestPlan best = PlanOverTargets(costs);
  if (!best.plan.has_value()) best.plan = PlanOverMicrobatchCounts(costs);
  absl::StatusOr<CompactSchedule> upstream =
      cost_aware.keep_packing_aware_if_faster
          ? RunnableUpstream(samples, options)
          : absl::UnavailableError("packing-aware not compared");
  if (!best.plan.has_value() && !upstream.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cost_aware found no schedule of ", samples.size(),
        " samples whose microbatch count is a multiple of vpp_group=", vpp, " (",
        best.last_error.message(),
        "): the token budget, max_num_seqs and the runtime's CP groups at total_gpus=",
        options.total_gpus, " (", RuntimeGroupSizes(options),
        ") leave too few ways to split them; use a smaller vpp_group, a larger "
        "max_num_seqs or more samples"));
  }
  CostAwareResult result;
  if (best.plan.has_value()) {
    result.schedule = PlanToCompact(costs, *best.plan);
    if (absl::Status own_check =
            CheckSchedulerOutputRunnable(result.schedule, options, "cost-aware");
        !own_check.ok()) {
      return absl::InternalError(absl::StrCat(
          "cost_aware planned a schedule it should not have: ", own_check.message()));
    }
    result.step_seconds = StepSeconds(samples, result.schedule, profile);
  }
  if (!upstream.ok()) {
    result.reason = absl::StrCat(
        "planned: ", Milliseconds(result.step_seconds),
        cost_aware.keep_packing_aware_if_faster
            ? absl::StrCat("; packing-aware has no runnable schedule here (",
                           upstream.status().message(), ")")
            : " (packing-aware not compared)");
    return result;
  }
  const double upstream_seconds = StepSeconds(samples, *upstream, profile);
  result.packing_aware_step_seconds = upstream_seconds;
  if (!best.plan.has_value() || upstream_seconds <= result.step_seconds) {
    result.reason =
        best.plan.has_value()
            ? absl::StrCat("packing_aware: its ", Milliseconds(upstream_seconds),
                           " is not slower than the plan's ",
                           Milliseconds(result.step_seconds))
            : absl::StrCat("packing_aware: ", Milliseconds(upstream_seconds),
                           "; no plan reached a multiple of vpp_group=", vpp);
    result.schedule = *std::move(upstream);
    result.source = CostAwareSource::kPackingAware;
    result.step_seconds = upstream_seconds;
    return result;
  }
  result.reason = absl::StrCat("planned: ", Milliseconds(result.step_seconds),
                               " against packing-aware's ", Milliseconds(upstream_seconds));
  return result;
}

}  // namespace dcpsched
