#include "oracle/reference_oracle.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/types.h"
#include "oracle/reference_checker.h"
#include "oracle/reference_definitions.h"

namespace dcpsched::oracle {
namespace {

// Per rank, the ids it holds.
using RankIds = std::vector<std::vector<SampleId>>;
// Per rank, the lengths it holds.
using RankLens = std::vector<std::vector<std::int64_t>>;

// Longest first; equal lengths keep their input order (Python's stable
// sorted(..., reverse=True)).
std::vector<Sample> SortedLongestFirst(absl::Span<const Sample> samples) {
  std::vector<Sample> sorted(samples.begin(), samples.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Sample& a, const Sample& b) { return a.len > b.len; });
  return sorted;
}

// ---------------------------------------------------------------------------
// Packing-aware step (the specification's "Packing-aware step").
// ---------------------------------------------------------------------------

// A CP group of this step: the ranks it holds (ascending), its size and the
// tokens it has packed on each of them.
struct CpGroup {
  std::vector<std::int64_t> members;
  std::int64_t size = 0;
  double packed = 0.0;
};

// Everything the step tracks, per rank and per group, like upstream does.
struct StepState {
  RankLens rank_lens;
  RankIds rank_ids;
  std::vector<double> rank_time;
  std::vector<bool> rank_in_group;  // upstream: gpu_group_id[r] is not None
  std::vector<CpGroup> groups;      // in creation order
};

StepState EmptyStepState(std::int64_t gpus) {
  const auto size = static_cast<std::size_t>(gpus);
  StepState state;
  state.rank_lens.assign(size, {});
  state.rank_ids.assign(size, {});
  state.rank_time.assign(size, 0.0);
  state.rank_in_group.assign(size, false);
  return state;
}

// The ranks after widening group g to `widened` ranks: ranks before the group
// stay, the group's last rank is copied onto all its new ranks (each with
// `copied_time`), and the ranks from after the group up to the first empty
// rank move up by the added width. Groups other than g keep their members;
// the caller moves those that lie after g.
StepState WidenGroup(const StepState& state, std::int64_t gpus, std::size_t g,
                     std::int64_t widened, std::int64_t empty,
                     double copied_time) {
  const std::int64_t first = state.groups[g].members.front();
  const std::int64_t last = state.groups[g].members.back();
  const std::int64_t need = widened - state.groups[g].size;
  StepState next = EmptyStepState(gpus);
  next.rank_in_group = state.rank_in_group;
  for (std::int64_t r = 0; r < first; ++r) {
    const auto i = static_cast<std::size_t>(r);
    next.rank_lens[i] = state.rank_lens[i];
    next.rank_ids[i] = state.rank_ids[i];
    next.rank_time[i] = state.rank_time[i];
  }
  const auto source = static_cast<std::size_t>(last);
  for (std::int64_t r = first; r <= last + need; ++r) {
    const auto i = static_cast<std::size_t>(r);
    next.rank_lens[i] = state.rank_lens[source];
    next.rank_ids[i] = state.rank_ids[source];
    next.rank_time[i] = copied_time;
  }
  for (std::int64_t r = last + 1; r < empty; ++r) {
    const auto from = static_cast<std::size_t>(r);
    const auto to = static_cast<std::size_t>(r + need);
    next.rank_lens[to] = state.rank_lens[from];
    next.rank_ids[to] = state.rank_ids[from];
    next.rank_time[to] = state.rank_time[from];
  }
  next.groups = state.groups;
  CpGroup& grown = next.groups[g];
  grown.size = widened;
  grown.members.clear();
  for (std::int64_t r = first; r <= last + need; ++r) grown.members.push_back(r);
  return next;
}

// Every member rank appends the sample and adds `cost` to its time.
void PutOnRanks(const Sample& sample, const std::vector<std::int64_t>& members,
                double cost, StepState& state) {
  for (const std::int64_t rank : members) {
    const auto r = static_cast<std::size_t>(rank);
    state.rank_lens[r].push_back(sample.len);
    state.rank_ids[r].push_back(sample.id);
    state.rank_time[r] += cost;
  }
}

// Opens a new CP group of `members` holding `sample`.
void OpenGroup(const Sample& sample, std::vector<std::int64_t> members,
               StepState& state) {
  const auto size = static_cast<std::int64_t>(members.size());
  for (const std::int64_t rank : members) {
    state.rank_in_group[static_cast<std::size_t>(rank)] = true;
  }
  PutOnRanks(sample, members, Work(sample.len, size), state);
  state.groups.push_back(
      {std::move(members), size, TokensPerRank(sample.len, size)});
}

// The largest rank time if every rank in `members` gained `cost`: the max
// over all ranks, recomputed from scratch.
double ProjectedMax(const std::vector<double>& rank_time,
                    const std::vector<std::int64_t>& members, double cost) {
  std::vector<bool> is_member(rank_time.size(), false);
  for (const std::int64_t rank : members) {
    is_member[static_cast<std::size_t>(rank)] = true;
  }
  double result = is_member[0] ? rank_time[0] + cost : rank_time[0];
  for (std::size_t r = 1; r < rank_time.size(); ++r) {
    const double projected = is_member[r] ? rank_time[r] + cost : rank_time[r];
    result = std::max(result, projected);
  }
  return result;
}

// The free ranks (in no group), lowest time first, ties by rank (upstream's
// stable sorted(free_ranks, key=time)). A new group of size c takes the
// first c of them.
std::vector<std::int64_t> FreeRanksByTime(const StepState& state) {
  std::vector<std::int64_t> free_ranks;
  for (std::size_t r = 0; r < state.rank_in_group.size(); ++r) {
    if (!state.rank_in_group[r]) {
      free_ranks.push_back(static_cast<std::int64_t>(r));
    }
  }
  std::stable_sort(free_ranks.begin(), free_ranks.end(),
                   [&state](std::int64_t a, std::int64_t b) {
                     return state.rank_time[static_cast<std::size_t>(a)] <
                            state.rank_time[static_cast<std::size_t>(b)];
                   });
  return free_ranks;
}

// One way to place a sample: join group `group` (add) or open a new group on
// `members` (new), with CP size `cp_size`.
struct Candidate {
  double projected_max = 0.0;
  std::int64_t cp_size = 0;
  std::optional<std::size_t> group;     // add: index into StepState::groups
  std::vector<std::int64_t> members;    // new: the ranks of the new group
};

// Keeps `candidate` if it is within the cap and strictly better than `best`.
void Consider(Candidate candidate, double cap, std::optional<Candidate>& best) {
  if (candidate.projected_max > cap) return;
  if (best.has_value() && !(candidate.projected_max < best->projected_max)) {
    return;
  }
  best = std::move(candidate);
}

// True when max_num_seqs is set and the group's first member already holds
// that many samples (upstream's test: len(micro_batches[members[0]])).
bool HoldsTheCap(const StepState& state, const CpGroup& group,
                 const DynamicCpOptions& options) {
  if (!options.max_num_seqs.has_value()) return false;
  const std::vector<std::int64_t>& first_member_lens =
      state.rank_lens[static_cast<std::size_t>(group.members.front())];
  return static_cast<std::int64_t>(first_member_lens.size()) >=
         *options.max_num_seqs;
}

// Step 5: the best placement of `sample` among all CP sizes cp_min, 2cp_min,
// ... <= G, add candidates before the new candidate at each size. A group
// that holds the cap is no add candidate; a new group always may be.
std::optional<Candidate> BestPlacement(const Sample& sample,
                                       const StepState& state,
                                       const DynamicCpOptions& options,
                                       double cap) {
  const std::int64_t gpus = options.total_gpus;
  const auto mslpr = static_cast<double>(options.max_seq_len_per_rank);
  // The state does not change while candidates are compared, so the free
  // ranks are listed once.
  const std::vector<std::int64_t> free_ranks = FreeRanksByTime(state);
  std::optional<Candidate> best;
  for (std::int64_t c = CpMin(sample.len, options.max_seq_len_per_rank,
                              options.min_cp_size);
       c <= gpus; c *= 2) {
    const double cost = Work(sample.len, c);
    for (std::size_t g = 0; g < state.groups.size(); ++g) {
      const CpGroup& group = state.groups[g];
      if (group.size != c) continue;
      if (HoldsTheCap(state, group, options)) continue;
      if (group.packed + TokensPerRank(sample.len, c) > mslpr) continue;
      Consider({ProjectedMax(state.rank_time, group.members, cost), c, g, {}},
               cap, best);
    }
    if (static_cast<std::int64_t>(free_ranks.size()) >= c) {
      const std::vector<std::int64_t> lowest(
          free_ranks.begin(), free_ranks.begin() + static_cast<std::ptrdiff_t>(c));
      Consider({ProjectedMax(state.rank_time, lowest, cost), c, std::nullopt,
                lowest},
               cap, best);
    }
  }
  return best;
}

void ApplyPlacement(const Sample& sample, Candidate placement,
                    StepState& state) {
  if (placement.group.has_value()) {
    CpGroup& group = state.groups[*placement.group];
    group.packed += TokensPerRank(sample.len, placement.cp_size);
    PutOnRanks(sample, group.members, Work(sample.len, placement.cp_size),
               state);
  } else {
    OpenGroup(sample, std::move(placement.members), state);
  }
}

// First rank holding nothing, or G if every rank holds something.
std::int64_t FirstEmptyRank(const RankLens& rank_lens) {
  for (std::size_t r = 0; r < rank_lens.size(); ++r) {
    if (rank_lens[r].empty()) return static_cast<std::int64_t>(r);
  }
  return static_cast<std::int64_t>(rank_lens.size());
}

// Sum from 0, in list order, of work(len, cp_size) over `lens` (Python's
// sum() over a generator).
double SumOfWork(const std::vector<std::int64_t>& lens, std::int64_t cp_size) {
  double total = 0.0;
  for (const std::int64_t len : lens) total += Work(len, cp_size);
  return total;
}

// expand-once: widens the first qualifying group of the smallest size to
// min(2m, G) ranks, pushing the ranks after it into the empty tail. Returns
// false when no group qualifies.
absl::StatusOr<bool> ExpandOnce(StepState& state, std::int64_t gpus) {
  const std::int64_t empty = FirstEmptyRank(state.rank_lens);
  if (empty == gpus) return false;
  for (std::int64_t r = empty; r < gpus; ++r) {
    if (!state.rank_lens[static_cast<std::size_t>(r)].empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "packing-aware fill: empty ranks are not a contiguous tail (rank ",
          empty, " is empty, rank ", r, " is not)"));
    }
  }
  if (state.groups.empty()) return false;
  std::int64_t smallest = state.groups[0].size;
  for (const CpGroup& group : state.groups) {
    smallest = std::min(smallest, group.size);
  }
  const std::int64_t widened = std::min(2 * smallest, gpus);
  const std::int64_t need = widened - smallest;

  for (std::size_t g = 0; g < state.groups.size(); ++g) {
    if (state.groups[g].size != smallest) continue;
    const std::int64_t first = state.groups[g].members.front();
    const std::int64_t last = state.groups[g].members.back();
    if (last + 1 > empty || last + need >= gpus) continue;
    if (empty - 1 + need >= gpus) {
      return absl::FailedPreconditionError(absl::StrCat(
          "packing-aware fill (expand-once): widening the CP group on ranks ",
          first, "..", last, " to ", widened, " ranks would move rank ",
          empty - 1, " to rank ", empty - 1 + need, ", past the last of G=",
          gpus, " ranks (upstream: IndexError)"));
    }
    const double copied_time = SumOfWork(
        state.rank_lens[static_cast<std::size_t>(last)], widened);
    StepState next = WidenGroup(state, gpus, g, widened, empty, copied_time);
    for (std::size_t other = 0; other < next.groups.size(); ++other) {
      if (other == g) continue;
      std::vector<std::int64_t>& members = next.groups[other].members;
      if (*std::min_element(members.begin(), members.end()) > last) {
        for (std::int64_t& rank : members) rank += need;
      }
    }
    state = std::move(next);
    return true;
  }
  return false;
}

