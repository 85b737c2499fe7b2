#include "core/compact_schedule.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/types.h"

namespace dcpsched {
namespace {

std::string GroupName(std::size_t microbatch_index, std::size_t group_index) {
  return absl::StrCat("microbatch ", microbatch_index, " group ", group_index);
}

// Whether `group` (number `group_index`), which must start at `expected_start`,
// tiles on from there; OK or the reason it does not.
absl::Status CheckGroup(const CpGroupIds& group, std::int64_t expected_start,
                        std::size_t microbatch_index, std::size_t group_index) {
  const bool tiles =
      group.size >= 1 && group.first_rank == expected_start &&
      group.size <= std::numeric_limits<std::int64_t>::max() - group.first_rank;
  if (tiles) return absl::OkStatus();  // the common case: no message built
  const std::string name = GroupName(microbatch_index, group_index);
  if (group.size < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " (first rank ", group.first_rank, ") has size ", group.size,
        "; every CP group needs at least one rank"));
  }
  if (group.first_rank == expected_start) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " (first rank ", group.first_rank, ", size ", group.size,
        ") ends past the largest rank number"));
  }
  if (group_index == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " starts at rank ", group.first_rank,
                     "; the first CP group must start at rank 0"));
  }
  if (group.first_rank > expected_start) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " starts at rank ", group.first_rank, " but group ",
        group_index - 1, " ends at rank ", expected_start - 1, ": ranks ",
        expected_start, "-", group.first_rank - 1,
        " are in no group (a gap); each group must start where the one "
        "before it ends"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      name, " starts at rank ", group.first_rank, " but group ",
      group_index - 1, " ends at rank ", expected_start - 1, ": ranks ",
      group.first_rank, "-", expected_start - 1,
      " are in two groups (an overlap); each group must start where the "
      "one before it ends"));
}

// OK unless `group` (number `group_index`) holds the same list as `previous`,
// the group before it: their ranks are then one CP group.
absl::Status CheckDistinctFromPrevious(const CpGroupIds& group,
                                       const CpGroupIds& previous,
                                       std::size_t microbatch_index,
                                       std::size_t group_index) {
  if (group.ids != previous.ids) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      GroupName(microbatch_index, group_index), " (",
      RankRange(group.first_rank, group.size), ") holds the same ids as group ",
      group_index - 1, " (", RankRange(previous.first_rank, previous.size),
      "); neighbouring ranks with equal lists are one CP group: merge them "
      "into one group of ", previous.size + group.size, " ranks"));
}

absl::Status RankOutOfRange(std::int64_t rank, std::int64_t width,
                            std::size_t microbatch_index) {
  return absl::InvalidArgumentError(
      absl::StrCat("rank ", rank, " is outside microbatch ", microbatch_index,
                   ", which has ranks 0-", width - 1,
                   "; a rank must be in [0, ", width, ")"));
}

}  // namespace

absl::StatusOr<std::int64_t> MicrobatchWidth(const CompactMicrobatch& microbatch,
                                             std::size_t microbatch_index) {
  std::int64_t end = 0;
  for (std::size_t g = 0; g < microbatch.groups.size(); ++g) {
    const CpGroupIds& group = microbatch.groups[g];
    if (absl::Status status = CheckGroup(group, end, microbatch_index, g);
        !status.ok()) {
      return status;
    }
    if (g > 0) {
      if (absl::Status status = CheckDistinctFromPrevious(
              group, microbatch.groups[g - 1], microbatch_index, g);
          !status.ok()) {
        return status;
      }
    }
    end = group.first_rank + group.size;
  }
  return end;
}

absl::StatusOr<Schedule> ExpandSchedule(const CompactSchedule& schedule) {
  Schedule expanded;
  expanded.microbatches.reserve(schedule.microbatches.size());
  for (std::size_t m = 0; m < schedule.microbatches.size(); ++m) {
    const CompactMicrobatch& compact = schedule.microbatches[m];
    absl::StatusOr<std::int64_t> width = MicrobatchWidth(compact, m);
    if (!width.ok()) return width.status();
    Microbatch microbatch;
    microbatch.rank_ids.reserve(static_cast<std::size_t>(*width));
    for (const CpGroupIds& group : compact.groups) {
      microbatch.rank_ids.insert(microbatch.rank_ids.end(),
                                 static_cast<std::size_t>(group.size), group.ids);
    }
    expanded.microbatches.push_back(std::move(microbatch));
  }
  return expanded;
}

absl::StatusOr<std::vector<std::vector<SampleId>>> RankIds(
    const CompactSchedule& schedule, std::int64_t rank) {
  std::vector<std::vector<SampleId>> ids;
  ids.reserve(schedule.microbatches.size());
  for (std::size_t m = 0; m < schedule.microbatches.size(); ++m) {
    const CompactMicrobatch& compact = schedule.microbatches[m];
    absl::StatusOr<std::int64_t> width = MicrobatchWidth(compact, m);
    if (!width.ok()) return width.status();
    if (rank < 0 || rank >= *width) return RankOutOfRange(rank, *width, m);
    // The groups tile [0, width) and rank is in it: the first group that
    // ends past `rank` covers it.
    const auto covering = std::partition_point(
        compact.groups.begin(), compact.groups.end(),
        [rank](const CpGroupIds& group) {
          return group.first_rank + group.size <= rank;
        });
    ids.push_back(covering->ids);
  }
  return ids;
}

CompactSchedule CompactFromRanks(const Schedule& schedule) {
  CompactSchedule compact;
  compact.microbatches.reserve(schedule.microbatches.size());
  for (const Microbatch& microbatch : schedule.microbatches) {
    CompactMicrobatch groups;
    const std::vector<std::vector<SampleId>>& ranks = microbatch.rank_ids;
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      if (!groups.groups.empty() && groups.groups.back().ids == ranks[r]) {
        ++groups.groups.back().size;
      } else {
        groups.groups.push_back(
            CpGroupIds{static_cast<std::int64_t>(r), 1, ranks[r]});
      }
    }
    compact.microbatches.push_back(std::move(groups));
  }
  return compact;
}

std::string RankRange(std::int64_t first_rank, std::int64_t size) {
  if (size == 1) return absl::StrCat("rank ", first_rank);
  return absl::StrCat("ranks ", first_rank, "-", first_rank + size - 1);
}

}  // namespace dcpsched
