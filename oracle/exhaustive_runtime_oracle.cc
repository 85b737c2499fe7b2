#include "oracle/exhaustive_runtime_oracle.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "core/types.h"
#include "oracle/exhaustive_time_oracle.h"
#include "oracle/reference_definitions.h"
#include "oracle/reference_gpu_time.h"
#include "oracle/reference_runtime_step.h"

namespace dcpsched::oracle {
namespace {

constexpr double kNoStepYet = std::numeric_limits<double>::infinity();

// A schedule is skipped only when its bound exceeds the least step by more
// than this (relative): the bound and the step round differently.
constexpr double kBoundSlack = 1e-9;

// One runnable placement of a part as a microbatch, with each rank's
// one-layer seconds.
struct TimedPlacement {
  Microbatch microbatch;
  std::vector<double> rank_seconds;
};

// Each rank's one-layer seconds in `microbatch`: ReferenceMicrobatchSeconds
// of the ranks that hold the same list as it. Under the rules those are
// exactly its CP group (a sample is on one run, and runs that share a rank
// are equal), so every sample counts the same ranks as in the whole
// microbatch and the rank's time is the one the whole microbatch gives it.
absl::StatusOr<std::vector<double>> RankSeconds(absl::Span<const Sample> samples,
                                                const Microbatch& microbatch,
                                                const ReferenceCostTables& tables) {
  std::vector<double> seconds;
  for (const std::vector<SampleId>& ids : microbatch.rank_ids) {
    const auto holders = static_cast<std::size_t>(
        std::count(microbatch.rank_ids.begin(), microbatch.rank_ids.end(), ids));
    const Microbatch group{std::vector<std::vector<SampleId>>(holders, ids)};
    absl::StatusOr<std::vector<double>> slowest =
        ReferenceMicrobatchSeconds(samples, Schedule{{group}}, tables);
    if (!slowest.ok()) return slowest.status();
    seconds.push_back(slowest->front());
  }
  return seconds;
}

// The runnable placements of every non-empty subset of the samples (bit i
// for samples[i]), each with its rank seconds.
absl::StatusOr<std::vector<std::vector<TimedPlacement>>> TimedPlacementsOfEverySubset(
    absl::Span<const Sample> samples, const DynamicCpOptions& options,
    const ReferenceCostTables& tables) {
  const std::size_t subsets = std::size_t{1} << samples.size();
  std::vector<std::vector<TimedPlacement>> placements(subsets);
  for (std::size_t mask = 1; mask < subsets; ++mask) {
    std::vector<std::size_t> members;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      if (mask >> i & 1) members.push_back(i);
    }
    for (Microbatch& microbatch : RunnableMicrobatches(samples, members, options)) {
      absl::StatusOr<std::vector<double>> seconds = RankSeconds(samples, microbatch, tables);
      if (!seconds.ok()) return seconds.status();
      placements[mask].push_back({std::move(microbatch), *std::move(seconds)});
    }
  }
  return placements;
}

// The runtime fields ReferenceRuntimeStep refuses whatever the schedule,
// and this oracle's limits. (ReferenceRuntimeStep on an empty schedule
// cannot check them: at V > 1 it refuses the count 0.)
absl::Status ValidateRuntime(const ReferenceRuntime& runtime, std::int64_t total_gpus) {
  const std::int64_t p = runtime.pipeline_stages;
  const std::int64_t v = runtime.virtual_stages;
  const std::int64_t ep = runtime.expert_parallel_size;
  if (p < 1 || p > kRuntimeOracleMaxPipelineStages) {
    return absl::InvalidArgumentError(absl::StrCat(
        "pipeline stages ", p, ": the exhaustive runtime oracle takes 1 to ",
        kRuntimeOracleMaxPipelineStages));
  }
  if (v < 1 || v > kRuntimeOracleMaxVirtualStages) {
    return absl::InvalidArgumentError(absl::StrCat(
        "virtual stages ", v, ": the exhaustive runtime oracle takes 1 to ",
        kRuntimeOracleMaxVirtualStages));
  }
  if (v > 1 && p == 1) {
    return absl::InvalidArgumentError(
        "virtual stages > 1 need pipeline stages > 1: raise pipeline_stages or set "
        "virtual_stages to 1");
  }
  if (runtime.layers_per_stage < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("layers per stage ", runtime.layers_per_stage, " < 1: make it at least 1"));
  }
  if (!(runtime.forward_share > 0.0 && runtime.forward_share < 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "forward share ", runtime.forward_share, " outside (0, 1): the forward pass takes "
        "part of a layer's time, the backward the rest"));
  }
  if (runtime.legacy && p > 1) {
    return absl::InvalidArgumentError(
        "the legacy runtime has no pipelining: set pipeline_stages to 1 or use dev");
  }
  if (ep < 0 || (ep > 0 && total_gpus % ep != 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("expert-parallel size ", ep, " for ", total_gpus,
                     " ranks: make it a divisor of total_gpus, or 0 for none"));
  }
  return absl::OkStatus();
}

