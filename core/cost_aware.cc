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
#include "core/runtime_step.h"
#include "core/sample_costs.h"
#include "core/step_arrangement.h"
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

// The per-rank token budgets it plans at, as fractions of
// max_seq_len_per_rank, largest first: a smaller budget makes more, smaller
// microbatches, which shortens a pipeline's fill and drain. Without
// pipelining more microbatches only add per-microbatch costs, so there it
// plans at the full budget alone.
constexpr std::pair<int, int> kBudgetFractions[] = {
    {1, 1}, {7, 8}, {3, 4}, {5, 8}, {1, 2}, {7, 16}, {3, 8}, {5, 16}, {1, 4}, {3, 16}, {1, 8}};

std::vector<std::int64_t> TokenBudgets(std::int64_t max_seq_len_per_rank,
                                       const RuntimeConfig& runtime) {
  if (runtime.pipeline.stages == 1) return {max_seq_len_per_rank};
  std::vector<std::int64_t> budgets;
  for (const auto& [numerator, denominator] : kBudgetFractions) {
    const std::int64_t budget =
        std::max<std::int64_t>(1, max_seq_len_per_rank * numerator / denominator);
    if (budgets.empty() || budgets.back() != budget) budgets.push_back(budget);
  }
  return budgets;
}

// A microbatch count `shape` can run whenever the shape itself is valid:
// 0 without interleaving, one group of N (P where N is 0) with it.
std::int64_t AnyRunnableMicrobatchCount(const PipelineShape& shape) {
  if (shape.virtual_stages <= 1) return 0;
  return shape.microbatch_group_size == 0 ? shape.stages : shape.microbatch_group_size;
}

