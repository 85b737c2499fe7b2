// The compact form of a schedule: each microbatch as its CP groups.
//
// Every rank of a CP group holds the same samples, so a schedule stored per
// rank (Schedule, types.h) repeats each group's ids once per member: its size
// is microbatches x G whatever the batch holds. At G = 65536, on a valid batch
// that needs one microbatch per sample, that is gigabytes. The compact form
// stores each group once (first rank, size, ids), so its size is
// O(samples + groups). The schedulers build it natively; the per-rank form is
// derived from it on request; and a rank that needs only its own lists
// (Megatron-LM computes the schedule on every rank, and each rank uses only
// its own) reads them with RankIds, without the other ranks' lists ever being
// built.

#ifndef DCPSCHED_CORE_COMPACT_SCHEDULE_H_
#define DCPSCHED_CORE_COMPACT_SCHEDULE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/types.h"

namespace dcpsched {

// One CP group of a microbatch: ranks [first_rank, first_rank + size), each
// holding `ids` in placement order.
struct CpGroupIds {
  std::int64_t first_rank = 0;
  std::int64_t size = 0;
  std::vector<SampleId> ids;

  friend bool operator==(const CpGroupIds&, const CpGroupIds&) = default;
};

// One microbatch as its CP groups in rank order. Its groups tile its ranks:
// the first starts at rank 0, each starts where the one before ends, and
// every size is >= 1; the microbatch's width (G in a schedule of G ranks) is
// where the last one ends. A group is a maximal run of ranks holding equal
// lists, so no two neighbouring groups hold the same ids: each per-rank
// schedule has exactly one compact form, and each compact form means one
// per-rank schedule.
struct CompactMicrobatch {
  std::vector<CpGroupIds> groups;

  friend bool operator==(const CompactMicrobatch&,
                         const CompactMicrobatch&) = default;
};

// The microbatches of one global batch, in execution order, in compact form.
struct CompactSchedule {
  std::vector<CompactMicrobatch> microbatches;

  friend bool operator==(const CompactSchedule&,
                         const CompactSchedule&) = default;
};

// The width of microbatch `microbatch_index` (`microbatch`): where its last
// group ends, 0 for no groups. InvalidArgument, naming the microbatch and
// group, when its groups are not a compact form: the first does not start at
// rank 0, a group has size < 1, a group does not start where the one before
// it ends (a gap or an overlap), or two neighbouring groups hold the same ids
// (they are one group). No allocation; O(groups) comparisons of neighbouring
// id lists, each of which stops at the first difference.
absl::StatusOr<std::int64_t> MicrobatchWidth(const CompactMicrobatch& microbatch,
                                             std::size_t microbatch_index);

// The per-rank form: rank r of microbatch m holds the ids of the group of m
// that covers r. InvalidArgument, naming the microbatch and group, when the
// groups of a microbatch are not a compact form (MicrobatchWidth). It builds width lists per
// microbatch, so a caller reading a schedule from outside bounds the width
// first (MicrobatchWidth).
absl::StatusOr<Schedule> ExpandSchedule(const CompactSchedule& schedule);

// Rank `rank`'s ids in every microbatch: element m equals
// ExpandSchedule(schedule)->microbatches[m].rank_ids[rank]. Costs
// O(groups + the ids returned): each microbatch's groups are checked
// (MicrobatchWidth, no allocation), and no other rank's list is built.
// InvalidArgument when the groups of a microbatch are not a compact form, or
// when `rank` is negative or not below a microbatch's width.
absl::StatusOr<std::vector<std::vector<SampleId>>> RankIds(
    const CompactSchedule& schedule, std::int64_t rank);

// The compact form of a per-rank schedule (one read from a file, or
// upstream's): each maximal run of consecutive ranks holding equal lists
// becomes one group. ExpandSchedule(CompactFromRanks(s)) == s for every s,
// and CompactFromRanks(ExpandSchedule(c)) == c for every c it accepts. The
// schedulers build this form natively.
CompactSchedule CompactFromRanks(const Schedule& schedule);

// The ranks [first_rank, first_rank + size) as messages and reports name
// them: "rank 6" for one rank, "ranks 0-3" for several.
std::string RankRange(std::int64_t first_rank, std::int64_t size);

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_COMPACT_SCHEDULE_H_