// full-group fallback: the step's samples (sorted) are taken in order while
// fewer than max_num_seqs are taken and they fit on all G ranks; every rank
// holds all taken samples.
absl::Status FillWithFullGroup(const std::vector<Sample>& sorted,
                               const DynamicCpOptions& options,
                               StepState& state,
                               std::vector<Sample>& leftovers) {
  const std::int64_t gpus = options.total_gpus;
  const auto mslpr = static_cast<double>(options.max_seq_len_per_rank);
  std::vector<std::int64_t> taken_lens;
  std::vector<SampleId> taken_ids;
  std::vector<Sample> rest;
  double packed = 0.0;
  for (const Sample& sample : sorted) {
    const double per_rank = TokensPerRank(sample.len, gpus);
    const bool below_cap =
        !options.max_num_seqs.has_value() ||
        static_cast<std::int64_t>(taken_ids.size()) < *options.max_num_seqs;
    if (below_cap && packed + per_rank <= mslpr) {
      taken_lens.push_back(sample.len);
      taken_ids.push_back(sample.id);
      packed += per_rank;
    } else {
      rest.push_back(sample);
    }
  }
  if (taken_lens.empty()) {
    return absl::FailedPreconditionError(
        "packing-aware fill: no sample fits in the full DPxCP group");
  }
  const double time = SumOfWork(taken_lens, gpus);
  const auto size = static_cast<std::size_t>(gpus);
  state.rank_lens.assign(size, taken_lens);
  state.rank_ids.assign(size, taken_ids);
  state.rank_time.assign(size, time);
  leftovers = std::move(rest);
  return absl::OkStatus();
}

