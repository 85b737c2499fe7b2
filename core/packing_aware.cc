#include "core/packing_aware.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/compact_schedule.h"
#include "core/cost_model.h"
#include "core/group_fit_index.h"
#include "core/remaining_samples.h"
#include "core/runtime_groups.h"
#include "core/validate.h"
#include "core/vpp_align.h"

namespace dcpsched {
namespace {

// How the step stays fast while returning exactly upstream's result:
//
// - Every member of a CP group carries the same work, so a group is kept
//   once. With M the busiest group's work, the projected busiest rank of
//   putting a sample with per-rank cost `cost` on a group of work w (w = 0
//   for a new group) is max(w + cost, M): for the busiest group itself
//   w + cost >= M already exceeds every other rank.
// - Groups of one size never widen while samples are placed, and len / c is
//   exact for c a power of two, so upstream's double test
//   `packed + len / c > mslpr` is exactly the integer test
//   `token_sum + len > c * mslpr`.
// - Whether a sample fits anywhere (a free run of cp_min ranks, or a group
//   with room) only gets harder as the step goes on and easier for shorter
//   samples. So the step computes the longest sample that could still fit
//   and jumps straight to the next remaining sample no longer than that;
//   the samples it skips are exactly the ones upstream rejects.
// - The remaining samples are the sorted batch minus those placed, so the
//   whole schedule sorts once and each sample is placed once.
// - Under max_num_seqs, a group that holds that many samples is closed in
//   its size's index, so no search finds it: upstream skips it outright.
//   Closing only takes placements away, so the longest sample that could
//   still fit keeps shrinking, and the jump above stays exact.
constexpr std::size_t kNoPosition = static_cast<std::size_t>(-1);

std::size_t SizeClass(std::int64_t power_of_two) {
  return static_cast<std::size_t>(
      std::countr_zero(static_cast<std::uint64_t>(power_of_two)));
}

// A CP group of the microbatch being built. Its samples are positions in
// the sorted batch, linked in placement order.
struct Group {
  std::int64_t size = 0;
  std::size_t slot = 0;        // number in its size's GroupFitIndex
  std::int64_t token_sum = 0;  // sum of lens: size * tokens per rank, exact
  std::int64_t count = 0;      // samples it holds (each member holds all)
  double work = 0.0;           // work of each member
  std::size_t first = kNoPosition;
  std::size_t last = kNoPosition;
};

// The best placement found so far for one sample: join `group`, or open a
// new group of `cp_size` ranks when there is none.
struct Choice {
  double projected_max = 0.0;
  std::int64_t cp_size = 0;
  std::optional<std::size_t> group;
};

class PackingAwareBuilder {
 public:
  PackingAwareBuilder(absl::Span<const Sample> samples,
                      const DynamicCpOptions& options)
      : options_(options),
        remaining_(samples),
        next_in_group_(remaining_.size(), kNoPosition) {
    const std::int64_t widest_power =
        static_cast<std::int64_t>(std::bit_floor(
            static_cast<std::uint64_t>(options.total_gpus)));
    fit_.reserve(SizeClass(widest_power) + 1);
    group_of_slot_.resize(SizeClass(widest_power) + 1);
    for (std::int64_t size = 1; size <= widest_power; size *= 2) {
      const std::size_t most_groups = std::min(
          static_cast<std::size_t>(options.total_gpus / size), remaining_.size());
      fit_.emplace_back(size < options.min_cp_size ? 0 : most_groups);
    }
  }

  bool done() const { return remaining_.empty(); }

  // Builds the next microbatch from the remaining samples and takes its
  // samples out of them. Without `fill`, ranks no sample reached stay free.
  absl::Status Step(bool fill) {
    StartStep();
    PlaceSamples();
    if (fill) {
      if (absl::Status status = FillFreeRanks(); !status.ok()) return status;
    }
    for (const Group& group : groups_) {
      for (std::size_t p = group.first; p != kNoPosition; p = next_in_group_[p]) {
        remaining_.Remove(p);
      }
    }
    return absl::OkStatus();
  }

