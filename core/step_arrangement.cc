#include "core/step_arrangement.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/compact_schedule.h"
#include "core/gpu_time.h"
#include "core/runtime_step.h"

namespace dcpsched {
namespace {

// The neighbour swaps stop after this many simulated steps, or earlier
// when they have simulated this many group ops in all (a step costs
// P x V x groups ops): the swaps' cost stays bounded on large batches.
constexpr int kMaxSwapSteps = 64;
constexpr std::int64_t kMaxSwapGroupOps = std::int64_t{1} << 20;

// Where each group of each microbatch starts: [microbatch][group], the
// groups in the schedule's order.
using FirstRanks = std::vector<std::vector<std::int64_t>>;

struct Arrangement {
  std::vector<std::size_t> order;
  FirstRanks first_ranks;
};

class Arranger {
 public:
  Arranger(const CompactSchedule& schedule, const ScheduleTime& time, std::int64_t total_gpus,
           const RuntimeConfig& config)
      : schedule_(schedule), time_(time), total_gpus_(total_gpus), config_(config) {}

  FirstRanks GivenFirstRanks() const {
    FirstRanks first_ranks;
    for (const CompactMicrobatch& microbatch : schedule_.microbatches) {
      std::vector<std::int64_t>& firsts = first_ranks.emplace_back();
      for (const CpGroupIds& group : microbatch.groups) firsts.push_back(group.first_rank);
    }
    return first_ranks;
  }

  // Each microbatch's groups on the blocks whose ranks finish earliest,
  // microbatch after microbatch in `order`.
  FirstRanks BalancedFirstRanks(const std::vector<std::size_t>& order) const {
    FirstRanks first_ranks = GivenFirstRanks();
    std::vector<double> finish(static_cast<std::size_t>(total_gpus_), 0.0);
    for (const std::size_t m : order) {
      if (std::optional<std::vector<std::int64_t>> placed = PlaceMicrobatch(m, finish)) {
        first_ranks[m] = *std::move(placed);
      }
      AdvanceChains(m, first_ranks[m], finish);
    }
    return first_ranks;
  }

  // The step of `arrangement`; the schedule's own errors for a schedule
  // the model refuses.
  absl::StatusOr<RuntimeStep> Step(const Arrangement& arrangement) const {
    std::vector<TimedMicrobatch> timed;
    timed.reserve(arrangement.order.size());
    for (const std::size_t m : arrangement.order) {
      const std::vector<CpGroupIds>& groups = schedule_.microbatches[m].groups;
      TimedMicrobatch& microbatch = timed.emplace_back();
      for (const std::size_t g : ByFirstRank(arrangement.first_ranks[m])) {
        microbatch.groups.push_back({arrangement.first_ranks[m][g], groups[g].size,
                                     time_.microbatches[m].group_seconds[g],
                                     !groups[g].ids.empty()});
      }
    }
    return SimulateRuntimeStep(total_gpus_, timed, config_);
  }

  CompactSchedule ToSchedule(const Arrangement& arrangement) const {
    CompactSchedule arranged;
    for (const std::size_t m : arrangement.order) {
      const std::vector<CpGroupIds>& groups = schedule_.microbatches[m].groups;
      CompactMicrobatch& microbatch = arranged.microbatches.emplace_back();
      for (const std::size_t g : ByFirstRank(arrangement.first_ranks[m])) {
        CpGroupIds group = groups[g];
        group.first_rank = arrangement.first_ranks[m][g];
        microbatch.groups.push_back(std::move(group));
      }
    }
    return arranged;
  }

  double Slowest(std::size_t m) const { return time_.microbatches[m].max_seconds; }
  std::size_t size() const { return schedule_.microbatches.size(); }

 private:
  static std::vector<std::size_t> ByFirstRank(const std::vector<std::int64_t>& first_ranks) {
    std::vector<std::size_t> groups(first_ranks.size());
    for (std::size_t g = 0; g < groups.size(); ++g) groups[g] = g;
    std::sort(groups.begin(), groups.end(), [&](std::size_t a, std::size_t b) {
      return first_ranks[a] < first_ranks[b];
    });
    return groups;
  }