// Step 6: expand-once until no rank is empty, or the full-group fallback.
absl::Status FillEmptyRanks(const std::vector<Sample>& sorted,
                            const DynamicCpOptions& options, StepState& state,
                            std::vector<Sample>& leftovers) {
  const std::int64_t gpus = options.total_gpus;
  // Every successful expand-once fills at least one empty rank, so G + 1
  // rounds always suffice; the bound only guards against a logic error.
  for (std::int64_t round = 0; FirstEmptyRank(state.rank_lens) < gpus;
       ++round) {
    if (round > gpus) {
      return absl::InternalError("packing-aware fill did not terminate");
    }
    absl::StatusOr<bool> expanded = ExpandOnce(state, gpus);
    if (!expanded.ok()) return expanded.status();
    if (!*expanded) return FillWithFullGroup(sorted, options, state, leftovers);
  }
  return absl::OkStatus();
}

// The step on validated input.
// One step; without `fill`, the specification's step 6 is left out (the placement alone).
absl::StatusOr<PackedMicrobatch> RunStep(absl::Span<const Sample> samples,
                                         const DynamicCpOptions& options,
                                         bool fill = true) {
  const std::int64_t gpus = options.total_gpus;
  StepState state = EmptyStepState(gpus);
  std::vector<Sample> leftovers;
  if (!samples.empty()) {
    const std::vector<Sample> sorted = SortedLongestFirst(samples);
    const Sample& tallest = sorted.front();
    const double cap = WorkCap(tallest.len, options.max_seq_len_per_rank);
    const std::int64_t first_size = CpMin(
        tallest.len, options.max_seq_len_per_rank, options.min_cp_size);
    std::vector<std::int64_t> first_members;
    for (std::int64_t r = 0; r < first_size; ++r) first_members.push_back(r);
    OpenGroup(tallest, std::move(first_members), state);
    for (std::size_t i = 1; i < sorted.size(); ++i) {
      std::optional<Candidate> best =
          BestPlacement(sorted[i], state, options, cap);
      if (best.has_value()) {
        ApplyPlacement(sorted[i], std::move(*best), state);
      } else {
        leftovers.push_back(sorted[i]);
      }
    }
    if (fill) {
      absl::Status status = FillEmptyRanks(sorted, options, state, leftovers);
      if (!status.ok()) return status;
    }
  }
  PackedMicrobatch result;
  result.rank_lens = std::move(state.rank_lens);
  result.microbatch.rank_ids = std::move(state.rank_ids);
  result.rank_work = std::move(state.rank_time);
  result.leftovers = std::move(leftovers);
  return result;
}

