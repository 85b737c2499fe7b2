#include "core/vpp_align.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/types.h"

namespace dcpsched {
namespace {

using RankIds = std::vector<SampleId>;

bool Contains(const RankIds& ids, SampleId id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// The input contract: vpp_group >= 1, and every microbatch has the same
// number of ranks W >= 1, none of them empty.
absl::Status ValidateAlignInput(const Schedule& schedule,
                                std::int64_t vpp_group) {
  if (vpp_group < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("vpp_group is ", vpp_group, "; it must be at least 1"));
  }
  if (schedule.microbatches.empty()) return absl::OkStatus();
  const std::size_t width = schedule.microbatches.front().rank_ids.size();
  if (width == 0) {
    return absl::InvalidArgumentError(
        "microbatch 0 has no ranks; every microbatch needs at least one");
  }
  for (std::size_t m = 0; m < schedule.microbatches.size(); ++m) {
    const auto& ranks = schedule.microbatches[m].rank_ids;
    if (ranks.size() != width) {
      return absl::InvalidArgumentError(absl::StrCat(
          "microbatch ", m, " has ", ranks.size(),
          " ranks but microbatch 0 has ", width,
          "; every microbatch must have the same number of ranks"));
    }
    for (std::size_t r = 0; r < width; ++r) {
      if (ranks[r].empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "microbatch ", m, " rank ", r,
            " is empty; every rank must hold at least one sample"));
      }
    }
  }
  return absl::OkStatus();
}

// Reads `ranks` left to right as CP-group runs: a run starting at rank s is
// s and the following ranks whose ids contain the first id of rank s.
// Returns the cumulative boundaries 0 = b0 < b1 < ... < bn = W. Run sizes
// must not increase from left to right (upstream asserts it): every
// scheduler lays groups out largest first, so in an input microbatch
// (`from_input`) that is InvalidArgument. Widening a half can itself leave a
// run larger than the one before it; splitting such a microbatch again is
// FailedPrecondition.
absl::StatusOr<std::vector<std::size_t>> LeftToRightRunBoundaries(
    const std::vector<RankIds>& ranks, std::size_t microbatch_index,
    bool from_input) {
  std::vector<std::size_t> boundaries = {0};
  std::size_t previous_size = 0;
  while (boundaries.back() != ranks.size()) {
    const std::size_t start = boundaries.back();
    const SampleId first_id = ranks[start].front();
    std::size_t end = start + 1;
    while (end < ranks.size() && Contains(ranks[end], first_id)) ++end;
    const std::size_t size = end - start;
    if (previous_size != 0 && size > previous_size) {
      const std::string what = absl::StrCat(
          "VPP alignment: in microbatch ", microbatch_index,
          " the CP group starting at rank ", start, " spans ", size,
          " ranks, more than the ", previous_size, " of the group before it");
      if (from_input) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, "; CP group sizes must not increase from rank 0 on"));
      }
      return absl::FailedPreconditionError(absl::StrCat(
          what,
          ", after an earlier split widened it, so it cannot be split "
          "again (upstream asserts); use a vpp_group that divides the "
          "number of microbatches"));
    }
    boundaries.push_back(end);
    previous_size = size;
  }
  return boundaries;
}

// One CP-group run of a half being widened, as read from the right: its
// first rank in the half's non-empty prefix, its size there, and its current
// size (the original size times a power of two).
struct Run {
  std::size_t begin = 0;
  std::size_t original_size = 0;
  std::size_t size = 0;
};

// Reads the non-empty `prefix` right to left as runs: a run read from its
// right end at rank i is i and the ranks to its left that contain the first
// id of rank i. Returns the runs rightmost first.
std::vector<Run> RightToLeftRuns(const std::vector<RankIds>& prefix) {
  std::vector<Run> runs;
  std::size_t end = prefix.size();  // one past the rightmost unread rank
  while (end > 0) {
    const SampleId first_id = prefix[end - 1].front();
    std::size_t begin = end - 1;
    while (begin > 0 && Contains(prefix[begin - 1], first_id)) --begin;
    const std::size_t size = end - begin;
    runs.push_back(Run{begin, size, size});
    end = begin;
  }
  return runs;
}