  double Seconds(std::size_t m, std::size_t g) const {
    return time_.microbatches[m].group_seconds[g];
  }

  // When the ranks [first, first + size) are all free.
  static double BlockStart(const std::vector<double>& finish, std::int64_t first,
                           std::int64_t size) {
    return *std::max_element(finish.begin() + first, finish.begin() + first + size);
  }

  // Microbatch m's groups on the earliest-finishing free aligned blocks,
  // largest size first and slowest first within a size; nullopt where a
  // size has fewer free aligned blocks than groups (a tiling the runtime
  // could not run) or the microbatch is one group.
  std::optional<std::vector<std::int64_t>> PlaceMicrobatch(
      std::size_t m, const std::vector<double>& finish) const {
    const std::vector<CpGroupIds>& groups = schedule_.microbatches[m].groups;
    std::vector<std::size_t> by_size(groups.size());
    for (std::size_t g = 0; g < by_size.size(); ++g) by_size[g] = g;
    std::sort(by_size.begin(), by_size.end(), [&](std::size_t a, std::size_t b) {
      if (groups[a].size != groups[b].size) return groups[a].size > groups[b].size;
      if (Seconds(m, a) != Seconds(m, b)) return Seconds(m, a) > Seconds(m, b);
      return a < b;
    });
    if (groups.size() < 2) return std::nullopt;  // alone: on all G ranks
    std::vector<std::int64_t> first_ranks(groups.size(), 0);
    std::vector<bool> taken(static_cast<std::size_t>(total_gpus_), false);
    for (std::size_t begin = 0; begin < by_size.size();) {
      const std::int64_t size = groups[by_size[begin]].size;
      std::size_t end = begin;
      while (end < by_size.size() && groups[by_size[end]].size == size) ++end;
      std::vector<std::pair<double, std::int64_t>> blocks;  // (start, first rank)
      for (std::int64_t first = 0; first + size <= total_gpus_; first += size) {
        if (std::none_of(taken.begin() + first, taken.begin() + first + size,
                         [](bool t) { return t; })) {
          blocks.emplace_back(BlockStart(finish, first, size), first);
        }
      }
      if (blocks.size() < end - begin) return std::nullopt;
      std::sort(blocks.begin(), blocks.end());
      for (std::size_t j = begin; j < end; ++j) {
        const std::int64_t first = blocks[j - begin].second;
        first_ranks[by_size[j]] = first;
        std::fill(taken.begin() + first, taken.begin() + first + size, true);
      }
      begin = end;
    }
    return first_ranks;
  }

  // Each rank's chain after microbatch m on `first_ranks`, as without
  // pipelining: a group starts when all of its ranks are free.
  void AdvanceChains(std::size_t m, const std::vector<std::int64_t>& first_ranks,
                     std::vector<double>& finish) const {
    const std::vector<CpGroupIds>& groups = schedule_.microbatches[m].groups;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      if (groups[g].ids.empty()) continue;
      const double end = BlockStart(finish, first_ranks[g], groups[g].size) + Seconds(m, g);
      std::fill(finish.begin() + first_ranks[g],
                finish.begin() + first_ranks[g] + groups[g].size, end);
    }
  }