// ---------------------------------------------------------------------------
// VPP alignment (the specification's "VPP alignment").
// ---------------------------------------------------------------------------

bool Holds(const std::vector<SampleId>& ids, SampleId id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// `ranks[start, start+size)` copied right after itself, everything after it
// up to `filled` moved right by `size`, the rest empty; the width stays. The
// caller checks that the empty tail holds `size` ranks.
RankIds DoubleRun(const RankIds& ranks, std::size_t start, std::size_t size,
                  std::size_t filled) {
  RankIds result;
  result.reserve(ranks.size());
  for (std::size_t r = 0; r < start + size; ++r) result.push_back(ranks[r]);
  for (std::size_t r = start; r < start + size; ++r) result.push_back(ranks[r]);
  for (std::size_t r = start + size; r < filled; ++r) result.push_back(ranks[r]);
  result.resize(ranks.size());
  return result;
}

// One round of expand-runs (upstream's fill_empty): scans runs right to left
// and doubles one of them into the empty tail.
absl::StatusOr<RankIds> DoubleOneRun(const RankIds& ranks) {
  std::size_t empty = 0;
  for (const std::vector<SampleId>& ids : ranks) {
    if (ids.empty()) ++empty;
  }
  const std::size_t filled = ranks.size() - empty;
  for (std::size_t r = 0; r < filled; ++r) {
    if (ranks[r].empty()) {
      return absl::FailedPreconditionError(
          "VPP alignment (expand-runs): empty ranks are not a contiguous tail");
    }
  }
  // Signed cursor: it ends at -1, like upstream's i.
  auto i = static_cast<std::int64_t>(filled) - 1;
  std::size_t previous = 0;
  while (i >= 0) {
    const SampleId first_id = ranks[static_cast<std::size_t>(i)][0];
    std::size_t size = 0;
    while (i >= 0 && Holds(ranks[static_cast<std::size_t>(i)], first_id)) {
      ++size;
      --i;
    }
    if (previous != 0 && size > previous) {
      if (previous > empty) {
        return absl::FailedPreconditionError(absl::StrCat(
            "VPP alignment (expand-runs): doubling a run of ", previous,
            " ranks needs more ranks than the ", empty,
            " empty ones (upstream makes the microbatch wider than G=",
            ranks.size(), ")"));
      }
      const auto start = static_cast<std::size_t>(i + 1) + size;
      return DoubleRun(ranks, start, previous, filled);
    }
    if (size <= empty && i == -1) return DoubleRun(ranks, 0, size, filled);
    previous = size;
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "VPP alignment (expand-runs): no run can be doubled into the ", empty,
      " empty ranks of a microbatch of G=", ranks.size(),
      " ranks (upstream loops forever)"));
}

// expand-runs: doubles runs until the last rank holds something.
absl::StatusOr<RankIds> ExpandRuns(RankIds ranks) {
  // Each round fills at least one empty rank.
  for (std::size_t round = 0; ranks.back().empty(); ++round) {
    if (round > ranks.size()) {
      return absl::InternalError("VPP alignment: expand-runs did not end");
    }
    absl::StatusOr<RankIds> next = DoubleOneRun(ranks);
    if (!next.ok()) return next.status();
    ranks = *std::move(next);
  }
  return ranks;
}

// The two halves of a split microbatch: `replacing` takes its place,
// `appended` goes to the end of the schedule.
struct SplitHalves {
  RankIds replacing;
  RankIds appended;
};

// upstream's split_group; nullopt when the microbatch is a single run.
// `from_input` says whether the microbatch came from the caller (a run
// growing left to right is then a malformed input, InvalidArgument) or was
// built by an earlier split (upstream's assertion fails on its own output,
// FailedPrecondition).
absl::StatusOr<std::optional<SplitHalves>> SplitMicrobatch(const RankIds& ranks,
                                                           bool from_input) {
  const std::size_t width = ranks.size();
  std::vector<std::size_t> boundaries = {0};
  std::size_t previous = 0;
  while (boundaries.back() != width) {
    const std::size_t start = boundaries.back();
    const SampleId first_id = ranks[start][0];
    std::size_t size = 0;
    for (std::size_t r = start; r < width && Holds(ranks[r], first_id); ++r) {
      ++size;
    }
    // The scheduler never builds such a microbatch (groups are created and
    // widened largest first).
    if (previous != 0 && size > previous) {
      const std::string message = absl::StrCat(
          "VPP alignment (split): CP run sizes are not non-increasing: a run "
          "of ", size, " ranks at rank ", start, " follows one of ", previous,
          from_input ? " in an input microbatch"
                     : " in a microbatch an earlier split built");
      return from_input ? absl::InvalidArgumentError(message)
                        : absl::FailedPreconditionError(message);
    }
    boundaries.push_back(start + size);
    previous = size;
  }
  if (boundaries.size() == 2) return std::optional<SplitHalves>();
  std::size_t k = 0;
  while (boundaries[k] < width / 2) ++k;
  const std::size_t cut = boundaries[k];
  if (cut == 0 || cut >= width) {
    return absl::FailedPreconditionError(
        "VPP alignment (split): no cut inside the microbatch");
  }
  RankIds before(ranks.begin(), ranks.begin() + static_cast<std::ptrdiff_t>(cut));
  before.resize(width);
  RankIds after(ranks.begin() + static_cast<std::ptrdiff_t>(cut), ranks.end());
  after.resize(width);
  absl::StatusOr<RankIds> widened_before = ExpandRuns(std::move(before));
  if (!widened_before.ok()) return widened_before.status();
  absl::StatusOr<RankIds> widened_after = ExpandRuns(std::move(after));
  if (!widened_after.ok()) return widened_after.status();
  return std::optional<SplitHalves>(
      SplitHalves{*std::move(widened_after), *std::move(widened_before)});
}