std::string Milliseconds(double seconds) {
  return absl::StrFormat("%.3f ms", seconds * 1e3);
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

// The planner's schedule at the per-rank token budget of `options`: the
// fastest plan over the targets, or the fallback over microbatch counts;
// why not where neither has one.
absl::StatusOr<CompactSchedule> PlannedSchedule(absl::Span<const Sample> samples,
                                                const DynamicCpOptions& options,
                                                const CostProfile& profile) {
  SampleCosts costs(samples, options, profile);
  BestPlan best = PlanOverTargets(costs);
  if (!best.plan.has_value()) best.plan = PlanOverMicrobatchCounts(costs);
  if (!best.plan.has_value()) return best.last_error;
  CompactSchedule schedule = PlanToCompact(costs, *best.plan);
  if (absl::Status own_check = CheckSchedulerOutputRunnable(schedule, options, "cost-aware");
      !own_check.ok()) {
    return absl::InternalError(absl::StrCat(
        "cost_aware planned a schedule it should not have: ", own_check.message()));
  }
  return schedule;
}

// One schedule the scheduler may return, arranged for the runtime, and the
// schedule as packed with its times (to arrange again).
struct Candidate {
  CompactSchedule schedule;
  CostAwareSource source = CostAwareSource::kPlanned;
  std::int64_t token_budget = 0;
  RuntimeStep step;
  CompactSchedule packed;
  ScheduleTime packed_time;
};

// The fastest candidate so far, the first on ties; the last reason one was
// refused.
struct BestCandidate {
  std::optional<Candidate> candidate;
  absl::Status last_error = absl::OkStatus();
  // Packing-aware's schedule at the full budget, as it returns it.
  std::optional<RuntimeStep> packing_aware_step;

  // `schedule`, packed under `token_budget`, for a problem of `options`.
  void Consider(absl::Span<const Sample> samples, const DynamicCpOptions& options,
                const CostProfile& profile, const RuntimeConfig& runtime,
                absl::StatusOr<CompactSchedule> schedule, CostAwareSource source,
                std::int64_t token_budget, bool is_packing_aware_as_returned) {
    if (!schedule.ok()) {
      last_error = schedule.status();
      return;
    }
    absl::StatusOr<ScheduleTime> time =
        MeasureScheduleTimeWithoutBound(samples, *schedule, profile);
    if (!time.ok()) {
      last_error = time.status();
      return;
    }
    if (is_packing_aware_as_returned) {
      absl::StatusOr<RuntimeStep> as_returned = MeasureRuntimeStep(*schedule, *time, runtime);
      if (as_returned.ok()) packing_aware_step = *as_returned;
    }
    absl::StatusOr<ArrangedSchedule> arranged =
        ArrangeForRuntimeStep(*schedule, *time, options.total_gpus, runtime,
                              ArrangementSearch{.swaps = false});
    if (!arranged.ok()) {
      last_error = arranged.status();
      return;
    }
    if (candidate.has_value() &&
        arranged->step.step_seconds >= candidate->step.step_seconds) {
      return;
    }
    candidate = Candidate{std::move(arranged->schedule), source, token_budget,
                          std::move(arranged->step), *std::move(schedule), *std::move(time)};
  }

  // The kept candidate, its arrangement improved by swaps too.
  void ImproveBySwaps(const DynamicCpOptions& options, const RuntimeConfig& runtime) {
    absl::StatusOr<ArrangedSchedule> arranged = ArrangeForRuntimeStep(
        candidate->packed, candidate->packed_time, options.total_gpus, runtime);
    if (arranged.ok() && arranged->step.step_seconds < candidate->step.step_seconds) {
      candidate->schedule = std::move(arranged->schedule);
      candidate->step = std::move(arranged->step);
    }
  }
};

int CountMicrobatches(const CompactSchedule& schedule) {
  return static_cast<int>(schedule.microbatches.size());
}

// Why this schedule: what it traded against packing-aware's.
std::string Reason(const Candidate& chosen, const DynamicCpOptions& options,
                   const std::optional<RuntimeStep>& packing_aware_step,
                   const absl::Status& packing_aware_status, bool compared) {
  std::string reason = absl::StrCat(
      CostAwareSourceName(chosen.source), ": ", CountMicrobatches(chosen.schedule),
      " microbatches");
  if (chosen.token_budget < options.max_seq_len_per_rank) {
    absl::StrAppend(&reason, " at ", chosen.token_budget, " tokens per rank");
  }
  absl::StrAppend(&reason, ", step ", Milliseconds(chosen.step.step_seconds), " (bubble ",
                  Milliseconds(chosen.step.bubble_seconds), ")");
  if (!compared) return absl::StrCat(reason, " (packing-aware not compared)");
  if (!packing_aware_status.ok()) {
    return absl::StrCat(reason, "; packing-aware has no runnable schedule here (",
                        packing_aware_status.message(), ")");
  }
  if (!packing_aware_step.has_value()) {
    return absl::StrCat(reason, "; the runtime cannot run packing-aware's schedule");
  }
  return absl::StrCat(reason, " against packing-aware's ",
                      Milliseconds(packing_aware_step->step_seconds));
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
  const RuntimeConfig& runtime = cost_aware.runtime;
  if (absl::Status status = CheckRuntimeConfig(runtime, options.total_gpus,
                                               AnyRunnableMicrobatchCount(runtime.pipeline));
      !status.ok()) {
    return status;
  }
  if (samples.empty()) {
    return CostAwareResult{.reason = "planned: no samples",
                           .token_budget = options.max_seq_len_per_rank};
  }
  const std::int64_t vpp = MicrobatchCountMultiple(options);
  if (static_cast<std::int64_t>(samples.size()) < vpp) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cost_aware cannot schedule ", samples.size(), " samples into a multiple of vpp_group=",
        vpp, " microbatches: every microbatch needs at least one sample; give at least ",
        vpp, " samples or a smaller vpp_group"));
  }

  BestCandidate best;
  const absl::StatusOr<CompactSchedule> upstream =
      cost_aware.keep_packing_aware_if_faster
          ? RunnableUpstream(samples, options)
          : absl::UnavailableError("packing-aware not compared");
  for (const std::int64_t budget : TokenBudgets(options.max_seq_len_per_rank, runtime)) {
    DynamicCpOptions budget_options = options;
    budget_options.max_seq_len_per_rank = budget;
    if (!ValidateDynamicCpProblem(samples, budget_options).ok()) continue;
    const bool full = budget == options.max_seq_len_per_rank;
    if (cost_aware.keep_packing_aware_if_faster) {
      best.Consider(samples, options, profile, runtime,
                    full ? upstream : RunnableUpstream(samples, budget_options),
                    CostAwareSource::kPackingAware, budget, full);
    }
    best.Consider(samples, options, profile, runtime,
                  PlannedSchedule(samples, budget_options, profile), CostAwareSource::kPlanned,
                  budget, false);
  }
  if (!best.candidate.has_value()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cost_aware found no schedule of ", samples.size(), " samples that the ",
        DescribeRuntime(runtime), " can run with a microbatch count that is a multiple of "
        "vpp_group=", vpp, " (", best.last_error.message(),
        "): the token budget, max_num_seqs and the runtime's CP groups at total_gpus=",
        options.total_gpus, " (", RuntimeGroupSizes(options),
        ") leave too few ways to split them; use a smaller vpp_group, a larger "
        "max_num_seqs or more samples"));
  }
  best.ImproveBySwaps(options, runtime);
  Candidate& chosen = *best.candidate;
  CostAwareResult result;
  result.reason = Reason(chosen, options, best.packing_aware_step, upstream.status(),
                         cost_aware.keep_packing_aware_if_faster);
  result.source = chosen.source;
  result.step_seconds = chosen.step.step_seconds;
  if (best.packing_aware_step.has_value()) {
    result.packing_aware_step_seconds = best.packing_aware_step->step_seconds;
  }
  result.token_budget = chosen.token_budget;
  result.runtime_step = std::move(chosen.step);
  result.schedule = std::move(chosen.schedule);
  return result;
}

}  // namespace dcpsched