  // The microbatch of the last Step as its groups, in rank order. Without
  // the fill step they tile only the ranks some sample reached.
  CompactMicrobatch TakeCompactMicrobatch() const {
    CompactMicrobatch microbatch;
    microbatch.groups.reserve(groups_.size());
    std::int64_t first_rank = 0;
    for (const Group& group : groups_) {
      microbatch.groups.push_back(CpGroupIds{first_rank, group.size, IdsOf(group)});
      first_rank += group.size;
    }
    return microbatch;
  }

  // The last Step's microbatch as upstream's step returns it: per rank its
  // lens, ids and work (ranks in no group empty, work 0), and the samples
  // still remaining as its leftovers.
  PackedMicrobatch TakePackedMicrobatch() {
    const auto ranks = static_cast<std::size_t>(options_.total_gpus);
    PackedMicrobatch packed;
    packed.microbatch.rank_ids.reserve(ranks);
    packed.rank_lens.reserve(ranks);
    packed.rank_work.reserve(ranks);
    for (const Group& group : groups_) {
      const std::vector<SampleId> ids = IdsOf(group);
      std::vector<std::int64_t> lens;
      for (std::size_t p = group.first; p != kNoPosition; p = next_in_group_[p]) {
        lens.push_back(remaining_.at(p).len);
      }
      const auto members = static_cast<std::size_t>(group.size);
      packed.microbatch.rank_ids.insert(packed.microbatch.rank_ids.end(), members, ids);
      packed.rank_lens.insert(packed.rank_lens.end(), members, lens);
      packed.rank_work.insert(packed.rank_work.end(), members, group.work);
    }
    packed.microbatch.rank_ids.resize(ranks);
    packed.rank_lens.resize(ranks);
    packed.rank_work.resize(ranks, 0.0);
    packed.leftovers = remaining_.ToVector();
    return packed;
  }

 private:
  std::int64_t MinCp(std::int64_t len) const {
    return MinCpSize(len, options_.max_seq_len_per_rank, options_.min_cp_size);
  }

  std::int64_t TokenBudget(std::int64_t cp_size) const {
    return cp_size * options_.max_seq_len_per_rank;
  }

  std::vector<SampleId> IdsOf(const Group& group) const {
    std::vector<SampleId> ids;
    for (std::size_t p = group.first; p != kNoPosition; p = next_in_group_[p]) {
      ids.push_back(remaining_.at(p).id);
    }
    return ids;
  }

  void StartStep() {
    for (GroupFitIndex& index : fit_) index.Clear();
    for (std::vector<std::size_t>& groups : group_of_slot_) groups.clear();
    groups_.clear();
    free_ranks_ = options_.total_gpus;
    max_work_ = 0.0;
  }

  // The specification's steps 3-5: the longest remaining sample opens the first group, then
  // every later sample that fits somewhere takes its best placement.
  void PlaceSamples() {
    std::size_t position = remaining_.FirstAtOrAfter(0);
    const std::int64_t tallest = remaining_.at(position).len;
    cap_ = WorkCap(tallest, options_.max_seq_len_per_rank);
    Open(position, MinCp(tallest));
    while (true) {
      const std::int64_t longest = LongestThatFits();
      if (longest <= 0) return;
      position = remaining_.FirstNoLongerThan(longest, position + 1);
      if (position == remaining_.size()) return;
      if (const std::optional<Choice> choice = BestPlacement(remaining_.at(position).len)) {
        Place(position, *choice);
      }
    }
  }