absl::Status ValidateScheduleShape(const Schedule& schedule) {
  if (schedule.microbatches.empty()) return absl::OkStatus();
  const std::size_t width = schedule.microbatches[0].rank_ids.size();
  if (width == 0) {
    return absl::InvalidArgumentError("VPP alignment: microbatch 0 has no ranks");
  }
  for (std::size_t m = 0; m < schedule.microbatches.size(); ++m) {
    const RankIds& ranks = schedule.microbatches[m].rank_ids;
    if (ranks.size() != width) {
      return absl::InvalidArgumentError(absl::StrCat(
          "VPP alignment: microbatch ", m, " has ", ranks.size(),
          " ranks, microbatch 0 has ", width));
    }
    for (std::size_t r = 0; r < width; ++r) {
      if (ranks[r].empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "VPP alignment: microbatch ", m, " rank ", r, " is empty"));
      }
    }
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Legacy bucket scheduler (the specification's "Legacy bucket scheduler (before #5154)").
// ---------------------------------------------------------------------------

// A legacy step stops placing once the ranks' times differ by at most this
// fraction of the largest (upstream's delta).
constexpr double kLegacyBalanceDelta = 0.05;
// A bucket closes when its work would pass this multiple of the target
// (upstream's 1.1).
constexpr double kLegacyBucketSlack = 1.1;

// Samples consumed from the front (upstream's deque).
using Bucket = std::deque<Sample>;

// Step 1: cuts `samples`, in the given order, into buckets of about equal
// work (work(len, cp_min(len))), about one per distinct cp_min.
std::vector<Bucket> MakeLegacyBuckets(const std::vector<Sample>& samples,
                                      const DynamicCpOptions& options) {
  std::vector<std::int64_t> distinct_sizes;
  std::vector<double> works;
  for (const Sample& sample : samples) {
    const std::int64_t c = CpMin(sample.len, options.max_seq_len_per_rank,
                                 options.min_cp_size);
    if (std::find(distinct_sizes.begin(), distinct_sizes.end(), c) ==
        distinct_sizes.end()) {
      distinct_sizes.push_back(c);
    }
    works.push_back(Work(sample.len, c));
  }
  double total = 0.0;
  for (const double work : works) total += work;
  const auto k = static_cast<std::int64_t>(distinct_sizes.size());
  const double target = total / static_cast<double>(k);
  const auto n = static_cast<std::int64_t>(samples.size());

  std::vector<Bucket> buckets;
  Bucket current;
  double current_work = 0.0;
  std::int64_t closed = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto index = static_cast<std::size_t>(i);
    const double w = works[index];
    if (!current.empty() && (current_work + w > target * kLegacyBucketSlack ||
                             n - i <= k - 2 * closed)) {
      buckets.push_back(current);
      current.clear();
      current_work = 0.0;
      closed += 1;
    }
    current.push_back(samples[index]);
    current_work += w;
  }
  if (!current.empty()) buckets.push_back(current);
  return buckets;
}

// The largest time among `members`.
double LargestMemberTime(const StepState& state,
                         const std::vector<std::int64_t>& members) {
  double largest = state.rank_time[static_cast<std::size_t>(members[0])];
  for (const std::int64_t rank : members) {
    largest = std::max(largest, state.rank_time[static_cast<std::size_t>(rank)]);
  }
  return largest;
}

// Step 2e: max(time) - min(time) <= delta * max(time) over all G ranks.
bool LegacyBalanced(const std::vector<double>& rank_time) {
  const double most = *std::max_element(rank_time.begin(), rank_time.end());
  const double least = *std::min_element(rank_time.begin(), rank_time.end());
  return most - least <= kLegacyBalanceDelta * most;
}