// Upstream's fill_empty_by_expanding_cp. Doubling a run copies its ranks
// right after it and moves the rest right, so the runs keep their order and
// content and only the doubled run's size changes; the rounds are therefore
// simulated on run sizes alone and the ranks are written once at the end.
//
// One round, with runs c1 (rightmost), c2, ... and e empty tail ranks: the
// first run (from the right) larger than its right-hand neighbour makes that
// neighbour double; if there is none, the leftmost run doubles when it fits
// in the tail. Doubling a run of p ranks with e >= p empty ones (p == e
// included) keeps upstream's slice assignments at `width` ranks; with p > e
// they grow the list past `width`, and when the leftmost run does not fit
// upstream loops forever: both are FailedPrecondition here.
absl::StatusOr<Microbatch> ExpandRuns(std::vector<RankIds> prefix,
                                      std::size_t width,
                                      std::size_t microbatch_index) {
  if (prefix.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "VPP alignment: half of microbatch ", microbatch_index,
        " has no samples to widen (upstream loops forever); use a vpp_group "
        "that divides the number of microbatches"));
  }
  std::vector<Run> runs = RightToLeftRuns(prefix);
  std::size_t empty = width - prefix.size();
  // Runs 1..scan_from-1 are known not to be larger than their right-hand
  // neighbour; a doubling only changes the comparisons next to it.
  std::size_t scan_from = 1;
  while (empty > 0) {
    std::size_t k = scan_from;
    while (k < runs.size() && runs[k].size <= runs[k - 1].size) ++k;
    const std::size_t doubled = k < runs.size() ? k - 1 : runs.size() - 1;
    const std::size_t size = runs[doubled].size;
    if (size > empty) {
      if (k < runs.size()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "VPP alignment: widening a half of microbatch ", microbatch_index,
            " would double a CP group of ", size, " ranks with only ", empty,
            " empty ranks left, making the microbatch wider than ", width,
            " ranks (upstream returns such a microbatch); use a vpp_group "
            "that divides the number of microbatches, or more ranks"));
      }
      return absl::FailedPreconditionError(absl::StrCat(
          "VPP alignment: a half of microbatch ", microbatch_index,
          " cannot be widened to ", width, " ranks (its leftmost CP group has ",
          size, " ranks, more than the ", empty,
          " empty ones; upstream loops forever); use a vpp_group that "
          "divides the number of microbatches, or more ranks"));
    }
    runs[doubled].size = 2 * size;
    empty -= size;
    scan_from = std::max<std::size_t>(1, doubled);
  }

  // A run doubled d times is its original ranks repeated 2^d times.
  Microbatch widened;
  widened.rank_ids.reserve(width);
  for (auto run = runs.rbegin(); run != runs.rend(); ++run) {
    const std::size_t copies = run->size / run->original_size;
    const auto first = prefix.begin() + static_cast<std::ptrdiff_t>(run->begin);
    const auto last = first + static_cast<std::ptrdiff_t>(run->original_size);
    for (std::size_t copy = 1; copy < copies; ++copy) {
      widened.rank_ids.insert(widened.rank_ids.end(), first, last);
    }
    widened.rank_ids.insert(widened.rank_ids.end(),
                            std::make_move_iterator(first),
                            std::make_move_iterator(last));
  }
  return widened;
}

// The two widened halves of a split microbatch: `from_cut` replaces it and
// `before_cut` is appended to the schedule.
struct SplitHalves {
  Microbatch from_cut;
  Microbatch before_cut;
};