  // The longest sample that has a placement by tokens and free ranks alone:
  // a run of free ranks, or the emptiest group of some size.
  std::int64_t LongestThatFits() const {
    std::int64_t longest = 0;
    if (free_ranks_ >= options_.min_cp_size) {
      longest = TokenBudget(static_cast<std::int64_t>(
          std::bit_floor(static_cast<std::uint64_t>(free_ranks_))));
    }
    for (std::size_t size_class = 0; size_class < fit_.size(); ++size_class) {
      if (fit_[size_class].size() == 0) continue;
      longest = std::max(longest, TokenBudget(std::int64_t{1} << size_class) -
                                      fit_[size_class].MinTokens());
    }
    return longest;
  }

  // The specification's step 5: every CP size from the sample's minimum up; at each, the
  // groups of that size oldest first, then a new group. The lowest projected
  // busiest-rank work within the cap wins; ties keep the earlier candidate.
  // No candidate can beat the current busiest group's work, so the search
  // stops once some candidate reaches it.
  std::optional<Choice> BestPlacement(std::int64_t len) const {
    std::optional<Choice> best;
    const auto beats_best = [&](double projected_max) {
      return projected_max <= cap_ && (!best || projected_max < best->projected_max);
    };
    for (std::int64_t cp_size = MinCp(len); cp_size <= options_.total_gpus;
         cp_size *= 2) {
      if (best && best->projected_max == max_work_) break;
      const double cost = Work(len, cp_size);
      const std::size_t size_class = SizeClass(cp_size);
      const GroupFitIndex& index = fit_[size_class];
      const std::int64_t max_tokens = TokenBudget(cp_size) - len;
      const bool can_open = free_ranks_ >= cp_size;
      if (index.size() > 0 && index.MinTokens() <= max_tokens) {
        // The oldest group that stays within the busiest group's work wins
        // outright; failing that, a new group that does, or else the group
        // of least work (the oldest among equal projections).
        if (beats_best(max_work_)) {
          if (std::optional<std::size_t> slot = OldestWithin(index, max_tokens, cost, max_work_)) {
            return Choice{max_work_, cp_size, group_of_slot_[size_class][*slot]};
          }
        }
        if (!(can_open && cost <= max_work_)) {
          const double least = std::max(*index.LeastWork(max_tokens) + cost, max_work_);
          if (beats_best(least)) {
            const std::size_t slot = *OldestWithin(index, max_tokens, cost, least);
            best = Choice{least, cp_size, group_of_slot_[size_class][slot]};
          }
        }
      }
      if (can_open) {
        const double projected_max = std::max(cost, max_work_);
        if (beats_best(projected_max)) best = Choice{projected_max, cp_size, std::nullopt};
      }
    }
    return best;
  }

  // The oldest group of `index` with room for `max_tokens` whose projected
  // busiest rank with `cost` added stays within `limit`.
  std::optional<std::size_t> OldestWithin(const GroupFitIndex& index,
                                          std::int64_t max_tokens, double cost,
                                          double limit) const {
    return index.Oldest(max_tokens, [cost, limit, this](double work) {
      return std::max(work + cost, max_work_) <= limit;
    });
  }

  void Place(std::size_t position, const Choice& choice) {
    if (!choice.group) {
      Open(position, choice.cp_size);
      return;
    }
    Group& group = groups_[*choice.group];
    const std::int64_t len = remaining_.at(position).len;
    group.token_sum += len;
    group.work += Work(len, group.size);
    Link(group, position);
    fit_[SizeClass(group.size)].Update(group.slot, group.token_sum, group.work);
    CloseIfFull(group);
    max_work_ = std::max(max_work_, group.work);
  }

  // Upstream's cap test: a group whose first member holds max_num_seqs
  // samples takes no more.
  bool IsFull(const Group& group) const {
    return options_.max_num_seqs.has_value() &&
           group.count >= *options_.max_num_seqs;
  }

  void CloseIfFull(const Group& group) {
    if (IsFull(group)) fit_[SizeClass(group.size)].Close(group.slot);
  }

