#include "core/packing_aware.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/cost_model.h"
#include "core/group_layout.h"
#include "core/schedule_loop.h"
#include "core/validate.h"

namespace dcpsched {
namespace {

// The largest and second-largest group work of a step. Group work only grows
// while samples are placed, which keeps the update O(1).
class TopTwoWork {
 public:
  void Update(std::size_t group, double work) {
    if (first_ && *first_ == group) {
      first_work_ = work;
    } else if (!first_ || work > first_work_) {
      second_ = first_;
      second_work_ = first_work_;
      first_ = group;
      first_work_ = work;
    } else if (!second_ || *second_ == group || work > second_work_) {
      second_ = group;
      second_work_ = work;
    }
  }
  // Largest work of any group (0 if none: free ranks carry no work).
  double Max() const { return first_ ? first_work_ : 0.0; }
  // Largest work of any group other than `group`.
  double MaxExcluding(std::size_t group) const {
    if (first_ && *first_ == group) return second_ ? second_work_ : 0.0;
    return Max();
  }

 private:
  std::optional<std::size_t> first_;
  std::optional<std::size_t> second_;
  double first_work_ = 0.0;
  double second_work_ = 0.0;
};

// A placement for one sample: join `group`, or open a new group when
// `group` is empty, with `cp_size` ranks.
struct Placement {
  double projected_max = 0.0;
  std::int64_t cp_size = 0;
  std::optional<std::size_t> group;
};

class PackingAwareStepBuilder {
 public:
  PackingAwareStepBuilder(const std::vector<Sample>& sorted,
                          const DynamicCpOptions& options)
      : sorted_(sorted),
        options_(options),
        cap_(WorkCap(sorted.front().len, options.max_seq_len_per_rank)),
        layout_(options.total_gpus),
        groups_by_size_(std::bit_width(
            static_cast<std::uint64_t>(options.total_gpus))) {}

  PackedMicrobatch PlaceOnly() && {
    PlaceAll();
    return layout_.ToPackedMicrobatch(std::move(leftovers_));
  }

  absl::StatusOr<PackedMicrobatch> Build() && {
    PlaceAll();
    while (layout_.free_ranks() > 0) {
      absl::StatusOr<bool> widened = WidenSmallestGroupOnce();
      if (!widened.ok()) return widened.status();
      if (!*widened) return FillWithFullGroup();
    }
    return layout_.ToPackedMicrobatch(std::move(leftovers_));
  }

 private:
  void PlaceAll() {
    const Sample& tallest = sorted_.front();
    Open(tallest, MinCp(tallest.len));
    for (std::size_t i = 1; i < sorted_.size(); ++i) {
      const Sample& sample = sorted_[i];
      const std::optional<Placement> best = BestPlacement(sample);
      if (!best) {
        leftovers_.push_back(sample);
      } else if (best->group) {
        layout_.AddToGroup(*best->group, sample);
        top_.Update(*best->group, layout_.groups()[*best->group].work);
      } else {
        Open(sample, best->cp_size);
      }
    }
  }

  std::int64_t MinCp(std::int64_t len) const {
    return MinCpSize(len, options_.max_seq_len_per_rank, options_.min_cp_size);
  }

  void Open(const Sample& sample, std::int64_t cp_size) {
    const std::size_t group = layout_.OpenGroup(sample, cp_size);
    groups_by_size_[SizeIndex(cp_size)].push_back(group);
    top_.Update(group, layout_.groups()[group].work);
  }

  static std::size_t SizeIndex(std::int64_t power_of_two) {
    return static_cast<std::size_t>(
        std::countr_zero(static_cast<std::uint64_t>(power_of_two)));
  }

  // Tries every CP size from the sample's minimum up, joining each group of
  // that size (oldest first) and then a new group. The lowest projected
  // busiest-rank work within the cap wins; ties keep the earlier candidate.
  std::optional<Placement> BestPlacement(const Sample& sample) const {
    std::optional<Placement> best;
    const auto consider = [&](double projected_max, std::int64_t cp_size,
                              std::optional<std::size_t> group) {
      if (projected_max <= cap_ &&
          (!best || projected_max < best->projected_max)) {
        best = Placement{projected_max, cp_size, group};
      }
    };
    const double budget = static_cast<double>(options_.max_seq_len_per_rank);
    for (std::int64_t cp_size = MinCp(sample.len);
         cp_size <= options_.total_gpus; cp_size *= 2) {
      const double cost = Work(sample.len, cp_size);
      const double tokens = TokensPerRank(sample.len, cp_size);
      for (const std::size_t group : groups_by_size_[SizeIndex(cp_size)]) {
        const CpGroup& candidate = layout_.groups()[group];
        if (candidate.packed_tokens + tokens > budget) continue;
        consider(std::max(candidate.work + cost, top_.MaxExcluding(group)),
                 cp_size, group);
      }
      if (layout_.free_ranks() >= cp_size) {
        consider(std::max(cost, top_.Max()), cp_size, std::nullopt);
      }
    }
    return best;
  }

