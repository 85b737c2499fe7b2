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
#include "core/compact_schedule.h"
#include "core/types.h"

namespace dcpsched {
namespace {

using Groups = std::vector<CpGroupIds>;

bool Contains(const std::vector<SampleId>& ids, SampleId id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// The input contract: vpp_group >= 1, and every microbatch's groups tile the
// same number of ranks W >= 1, none of them empty.
absl::Status ValidateAlignInput(const CompactSchedule& schedule,
                                std::int64_t vpp_group) {
  if (vpp_group < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("vpp_group is ", vpp_group, "; it must be at least 1"));
  }
  std::int64_t width = 0;
  for (std::size_t m = 0; m < schedule.microbatches.size(); ++m) {
    const CompactMicrobatch& microbatch = schedule.microbatches[m];
    absl::StatusOr<std::int64_t> ranks = MicrobatchWidth(microbatch, m);
    if (!ranks.ok()) return ranks.status();
    if (m == 0) width = *ranks;
    if (width == 0) {
      return absl::InvalidArgumentError(
          "microbatch 0 has no ranks; every microbatch needs at least one");
    }
    if (*ranks != width) {
      return absl::InvalidArgumentError(absl::StrCat(
          "microbatch ", m, " has ", *ranks, " ranks but microbatch 0 has ",
          width, "; every microbatch must have the same number of ranks"));
    }
    for (const CpGroupIds& group : microbatch.groups) {
      if (group.ids.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "microbatch ", m, " rank ", group.first_rank,
            " is empty; every rank must hold at least one sample"));
      }
    }
  }
  return absl::OkStatus();
}

std::size_t Size(const CpGroupIds& group) {
  return static_cast<std::size_t>(group.size);
}

// Appends `size` ranks holding `ids` after the last group of `groups`: they
// join that group when it holds the same ids, so neighbouring groups never
// hold equal lists (the form CompactFromRanks gives). Widening repeats a run
// of groups, and a run's last group can hold its first's list.
void AppendRanks(Groups& groups, std::vector<SampleId> ids, std::int64_t size) {
  if (!groups.empty() && groups.back().ids == ids) {
    groups.back().size += size;
    return;
  }
  const std::int64_t first_rank =
      groups.empty() ? 0 : groups.back().first_rank + groups.back().size;
  groups.push_back(CpGroupIds{first_rank, size, std::move(ids)});
}

// Where a CP-group run starts: its first rank and its first group.
struct RunStart {
  std::size_t rank = 0;
  std::size_t group = 0;
};

// Reads the microbatch's ranks left to right as CP-group runs: a run starting
// at rank s is s and the following ranks whose ids contain the first id of
// rank s. Every rank of a group holds the same ids, so a run is a sequence of
// whole groups (in a schedule that keeps the specification's invariants, one group).
// Returns where each run starts, then {W, groups.size()}. Run sizes must not
// increase from left to right (upstream asserts it): every scheduler lays
// groups out largest first, so in an input microbatch (`from_input`) that is
// InvalidArgument. Widening a half can itself leave a run larger than the one
// before it; splitting such a microbatch again is FailedPrecondition.
absl::StatusOr<std::vector<RunStart>> LeftToRightRuns(
    const Groups& groups, std::size_t microbatch_index, bool from_input) {
  std::vector<RunStart> starts = {RunStart{}};
  std::size_t previous_size = 0;
  while (starts.back().group != groups.size()) {
    const RunStart start = starts.back();
    const SampleId first_id = groups[start.group].ids.front();
    RunStart end{start.rank + Size(groups[start.group]), start.group + 1};
    while (end.group < groups.size() &&
           Contains(groups[end.group].ids, first_id)) {
      end.rank += Size(groups[end.group]);
      ++end.group;
    }
    const std::size_t size = end.rank - start.rank;
    if (previous_size != 0 && size > previous_size) {
      const std::string what = absl::StrCat(
          "VPP alignment: in microbatch ", microbatch_index,
          " the CP group starting at rank ", start.rank, " spans ", size,
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
    starts.push_back(end);
    previous_size = size;
  }
  return starts;
}

// One CP-group run of a half being widened, as read from the right: its
// groups [first_group, first_group + group_count) of the half's non-empty
// prefix, its size there, and its current size (the original size times a
// power of two).
struct Run {
  std::size_t first_group = 0;
  std::size_t group_count = 0;
  std::size_t original_size = 0;
  std::size_t size = 0;
};

// Reads the non-empty `prefix` right to left as runs: a run read from its
// right end at rank i is i and the ranks to its left that contain the first
// id of rank i (whole groups, as above). Returns the runs rightmost first.
std::vector<Run> RightToLeftRuns(const Groups& prefix) {
  std::vector<Run> runs;
  std::size_t end = prefix.size();  // one past the rightmost unread group
  while (end > 0) {
    const SampleId first_id = prefix[end - 1].ids.front();
    std::size_t begin = end - 1;
    std::size_t size = Size(prefix[begin]);
    while (begin > 0 && Contains(prefix[begin - 1].ids, first_id)) {
      --begin;
      size += Size(prefix[begin]);
    }
    runs.push_back(Run{begin, end - begin, size, size});
    end = begin;
  }
  return runs;
}

// Upstream's fill_empty_by_expanding_cp. Doubling a run copies its ranks
// right after it and moves the rest right, so the runs keep their order and
// content and only the doubled run's size changes; the rounds are therefore
// simulated on run sizes alone and the groups are written once at the end.
//
// One round, with runs c1 (rightmost), c2, ... and e empty tail ranks: the
// first run (from the right) larger than its right-hand neighbour makes that
// neighbour double; if there is none, the leftmost run doubles when it fits
// in the tail. Doubling a run of p ranks with e >= p empty ones (p == e
// included) keeps upstream's slice assignments at `width` ranks; with p > e
// they grow the list past `width`, and when the leftmost run does not fit
// upstream loops forever: both are FailedPrecondition here.
absl::StatusOr<CompactMicrobatch> ExpandRuns(Groups prefix, std::size_t width,
                                             std::size_t microbatch_index) {
  if (prefix.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "VPP alignment: half of microbatch ", microbatch_index,
        " has no samples to widen (upstream loops forever); use a vpp_group "
        "that divides the number of microbatches"));
  }
  std::vector<Run> runs = RightToLeftRuns(prefix);
  std::size_t prefix_width = 0;
  for (const CpGroupIds& group : prefix) prefix_width += Size(group);
  std::size_t empty = width - prefix_width;
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

  // A run doubled d times is its original ranks repeated 2^d times: one
  // group widened 2^d times, or a sequence of groups repeated.
  CompactMicrobatch widened;
  for (auto run = runs.rbegin(); run != runs.rend(); ++run) {
    const std::size_t copies = run->size / run->original_size;
    if (run->group_count == 1) {
      CpGroupIds& group = prefix[run->first_group];
      AppendRanks(widened.groups, std::move(group.ids),
                  group.size * static_cast<std::int64_t>(copies));
      continue;
    }
    for (std::size_t copy = 0; copy < copies; ++copy) {
      for (std::size_t g = run->first_group;
           g < run->first_group + run->group_count; ++g) {
        CpGroupIds& group = prefix[g];
        if (copy + 1 < copies) {
          AppendRanks(widened.groups, group.ids, group.size);
        } else {
          AppendRanks(widened.groups, std::move(group.ids), group.size);
        }
      }
    }
  }
  return widened;
}