  void Open(std::size_t position, std::int64_t cp_size) {
    const std::int64_t len = remaining_.at(position).len;
    const std::size_t size_class = SizeClass(cp_size);
    Group group;
    group.size = cp_size;
    group.token_sum = len;
    group.work = Work(len, cp_size);
    group.slot = fit_[size_class].Append(group.token_sum, group.work);
    group_of_slot_[size_class].push_back(groups_.size());
    Link(group, position);
    CloseIfFull(group);
    free_ranks_ -= cp_size;
    max_work_ = std::max(max_work_, group.work);
    groups_.push_back(group);
  }

  void Link(Group& group, std::size_t position) {
    ++group.count;
    next_in_group_[position] = kNoPosition;
    if (group.first == kNoPosition) {
      group.first = position;
    } else {
      next_in_group_[group.last] = position;
    }
    group.last = position;
  }

  // The specification's step 6: expand-once until no rank is free, else the full-group
  // fallback.
  absl::Status FillFreeRanks() {
    while (free_ranks_ > 0) {
      absl::StatusOr<bool> widened = WidenSmallestGroups();
      if (!widened.ok()) return widened.status();
      if (!*widened) {
        FillWithFullGroup();
        return absl::OkStatus();
      }
    }
    return absl::OkStatus();
  }

  // Upstream's expand-once, repeated while the smallest size stays the same:
  // doubles (up to G) each group of the smallest size in creation order that
  // can grow, until no rank is free. Groups of that size before a widened one
  // could not grow and still cannot, so one pass visits each group once.
  // Returns false if no group could grow.
  absl::StatusOr<bool> WidenSmallestGroups() {
    std::int64_t smallest = options_.total_gpus;
    for (const Group& group : groups_) smallest = std::min(smallest, group.size);
    const std::int64_t widened_size = std::min(2 * smallest, options_.total_gpus);
    const std::int64_t growth = widened_size - smallest;
    bool widened_any = false;
    std::int64_t first_rank = 0;
    for (Group& group : groups_) {
      const std::int64_t last_member = first_rank + group.size - 1;
      // Upstream also skips a group ending after the first free rank; groups
      // end before the free tail by construction, so that never happens here.
      if (group.size == smallest && last_member + growth < options_.total_gpus) {
        const std::int64_t first_free = options_.total_gpus - free_ranks_;
        if (first_free - 1 + growth >= options_.total_gpus) {
          return absl::FailedPreconditionError(absl::StrCat(
              "packing-aware fill step: widening the CP group on ranks ",
              first_rank, "-", last_member, " from ", smallest, " to ",
              widened_size, " ranks would push rank ", first_free - 1,
              " past the last rank of total_gpus=", options_.total_gpus,
              " (upstream fails here with IndexError); use a power-of-two "
              "total_gpus or a larger max_seq_len_per_rank"));
        }
        Widen(group, widened_size);
        free_ranks_ -= growth;
        widened_any = true;
        if (free_ranks_ == 0) break;
      }
      first_rank += group.size;
    }
    return widened_any;
  }

  void Widen(Group& group, std::int64_t new_size) {
    double work = 0.0;
    for (std::size_t p = group.first; p != kNoPosition; p = next_in_group_[p]) {
      work += Work(remaining_.at(p).len, new_size);
    }
    group.size = new_size;
    group.work = work;
  }

  // Upstream's fill_with_full_dpxcp_group: discards the placement and puts
  // every remaining sample that fits, longest first, on one group of all G
  // ranks, up to max_num_seqs of them. The tallest always fits:
  // cp_min(tallest) <= G and max_num_seqs >= 1.
  void FillWithFullGroup() {
    const std::int64_t all_ranks = options_.total_gpus;
    const double budget = static_cast<double>(options_.max_seq_len_per_rank);
    Group full;
    full.size = all_ranks;
    double packed = 0.0;
    const auto fits = [&packed, all_ranks, budget](std::int64_t len) {
      return packed + TokensPerRank(len, all_ranks) <= budget;
    };
    for (std::size_t position = remaining_.FirstFitting(fits, 0);
         position != remaining_.size() && !IsFull(full);
         position = remaining_.FirstFitting(fits, position + 1)) {
      const std::int64_t len = remaining_.at(position).len;
      packed += TokensPerRank(len, all_ranks);
      full.work += Work(len, all_ranks);
      Link(full, position);
    }
    groups_.assign(1, full);
    free_ranks_ = 0;
  }