// Step 2: places bucket heads until no head can go anywhere, no group takes
// the sample, or the ranks are balanced. Leaves the rest in `buckets`.
void PlaceLegacyBuckets(const DynamicCpOptions& options,
                        std::vector<Bucket>& buckets, StepState& state) {
  const auto mslpr = static_cast<double>(options.max_seq_len_per_rank);
  std::optional<std::int64_t> first_c;
  bool check = false;
  while (!buckets.empty()) {
    const std::vector<std::int64_t> free_ranks = FreeRanksByTime(state);
    const auto free_count = static_cast<std::int64_t>(free_ranks.size());
    // a. The first bucket whose head has a group of its size (budget not
    // checked) or enough free ranks.
    std::optional<std::size_t> chosen;
    std::int64_t c = 0;
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      if (buckets[b].empty()) continue;
      const std::int64_t needed =
          CpMin(buckets[b].front().len, options.max_seq_len_per_rank,
                options.min_cp_size);
      bool group_of_that_size = false;
      for (const CpGroup& group : state.groups) {
        if (group.size == needed) group_of_that_size = true;
      }
      if (group_of_that_size || free_count >= needed) {
        chosen = b;
        c = needed;
        break;
      }
    }
    if (!chosen.has_value()) return;
    const Sample sample = buckets[*chosen].front();

    // b. The least loaded group of size c with token room (first on ties).
    std::optional<std::size_t> best_group;
    double best_load = std::numeric_limits<double>::infinity();
    for (std::size_t g = 0; g < state.groups.size(); ++g) {
      const CpGroup& group = state.groups[g];
      if (group.size != c) continue;
      if (group.packed + TokensPerRank(sample.len, c) > mslpr) continue;
      const double load = LargestMemberTime(state, group.members);
      if (!best_group.has_value() || load < best_load) {
        best_group = g;
        best_load = load;
      }
    }

    // c. A new group on the c lowest free ranks, if it is less loaded.
    Candidate placement;
    placement.cp_size = c;
    if (free_count >= c) {
      std::vector<std::int64_t> new_members(
          free_ranks.begin(), free_ranks.begin() + static_cast<std::ptrdiff_t>(c));
      const double new_load =
          state.rank_time[static_cast<std::size_t>(new_members.back())];
      if (new_load < best_load) {
        placement.members = std::move(new_members);
      } else {
        placement.group = best_group;
      }
    } else if (best_group.has_value()) {
      placement.group = best_group;
    } else {
      return;
    }

    // d. Apply, then drop used-up buckets from the front only.
    ApplyPlacement(sample, std::move(placement), state);
    buckets[*chosen].pop_front();
    while (!buckets.empty() && buckets.front().empty()) {
      buckets.erase(buckets.begin());
    }

    // e. Once a smaller CP size than the first has been placed, stop as soon
    // as the ranks are balanced while samples remain.
    if (!first_c.has_value()) first_c = c;
    if (c < *first_c) check = true;
    if (check && !buckets.empty() && LegacyBalanced(state.rank_time)) return;
  }
}

// Step 4, once (upstream's fill_empty_gpus): widens the first group of the
// smallest size to min(2m, G) ranks, each carrying the work of rank t's
// first sample only, and moves the ranks after it into the empty tail.
absl::Status WidenFirstSmallestLegacyGroup(StepState& state,
                                           std::int64_t gpus) {
  if (state.groups.empty()) {
    return absl::FailedPreconditionError(
        "legacy fill: there should be at least one group existing, cannot "
        "redistribute (upstream: AssertionError)");
  }
  std::int64_t smallest = state.groups[0].size;
  for (const CpGroup& group : state.groups) {
    smallest = std::min(smallest, group.size);
  }
  const std::int64_t widened = std::min(2 * smallest, gpus);
  const std::int64_t need = widened - smallest;
  std::size_t g = 0;
  while (state.groups[g].size != smallest) ++g;
  const std::int64_t first = state.groups[g].members.front();
  const std::int64_t last = state.groups[g].members.back();
  const std::int64_t empty = FirstEmptyRank(state.rank_lens);
  const bool moves_ranks = empty - 1 > last;
  if (last + need > gpus - 1 || (moves_ranks && empty - 1 + need > gpus - 1)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "legacy fill: widening the CP group on ranks ", first, "..", last,
        " to ", widened, " ranks needs ranks past the last of G=", gpus,
        " (upstream: IndexError)"));
  }

  const double copied_time = Work(
      state.rank_lens[static_cast<std::size_t>(last)].front(), widened);
  StepState next = WidenGroup(state, gpus, g, widened, empty, copied_time);
  for (std::size_t later = g + 1; later < next.groups.size(); ++later) {
    for (std::int64_t& rank : next.groups[later].members) rank += need;
  }
  state = std::move(next);
  return absl::OkStatus();
}

// One legacy step on `samples` as given (the schedule passes them sorted).
absl::StatusOr<PackedMicrobatch> RunLegacyStep(
    const std::vector<Sample>& samples, const DynamicCpOptions& options) {
  const std::int64_t gpus = options.total_gpus;
  StepState state = EmptyStepState(gpus);
  std::vector<Bucket> buckets;
  if (!samples.empty()) {
    buckets = MakeLegacyBuckets(samples, options);
    PlaceLegacyBuckets(options, buckets, state);
    // Every widening fills at least one empty rank, so G rounds suffice; the
    // bound only guards against a logic error.
    for (std::int64_t round = 0; FirstEmptyRank(state.rank_lens) < gpus;
         ++round) {
      if (round > gpus) {
        return absl::InternalError("legacy fill did not terminate");
      }
      absl::Status status = WidenFirstSmallestLegacyGroup(state, gpus);
      if (!status.ok()) return status;
    }
  }
  PackedMicrobatch result;
  for (const Bucket& bucket : buckets) {
    result.leftovers.insert(result.leftovers.end(), bucket.begin(), bucket.end());
  }
  result.rank_lens = std::move(state.rank_lens);
  result.microbatch.rank_ids = std::move(state.rank_ids);
  result.rank_work = std::move(state.rank_time);
  return result;
}

// ---------------------------------------------------------------------------
// DP-balanced (the specification's "DP-balanced schedule").
// ---------------------------------------------------------------------------

absl::Status ValidateDpBalancedProblem(absl::Span<const std::int64_t> lens,
                                       const DpBalancedOptions& options) {
  if (options.dp_size < 1 || options.dp_size > kMaxTotalGpus ||
      options.cp_size < 1 || options.cp_size > kMaxTotalGpus ||
      options.dp_size * options.cp_size > kMaxTotalGpus) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dp_size and cp_size must be >= 1 with dp_size * cp_size <= 65536, "
        "got dp_size=", options.dp_size, " cp_size=", options.cp_size));
  }
  absl::Status status = ValidateSeqLenPerRank(options.max_seq_len_per_rank);
  if (!status.ok()) return status;
  status = ValidateMaxNumSeqs(options.max_num_seqs);
  if (!status.ok()) return status;
  status = ValidateVppGroup(options.vpp_group);
  if (!status.ok()) return status;
  const std::int64_t limit = options.max_seq_len_per_rank * options.cp_size;
  for (std::size_t i = 0; i < lens.size(); ++i) {
    status = ValidateSampleLen(lens[i], absl::StrCat("sample at position ", i));
    if (!status.ok()) return status;
    if (lens[i] > limit) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sample at position ", i, " has length ", lens[i],
          ", longer than max_seq_len_per_rank * cp_size = ", limit));
    }
  }
  return absl::OkStatus();
}