  const CompactSchedule& schedule_;
  const ScheduleTime& time_;
  const std::int64_t total_gpus_;
  const RuntimeConfig& config_;
};

// The microbatch orders tried: as given, slowest first, fastest first, and
// slowest and fastest alternating.
std::vector<std::vector<std::size_t>> CandidateOrders(const Arranger& arranger,
                                                      bool pipelined) {
  std::vector<std::size_t> given(arranger.size());
  for (std::size_t m = 0; m < given.size(); ++m) given[m] = m;
  std::vector<std::size_t> slowest_first = given;
  std::stable_sort(slowest_first.begin(), slowest_first.end(), [&](std::size_t a, std::size_t b) {
    return arranger.Slowest(a) > arranger.Slowest(b);
  });
  std::vector<std::size_t> fastest_first(slowest_first.rbegin(), slowest_first.rend());
  std::vector<std::size_t> alternating;
  for (std::size_t low = 0, high = given.size(); low < high;) {
    alternating.push_back(slowest_first[low++]);
    if (low < high) alternating.push_back(slowest_first[--high]);
  }
  // The fastest at both ends, the slowest in the middle: a pipeline's fill
  // runs the first microbatch's forward alone and its drain the last one's
  // backward.
  std::vector<std::size_t> slowest_inside(given.size());
  for (std::size_t k = 0, front = 0, back = given.size(); k < given.size(); ++k) {
    if (k % 2 == 0) {
      slowest_inside[front++] = fastest_first[k];
    } else {
      slowest_inside[--back] = fastest_first[k];
    }
  }
  if (!pipelined) return {given, slowest_first};
  return {given, slowest_first, fastest_first, alternating, slowest_inside};
}

struct Best {
  Arrangement arrangement;
  bool balanced = false;
  RuntimeStep step;
};

}  // namespace

absl::StatusOr<ArrangedSchedule> ArrangeForRuntimeStep(const CompactSchedule& schedule,
                                                       const ScheduleTime& time,
                                                       std::int64_t total_gpus,
                                                       const RuntimeConfig& config,
                                                       ArrangementSearch search) {
  absl::StatusOr<RuntimeStep> given_step = MeasureRuntimeStep(schedule, time, config);
  if (!given_step.ok()) return given_step.status();
  const Arranger arranger(schedule, time, total_gpus, config);
  std::vector<std::vector<std::size_t>> orders = CandidateOrders(arranger, config.pipeline.stages > 1);
  Best best{{orders.front(), arranger.GivenFirstRanks()}, false, *given_step};
  // Under the barrier neither the order nor the blocks change the step.
  if (config.path == RuntimePath::kLegacy) {
    return ArrangedSchedule{schedule, *std::move(given_step)};
  }
  const auto consider = [&](Arrangement arrangement, bool balanced) {
    absl::StatusOr<RuntimeStep> step = arranger.Step(arrangement);
    if (!step.ok() || step->step_seconds >= best.step.step_seconds) return false;
    best = {std::move(arrangement), balanced, *std::move(step)};
    return true;
  };
  for (std::vector<std::size_t>& order : orders) {
    consider({order, arranger.GivenFirstRanks()}, false);
    consider({order, arranger.BalancedFirstRanks(order)}, true);
  }
  std::int64_t groups = 0;
  for (const CompactMicrobatch& microbatch : schedule.microbatches) {
    groups += static_cast<std::int64_t>(microbatch.groups.size());
  }
  const std::int64_t ops_per_step =
      std::max<std::int64_t>(1, groups * config.pipeline.stages * config.pipeline.virtual_stages);
  const std::int64_t swap_steps =
      search.swaps ? std::min<std::int64_t>(kMaxSwapSteps, kMaxSwapGroupOps / ops_per_step) : 0;
  std::int64_t steps = 0;
  // Swaps of neighbours, and of each microbatch with the first and the
  // last (the pipeline's fill and drain), while one shortens the step.
  const auto try_swap = [&](std::size_t i, std::size_t j) {
    std::vector<std::size_t> order = best.arrangement.order;
    std::swap(order[i], order[j]);
    FirstRanks first_ranks =
        best.balanced ? arranger.BalancedFirstRanks(order) : best.arrangement.first_ranks;
    ++steps;
    return consider({std::move(order), std::move(first_ranks)}, best.balanced);
  };
  const std::size_t count = best.arrangement.order.size();
  for (bool improved = true; improved && steps < swap_steps;) {
    improved = false;
    for (std::size_t i = 0; i + 1 < count && steps < swap_steps; ++i) {
      improved |= try_swap(i, i + 1);
      if (i + 2 < count && steps < swap_steps) improved |= try_swap(0, i + 2);
      if (i > 0 && steps < swap_steps) improved |= try_swap(i, count - 1);
    }
  }
  return ArrangedSchedule{arranger.ToSchedule(best.arrangement), std::move(best.step)};
}

}  // namespace dcpsched