  const DynamicCpOptions& options_;
  RemainingSamples remaining_;
  // Per sorted position: the next sample of its group (kNoPosition: last).
  std::vector<std::size_t> next_in_group_;
  // Per size class 2^k: the step's groups of that size.
  std::vector<GroupFitIndex> fit_;
  std::vector<std::vector<std::size_t>> group_of_slot_;
  // The microbatch being built: groups in creation order, which is rank
  // order; the free ranks are the tail.
  std::vector<Group> groups_;
  std::int64_t free_ranks_ = 0;
  double max_work_ = 0.0;
  double cap_ = 0.0;
};

absl::StatusOr<PackedMicrobatch> OneStep(absl::Span<const Sample> samples,
                                         const DynamicCpOptions& options,
                                         bool fill) {
  if (absl::Status status = ValidateDynamicCpProblem(samples, options);
      !status.ok()) {
    return status;
  }
  PackingAwareBuilder builder(samples, options);
  if (builder.done()) {
    PackedMicrobatch empty;
    const auto ranks = static_cast<std::size_t>(options.total_gpus);
    empty.rank_lens.resize(ranks);
    empty.microbatch.rank_ids.resize(ranks);
    empty.rank_work.assign(ranks, 0.0);
    return empty;
  }
  if (absl::Status status = builder.Step(fill); !status.ok()) return status;
  return builder.TakePackedMicrobatch();
}

}  // namespace

absl::StatusOr<PackedMicrobatch> PackingAwareStep(
    absl::Span<const Sample> samples, const DynamicCpOptions& options) {
  return OneStep(samples, options, /*fill=*/true);
}

absl::StatusOr<PackedMicrobatch> PackingAwarePlacement(
    absl::Span<const Sample> samples, const DynamicCpOptions& options) {
  return OneStep(samples, options, /*fill=*/false);
}

absl::StatusOr<CompactSchedule> ScheduleDynamicCpAsUpstream(
    absl::Span<const Sample> samples, const DynamicCpOptions& options) {
  if (absl::Status status = ValidateDynamicCpProblem(samples, options);
      !status.ok()) {
    return status;
  }
  PackingAwareBuilder builder(samples, options);
  CompactSchedule schedule;
  while (!builder.done()) {
    if (absl::Status status = builder.Step(/*fill=*/true); !status.ok()) {
      return status;
    }
    schedule.microbatches.push_back(builder.TakeCompactMicrobatch());
  }
  if (options.vpp_group.has_value() && *options.vpp_group > 1) {
    return AlignToVppGroup(std::move(schedule), *options.vpp_group);
  }
  return schedule;
}

absl::StatusOr<CompactSchedule> ScheduleDynamicCpCompact(
    absl::Span<const Sample> samples, const DynamicCpOptions& options) {
  absl::StatusOr<CompactSchedule> schedule = ScheduleDynamicCpAsUpstream(samples, options);
  if (!schedule.ok()) return schedule;
  if (absl::Status status =
          CheckSchedulerOutputRunnable(*schedule, options, "packing-aware");
      !status.ok()) {
    return status;
  }
  return schedule;
}

absl::StatusOr<Schedule> ScheduleDynamicCp(absl::Span<const Sample> samples,
                                           const DynamicCpOptions& options) {
  absl::StatusOr<CompactSchedule> compact =
      ScheduleDynamicCpCompact(samples, options);
  if (!compact.ok()) return compact.status();
  return ExpandSchedule(*compact);
}

}  // namespace dcpsched