// Positions packed in order into sequences of at most mslpr * cp_size tokens
// and at most max_num_seqs samples.
std::vector<std::vector<std::int64_t>> PackInOrder(
    absl::Span<const std::int64_t> lens, const DpBalancedOptions& options) {
  const std::int64_t limit = options.max_seq_len_per_rank * options.cp_size;
  std::vector<std::vector<std::int64_t>> packed;
  std::vector<std::int64_t> current;
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < lens.size(); ++i) {
    const bool room =
        sum + lens[i] <= limit &&
        (!options.max_num_seqs.has_value() ||
         static_cast<std::int64_t>(current.size()) < *options.max_num_seqs);
    if (room) {
      current.push_back(static_cast<std::int64_t>(i));
      sum += lens[i];
    } else {
      packed.push_back(std::move(current));
      current = {static_cast<std::int64_t>(i)};
      sum = lens[i];
    }
  }
  if (!current.empty()) packed.push_back(std::move(current));
  return packed;
}

// Moves single samples off the tail until the number of packed sequences is a
// multiple of dp_size * vpp_group.
absl::Status MakeMultiple(const DpBalancedOptions& options,
                          std::vector<std::vector<std::int64_t>>& packed) {
  const std::int64_t count = static_cast<std::int64_t>(packed.size());
  const std::int64_t vpp = options.vpp_group.value_or(1);
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  if (vpp > max / options.dp_size) {
    // The multiple exceeds every possible count (at most one sequence per
    // sample), so only zero sequences are a multiple of it.
    if (count == 0) return absl::OkStatus();
    return absl::FailedPreconditionError(
        "dp_balanced: not enough samples to move (dp_size * vpp_group is "
        "larger than any number of packed sequences)");
  }
  const std::int64_t multiple = options.dp_size * vpp;
  if (count % multiple == 0) return absl::OkStatus();
  std::int64_t to_move = multiple - count % multiple;
  std::int64_t i = count - 1;
  // Each round either moves a sample (at most one per sample) or steps the
  // cursor left, so this ends.
  while (to_move > 0) {
    if (i < 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "dp_balanced: not enough samples to move to make ", count,
          " packed sequences a multiple of dp_size * vpp_group = ", multiple));
    }
    std::vector<std::int64_t>& sequence = packed[static_cast<std::size_t>(i)];
    if (sequence.size() > 1) {
      const std::int64_t position = sequence.back();
      sequence.pop_back();
      packed.push_back({position});
      --to_move;
    } else {
      --i;
    }
  }
  return absl::OkStatus();
}

// Steps on the leftovers, longest first, until every sample is placed, then
// VPP alignment when vpp_group > 1 (the specification's "Dynamic-CP schedule"); shared by
// the packing-aware and the legacy schedule.
template <typename Step>
absl::StatusOr<Schedule> ScheduleBySteps(absl::Span<const Sample> samples,
                                         const DynamicCpOptions& options,
                                         absl::string_view scheduler, Step step) {
  Schedule schedule;
  std::vector<Sample> remaining = SortedLongestFirst(samples);
  while (!remaining.empty()) {
    absl::StatusOr<PackedMicrobatch> built = step(remaining);
    if (!built.ok()) return built.status();
    if (built->leftovers.size() >= remaining.size()) {
      return absl::InternalError(absl::StrCat(scheduler, " step placed no sample"));
    }
    schedule.microbatches.push_back(std::move(built->microbatch));
    remaining = std::move(built->leftovers);
  }
  if (options.vpp_group.has_value() && *options.vpp_group > 1) {
    return ReferenceAlignToVppGroup(std::move(schedule), *options.vpp_group);
  }
  return schedule;
}

// Megatron-LM's runtime must be able to run what a scheduler returns: a
// schedule the reference checker finds breaking invariant 11 is refused.
absl::StatusOr<Schedule> RefuseUnrunnable(absl::Span<const Sample> samples,
                                          const DynamicCpOptions& options,
                                          absl::StatusOr<Schedule> schedule) {
  if (!schedule.ok()) return schedule;
  for (const ReferenceFinding& finding : ReferenceFindViolations(samples, *schedule, options)) {
    if (finding.invariant != 11) continue;
    return absl::FailedPreconditionError(absl::StrCat(
        "upstream returns a schedule its runtime cannot run: invariant 11 (runtime "
        "groups) at microbatch ",
        finding.microbatch, " rank ", finding.rank));
  }
  return schedule;
}

}  // namespace

absl::StatusOr<PackedMicrobatch> ReferencePackingAwareStep(
    absl::Span<const Sample> samples, const DynamicCpOptions& options) {
  absl::Status status = ValidateDynamicCpProblem(samples, options);
  if (!status.ok()) return status;
  return RunStep(samples, options);
}