// The two widened halves of a split microbatch: `from_cut` replaces it and
// `before_cut` is appended to the schedule.
struct SplitHalves {
  CompactMicrobatch from_cut;
  CompactMicrobatch before_cut;
};

// Upstream's split_group. Returns nullopt when the microbatch is one CP
// group run (leaving `microbatch` untouched). Otherwise cuts it at the first
// run boundary >= W / 2 and widens both halves back to W ranks; the groups of
// `microbatch` are moved into the halves, so it must then be replaced.
absl::StatusOr<std::optional<SplitHalves>> SplitMicrobatch(
    CompactMicrobatch& microbatch, std::size_t width,
    std::size_t microbatch_index, bool from_input) {
  Groups& groups = microbatch.groups;
  absl::StatusOr<std::vector<RunStart>> starts =
      LeftToRightRuns(groups, microbatch_index, from_input);
  if (!starts.ok()) return starts.status();
  if (starts->size() == 2) return std::nullopt;
  const RunStart cut = *std::lower_bound(
      starts->begin(), starts->end(), width / 2,
      [](const RunStart& start, std::size_t rank) { return start.rank < rank; });

  const auto cut_at = groups.begin() + static_cast<std::ptrdiff_t>(cut.group);
  Groups before(std::make_move_iterator(groups.begin()),
                std::make_move_iterator(cut_at));
  Groups from(std::make_move_iterator(cut_at),
              std::make_move_iterator(groups.end()));
  for (CpGroupIds& group : from) {
    group.first_rank -= static_cast<std::int64_t>(cut.rank);
  }
  // Upstream widens the part before the cut first; keep its error order.
  absl::StatusOr<CompactMicrobatch> before_cut =
      ExpandRuns(std::move(before), width, microbatch_index);
  if (!before_cut.ok()) return before_cut.status();
  absl::StatusOr<CompactMicrobatch> from_cut =
      ExpandRuns(std::move(from), width, microbatch_index);
  if (!from_cut.ok()) return from_cut.status();
  return SplitHalves{*std::move(from_cut), *std::move(before_cut)};
}

}  // namespace

absl::StatusOr<CompactSchedule> AlignToVppGroup(CompactSchedule schedule,
                                                std::int64_t vpp_group) {
  if (absl::Status status = ValidateAlignInput(schedule, vpp_group);
      !status.ok()) {
    return status;
  }
  std::vector<CompactMicrobatch>& microbatches = schedule.microbatches;
  const std::uint64_t multiple = static_cast<std::uint64_t>(vpp_group);
  std::uint64_t remainder =
      (multiple - microbatches.size() % multiple) % multiple;
  if (remainder == 0) return schedule;
  const std::size_t width = static_cast<std::size_t>(
      MicrobatchWidth(microbatches.front(), 0).value_or(0));
  // A microbatch that failed to split is never modified, so it would fail
  // again: remember that instead of reading its runs on every pass.
  std::vector<std::uint8_t> is_one_group(microbatches.size(), false);
  // Whether a microbatch is still as given (else a split produced it).
  // Both flags are bytes, not std::vector<bool>, whose operator[] no checked
  // build (_GLIBCXX_ASSERTIONS) bounds-checks.
  std::vector<std::uint8_t> from_input(microbatches.size(), true);
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
      absl::StatusOr<std::optional<SplitHalves>> split = SplitMicrobatch(
          microbatches[index], width, index, from_input[index]);
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

absl::StatusOr<Schedule> AlignToVppGroup(Schedule schedule,
                                         std::int64_t vpp_group) {
  absl::StatusOr<CompactSchedule> aligned =
      AlignToVppGroup(CompactFromRanks(schedule), vpp_group);
  if (!aligned.ok()) return aligned.status();
  return ExpandSchedule(*aligned);
}

}  // namespace dcpsched