  // Doubles (up to G) the first group of the smallest size that can grow,
  // as upstream's fill_empty_gpus_once. Returns false if none can.
  absl::StatusOr<bool> WidenSmallestGroupOnce() {
    const std::vector<CpGroup>& groups = layout_.groups();
    std::int64_t smallest = options_.total_gpus;
    for (const CpGroup& group : groups) smallest = std::min(smallest, group.size);
    const std::int64_t widened = std::min(2 * smallest, options_.total_gpus);
    const std::int64_t growth = widened - smallest;
    const std::int64_t first_empty = layout_.covered_ranks();
    for (std::size_t index = 0; index < groups.size(); ++index) {
      const CpGroup& group = groups[index];
      const std::int64_t last_member = group.first_rank + group.size - 1;
      // Upstream also skips a group ending after the first empty rank; groups
      // end before the free tail by construction, so that never happens here.
      if (group.size != smallest ||
          last_member + growth >= options_.total_gpus) {
        continue;
      }
      if (first_empty - 1 + growth >= options_.total_gpus) {
        return absl::FailedPreconditionError(absl::StrCat(
            "packing-aware fill step: widening the CP group on ranks ",
            group.first_rank, "-", last_member, " from ", smallest, " to ",
            widened, " ranks would push rank ", first_empty - 1,
            " past the last rank of total_gpus=", options_.total_gpus,
            " (upstream fails here with IndexError); use a power-of-two "
            "total_gpus or a larger max_seq_len_per_rank"));
      }
      double work = 0.0;
      for (const std::int64_t len : group.lens) work += Work(len, widened);
      layout_.WidenGroup(index, widened, work);
      return true;
    }
    return false;
  }

  // Upstream's fill_with_full_dpxcp_group: discards the placement and puts
  // every sample that fits, longest first, on one group of all G ranks.
  absl::StatusOr<PackedMicrobatch> FillWithFullGroup() const {
    const std::int64_t all_ranks = options_.total_gpus;
    const double budget = static_cast<double>(options_.max_seq_len_per_rank);
    GroupLayout full(all_ranks);
    std::vector<Sample> leftovers;
    for (const Sample& sample : sorted_) {
      const double tokens = TokensPerRank(sample.len, all_ranks);
      if (full.groups().empty()) {
        if (tokens <= budget) {
          full.OpenGroup(sample, all_ranks);
          continue;
        }
      } else if (full.groups().front().packed_tokens + tokens <= budget) {
        full.AddToGroup(0, sample);
        continue;
      }
      leftovers.push_back(sample);
    }
    if (full.groups().empty()) {
      return absl::InternalError(
          "packing-aware full-group fallback placed no sample; this cannot "
          "happen for validated input");
    }
    return full.ToPackedMicrobatch(std::move(leftovers));
  }

  const std::vector<Sample>& sorted_;
  const DynamicCpOptions& options_;
  const double cap_;
  GroupLayout layout_;
  // Indices of the groups of size 2^k, in creation order.
  std::vector<std::vector<std::size_t>> groups_by_size_;
  TopTwoWork top_;
  std::vector<Sample> leftovers_;
};

// One step on samples already sorted longest first and validated.
absl::StatusOr<PackedMicrobatch> BuildStep(const std::vector<Sample>& sorted,
                                           const DynamicCpOptions& options) {
  if (sorted.empty()) {
    return GroupLayout(options.total_gpus).ToPackedMicrobatch({});
  }
  return PackingAwareStepBuilder(sorted, options).Build();
}

}  // namespace

absl::StatusOr<PackedMicrobatch> PackingAwareStep(
    absl::Span<const Sample> samples, const DynamicCpOptions& options) {
  if (absl::Status status = ValidateDynamicCpProblem(samples, options);
      !status.ok()) {
    return status;
  }
  return BuildStep(SortedLongestFirst(samples), options);
}

absl::StatusOr<PackedMicrobatch> PackingAwarePlacement(
    absl::Span<const Sample> samples, const DynamicCpOptions& options) {
  if (absl::Status status = ValidateDynamicCpProblem(samples, options);
      !status.ok()) {
    return status;
  }
  const std::vector<Sample> sorted = SortedLongestFirst(samples);
  if (sorted.empty()) {
    return GroupLayout(options.total_gpus).ToPackedMicrobatch({});
  }
  return PackingAwareStepBuilder(sorted, options).PlaceOnly();
}

absl::StatusOr<Schedule> ScheduleDynamicCp(absl::Span<const Sample> samples,
                                           const DynamicCpOptions& options) {
  if (absl::Status status = ValidateDynamicCpProblem(samples, options);
      !status.ok()) {
    return status;
  }
  return ScheduleBySteps(samples, options, "packing-aware",
                         [&options](const std::vector<Sample>& remaining) {
                           return BuildStep(remaining, options);
                         });
}

}  // namespace dcpsched