absl::StatusOr<PackedMicrobatch> ReferencePackingAwarePlacement(
    absl::Span<const Sample> samples, const DynamicCpOptions& options) {
  absl::Status status = ValidateDynamicCpProblem(samples, options);
  if (!status.ok()) return status;
  return RunStep(samples, options, /*fill=*/false);
}

absl::StatusOr<Schedule> ReferenceScheduleDynamicCp(
    absl::Span<const Sample> samples, const DynamicCpOptions& options) {
  return RefuseUnrunnable(samples, options,
                          ReferenceScheduleDynamicCpAsUpstream(samples, options));
}

absl::StatusOr<Schedule> ReferenceScheduleLegacy(
    absl::Span<const Sample> samples, const DynamicCpOptions& options) {
  return RefuseUnrunnable(samples, options, ReferenceScheduleLegacyAsUpstream(samples, options));
}

absl::StatusOr<Schedule> ReferenceScheduleDynamicCpAsUpstream(
    absl::Span<const Sample> samples, const DynamicCpOptions& options) {
  absl::Status status = ValidateDynamicCpProblem(samples, options);
  if (!status.ok()) return status;
  return ScheduleBySteps(samples, options, "packing-aware",
                         [&options](const std::vector<Sample>& remaining) {
                           return RunStep(remaining, options);
                         });
}

absl::StatusOr<Schedule> ReferenceScheduleLegacyAsUpstream(
    absl::Span<const Sample> samples, const DynamicCpOptions& options) {
  absl::Status status = ValidateDynamicCpProblem(samples, options);
  if (!status.ok()) return status;
  if (options.max_num_seqs.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_num_seqs is ", *options.max_num_seqs,
        ": the legacy scheduler (upstream's next_hdp_group) has no cap on "
        "samples per rank; leave max_num_seqs unset"));
  }
  return ScheduleBySteps(samples, options, "legacy",
                         [&options](const std::vector<Sample>& remaining) {
                           return RunLegacyStep(remaining, options);
                         });
}

absl::StatusOr<Schedule> ReferenceAlignToVppGroup(Schedule schedule,
                                                  std::int64_t vpp_group) {
  if (vpp_group < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("vpp_group must be >= 1, got ", vpp_group));
  }
  absl::Status status = ValidateScheduleShape(schedule);
  if (!status.ok()) return status;
  std::vector<Microbatch>& microbatches = schedule.microbatches;
  const auto initial_count = static_cast<std::int64_t>(microbatches.size());
  if (initial_count == 0) return schedule;
  const auto width = static_cast<std::int64_t>(microbatches[0].rank_ids.size());
  std::int64_t remainder = (vpp_group - initial_count % vpp_group) % vpp_group;
  // A schedule the scheduler built needs at most count * (G - 1) splits:
  // every split separates CP groups, and a microbatch holds at most G of them.
  // Past that (only for a hand-made schedule) splitting would not end.
  const std::int64_t max_splits = initial_count * (width - 1);
  std::int64_t splits = 0;
  std::int64_t i = initial_count - 1;
  std::int64_t attempts = 0;
  // Per microbatch: true while it is the caller's, false once a split built it.
  std::vector<bool> from_input(microbatches.size(), true);
  while (remainder > 0) {
    const auto count = static_cast<std::int64_t>(microbatches.size());
    if (i < 0) {
      if (attempts >= count) {
        return absl::FailedPreconditionError(absl::StrCat(
            "VPP alignment: no tail microbatch has enough ids to split; ",
            count, " microbatches, ", remainder,
            " more needed for a multiple of vpp_group=", vpp_group));
      }
      i = count - 1;
    }
    absl::StatusOr<std::optional<SplitHalves>> halves =
        SplitMicrobatch(microbatches[static_cast<std::size_t>(i)].rank_ids,
                        from_input[static_cast<std::size_t>(i)]);
    if (!halves.ok()) return halves.status();
    if (halves->has_value()) {
      if (++splits > max_splits) {
        return absl::FailedPreconditionError(
            "VPP alignment: splitting does not converge on this schedule");
      }
      microbatches[static_cast<std::size_t>(i)].rank_ids =
          std::move((*halves)->replacing);
      microbatches.push_back(Microbatch{std::move((*halves)->appended)});
      from_input[static_cast<std::size_t>(i)] = false;
      from_input.push_back(false);
      --remainder;
      attempts = 0;
    } else {
      ++attempts;
    }
    --i;
  }
  return schedule;
}

absl::StatusOr<Schedule> ReferenceScheduleDpBalanced(
    absl::Span<const std::int64_t> lens, const DpBalancedOptions& options) {
  absl::Status status = ValidateDpBalancedProblem(lens, options);
  if (!status.ok()) return status;
  std::vector<std::vector<std::int64_t>> packed = PackInOrder(lens, options);
  status = MakeMultiple(options, packed);
  if (!status.ok()) return status;
  const std::int64_t gpus = options.dp_size * options.cp_size;
  const auto num_microbatches =
      static_cast<std::int64_t>(packed.size()) / options.dp_size;
  Schedule schedule;
  for (std::int64_t m = 0; m < num_microbatches; ++m) {
    Microbatch microbatch;
    for (std::int64_t rank = 0; rank < gpus; ++rank) {
      const std::int64_t sequence = m * options.dp_size + rank / options.cp_size;
      microbatch.rank_ids.push_back(packed[static_cast<std::size_t>(sequence)]);
    }
    schedule.microbatches.push_back(std::move(microbatch));
  }
  return schedule;
}

}  // namespace dcpsched::oracle