// accepted[M] for M in [0, n]: whether a schedule of M microbatches may be
// run (M >= 1, a multiple of vpp_group, an order the runtime gives). The
// reasons for the counts refused go to `refusals`.
std::vector<bool> AcceptedCounts(std::int64_t n, const DynamicCpOptions& options,
                                 const ReferenceRuntime& runtime,
                                 std::vector<std::string>& refusals) {
  const std::int64_t vpp =
      options.vpp_group.has_value() && *options.vpp_group > 1 ? *options.vpp_group : 1;
  std::vector<bool> accepted(static_cast<std::size_t>(n + 1), false);
  for (std::int64_t count = 1; count <= n; ++count) {
    if (count % vpp != 0) {
      refusals.push_back(
          absl::StrCat(count, " microbatches: not a multiple of vpp_group ", vpp));
      continue;
    }
    // The refusals do not depend on the pipeline rank.
    const absl::Status order = ReferenceStageOrder(runtime, count, 0).status();
    if (!order.ok()) {
      refusals.push_back(absl::StrCat(count, " microbatches: ", order.message()));
      continue;
    }
    accepted[static_cast<std::size_t>(count)] = true;
  }
  return accepted;
}

// The search: every set partition into an accepted count, every placement
// of its parts, every order of them.
class RuntimeSearch {
 public:
  RuntimeSearch(std::int64_t n, const std::vector<std::vector<TimedPlacement>>& placements,
                const std::vector<bool>& accepted, const ReferenceRuntime& runtime)
      : n_(n), placements_(placements), accepted_(accepted), runtime_(runtime) {}

  // The least step and one schedule that takes it; step_seconds stays
  // kNoStepYet when no schedule keeps the rules in an accepted count.
  absl::StatusOr<RuntimeOptimum> Run() {
    optimum_.step_seconds = kNoStepYet;
    const std::size_t all = (std::size_t{1} << n_) - 1;
    if (absl::Status status = Partition(all); !status.ok()) return status;
    return optimum_;
  }