// Upstream's split_group. Returns nullopt when the microbatch is one CP
// group (leaving `microbatch` untouched). Otherwise cuts it at the first run
// boundary >= W / 2 and widens both halves back to W ranks; the ranks of
// `microbatch` are moved into the halves, so it must then be replaced.
absl::StatusOr<std::optional<SplitHalves>> SplitMicrobatch(
    Microbatch& microbatch, std::size_t microbatch_index, bool from_input) {
  std::vector<RankIds>& ranks = microbatch.rank_ids;
  const std::size_t width = ranks.size();
  absl::StatusOr<std::vector<std::size_t>> boundaries =
      LeftToRightRunBoundaries(ranks, microbatch_index, from_input);
  if (!boundaries.ok()) return boundaries.status();
  if (boundaries->size() == 2) return std::nullopt;
  const std::size_t cut =
      *std::lower_bound(boundaries->begin(), boundaries->end(), width / 2);

  const auto cut_at = ranks.begin() + static_cast<std::ptrdiff_t>(cut);
  std::vector<RankIds> before(std::make_move_iterator(ranks.begin()),
                              std::make_move_iterator(cut_at));
  std::vector<RankIds> from(std::make_move_iterator(cut_at),
                            std::make_move_iterator(ranks.end()));
  // Upstream widens the part before the cut first; keep its error order.
  absl::StatusOr<Microbatch> before_cut =
      ExpandRuns(std::move(before), width, microbatch_index);
  if (!before_cut.ok()) return before_cut.status();
  absl::StatusOr<Microbatch> from_cut =
      ExpandRuns(std::move(from), width, microbatch_index);
  if (!from_cut.ok()) return from_cut.status();
  return SplitHalves{*std::move(from_cut), *std::move(before_cut)};
}

}  // namespace

absl::StatusOr<Schedule> AlignToVppGroup(Schedule schedule,
                                         std::int64_t vpp_group) {
  if (absl::Status status = ValidateAlignInput(schedule, vpp_group);
      !status.ok()) {
    return status;
  }
  std::vector<Microbatch>& microbatches = schedule.microbatches;
  const std::uint64_t multiple = static_cast<std::uint64_t>(vpp_group);
  std::uint64_t remainder =
      (multiple - microbatches.size() % multiple) % multiple;
  // A microbatch that failed to split is never modified, so it would fail
  // again: remember that instead of reading its runs on every pass.
  std::vector<bool> is_one_group(microbatches.size(), false);
  // Whether a microbatch is still as given (else a split produced it).
  std::vector<bool> from_input(microbatches.size(), true);
  std::int64_t i = static_cast<std::int64_t>(microbatches.size()) - 1;
  std::size_t attempts_since_split = 0;
  while (remainder > 0) {
    if (i < 0) {
      if (attempts_since_split >= microbatches.size()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "VPP alignment: no tail microbatch has enough ids to split; ",
            microbatches.size(), " microbatches are each one CP group but ",
            remainder, " more are needed to reach a multiple of vpp_group ",
            vpp_group, "; use a smaller vpp_group or more samples"));
      }
      i = static_cast<std::int64_t>(microbatches.size()) - 1;
    }
    const std::size_t index = static_cast<std::size_t>(i);
    std::optional<SplitHalves> halves;
    if (!is_one_group[index]) {
      absl::StatusOr<std::optional<SplitHalves>> split =
          SplitMicrobatch(microbatches[index], index, from_input[index]);
      if (!split.ok()) return split.status();
      halves = *std::move(split);
    }
    if (halves.has_value()) {
      microbatches[index] = std::move(halves->from_cut);
      microbatches.push_back(std::move(halves->before_cut));
      from_input[index] = false;
      from_input.push_back(false);
      is_one_group.push_back(false);
      --remainder;
      attempts_since_split = 0;
    } else {
      is_one_group[index] = true;
      ++attempts_since_split;
    }
    --i;
  }
  return schedule;
}

}  // namespace dcpsched