 private:
  // Splits `remaining` into parts, the next part always holding its lowest
  // sample, so that each set partition comes once.
  absl::Status Partition(std::size_t remaining) {
    if (remaining == 0) {
      if (!accepted_[parts_.size()]) return absl::OkStatus();
      chosen_.assign(parts_.size(), nullptr);
      return Place(0);
    }
    const std::size_t lowest = remaining & (~remaining + 1);
    for (std::size_t part = remaining; part != 0; part = (part - 1) & remaining) {
      if (!(part & lowest) || placements_[part].empty()) continue;
      parts_.push_back(part);
      absl::Status status = Partition(remaining ^ part);
      parts_.pop_back();
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }

  // Chooses a placement for each part from `depth` on.
  absl::Status Place(std::size_t depth) {
    if (depth == parts_.size()) return Orders();
    for (const TimedPlacement& placement : placements_[parts_[depth]]) {
      chosen_[depth] = &placement;
      if (absl::Status status = Place(depth + 1); !status.ok()) return status;
    }
    return absl::OkStatus();
  }

  // Steps every order of the chosen microbatches (all distinct, so M!
  // orders) whose bound does not rule it out.
  absl::Status Orders() {
    const std::size_t count = chosen_.size();
    std::vector<std::size_t> order(count);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::int64_t orders = 1;
    for (std::size_t k = 2; k <= count; ++k) orders *= static_cast<std::int64_t>(k);
    if (Beaten(OrderFreeBound())) {
      optimum_.schedules_enumerated += orders;
      return absl::OkStatus();
    }
    do {
      ++optimum_.schedules_enumerated;
      if (Beaten(FillAndDrainBound(order))) continue;
      if (absl::Status status = Step(order); !status.ok()) return status;
    } while (std::next_permutation(order.begin(), order.end()));
    return absl::OkStatus();
  }

  // Whether a schedule whose step is at least `bound` cannot beat the best.
  bool Beaten(double bound) const {
    return optimum_.step_seconds != kNoStepYet &&
           bound > optimum_.step_seconds * (1.0 + kBoundSlack);
  }

  // The forward and backward op times of chosen microbatch k on rank r, as
  // docs/runtime_step.md ("Op times") defines them.
  std::pair<double, double> OpSeconds(std::size_t k, std::size_t r) const {
    double d = static_cast<double>(runtime_.layers_per_stage) * chosen_[k]->rank_seconds[r];
    if (runtime_.virtual_stages > 1) d /= static_cast<double>(runtime_.virtual_stages);
    const double forward = d * runtime_.forward_share;
    return {forward, d - forward};
  }

  // The doc's bound without the fill and drain, which depend on the order:
  // per rank, its work W(r) (V times its op times) and each microbatch's
  // chain through all P V stages, P V (F + B).
  double OrderFreeBound() const {
    const auto v = static_cast<double>(runtime_.virtual_stages);
    const auto stages = static_cast<double>(runtime_.pipeline_stages) * v;
    double bound = 0.0;
    for (std::size_t r = 0; r < chosen_.front()->rank_seconds.size(); ++r) {
      double work = 0.0;
      for (std::size_t k = 0; k < chosen_.size(); ++k) {
        const auto [forward, backward] = OpSeconds(k, r);
        work += v * (forward + backward);
        bound = std::max(bound, stages * (forward + backward));
      }
      bound = std::max(bound, work);
    }
    return bound;
  }

  // The doc's bound for this order: per rank, (P - 1) F(first, r) + W(r) +
  // (P - 1) B(last, r), the last pipeline rank's fill, work and drain.
  double FillAndDrainBound(const std::vector<std::size_t>& order) const {
    const auto v = static_cast<double>(runtime_.virtual_stages);
    const auto fill = static_cast<double>(runtime_.pipeline_stages - 1);
    double bound = 0.0;
    for (std::size_t r = 0; r < chosen_.front()->rank_seconds.size(); ++r) {
      double work = 0.0;
      for (std::size_t k = 0; k < chosen_.size(); ++k) {
        const auto [forward, backward] = OpSeconds(k, r);
        work += v * (forward + backward);
      }
      bound = std::max(bound, fill * OpSeconds(order.front(), r).first + work +
                                  fill * OpSeconds(order.back(), r).second);
    }
    return bound;
  }

  // The schedule of the chosen microbatches in `order`, by
  // ReferenceRuntimeStep; kept when strictly faster than the best.
  absl::Status Step(const std::vector<std::size_t>& order) {
    ++optimum_.schedules_stepped;
    Schedule schedule;
    std::vector<std::vector<double>> rank_seconds;
    for (const std::size_t k : order) {
      schedule.microbatches.push_back(chosen_[k]->microbatch);
      rank_seconds.push_back(chosen_[k]->rank_seconds);
    }
    const absl::StatusOr<ReferenceStep> step =
        ReferenceRuntimeStep(schedule, rank_seconds, runtime_);
    if (!step.ok()) {
      return absl::InternalError(absl::StrCat(
          "ReferenceRuntimeStep refused a schedule the oracle built: ", step.status().message()));
    }
    if (step->step_seconds < optimum_.step_seconds) {
      optimum_.step_seconds = step->step_seconds;
      optimum_.schedule = std::move(schedule);
    }
    return absl::OkStatus();
  }

  std::int64_t n_;
  const std::vector<std::vector<TimedPlacement>>& placements_;
  const std::vector<bool>& accepted_;
  const ReferenceRuntime& runtime_;
  std::vector<std::size_t> parts_;
  std::vector<const TimedPlacement*> chosen_;
  RuntimeOptimum optimum_;
};

}  // namespace

absl::StatusOr<RuntimeOptimum> ExhaustiveFastestRuntimeStep(absl::Span<const Sample> samples,
                                                            const DynamicCpOptions& options,
                                                            const ReferenceCostTables& tables,
                                                            const ReferenceRuntime& runtime) {
  if (absl::Status status = ValidateDynamicCpProblem(samples, options); !status.ok()) {
    return status;
  }
  const auto n = static_cast<std::int64_t>(samples.size());
  if (n > kRuntimeOracleMaxSamples || options.total_gpus > kRuntimeOracleMaxGpus) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the exhaustive runtime oracle takes at most ", kRuntimeOracleMaxSamples,
        " samples and ", kRuntimeOracleMaxGpus, " ranks; this has ", n, " and ",
        options.total_gpus, ": give it fewer samples or ranks"));
  }
  if (absl::Status status = ValidateRuntime(runtime, options.total_gpus); !status.ok()) {
    return status;
  }
  if (n == 0) return RuntimeOptimum{};
  std::vector<std::string> refusals;
  const std::vector<bool> accepted = AcceptedCounts(n, options, runtime, refusals);
  absl::StatusOr<std::vector<std::vector<TimedPlacement>>> placements =
      TimedPlacementsOfEverySubset(samples, options, tables);
  if (!placements.ok()) return placements.status();
  absl::StatusOr<RuntimeOptimum> optimum =
      RuntimeSearch(n, *placements, accepted, runtime).Run();
  if (optimum.ok() && optimum->step_seconds == kNoStepYet) {
    return absl::NotFoundError(absl::StrCat(
        "no runnable schedule of the ", n, " samples has a microbatch count the rules and "
        "the runtime accept",
        refusals.empty() ? "" : absl::StrCat(" (refused: ", absl::StrJoin(refusals, "; "), ")")));
  }
  return optimum;
}

}  // namespace dcpsched::oracle
