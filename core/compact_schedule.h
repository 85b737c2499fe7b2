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
// where the last one ends.
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
// group, when its groups do not tile [0, width): the first does not start at
// rank 0, a group has size < 1, or a group does not start where the one
// before it ends (a gap or an overlap). O(groups), no allocation.
absl::StatusOr<std::int64_t> MicrobatchWidth(const CompactMicrobatch& microbatch,
                                             std::size_t microbatch_index);

// The per-rank form: rank r of microbatch m holds the ids of the group of m
// that covers r. InvalidArgument, naming the microbatch and group, when the
// groups of a microbatch do not tile its ranks. It builds width lists per
// microbatch, so a caller reading a schedule from outside bounds the width
// first (MicrobatchWidth).
absl::StatusOr<Schedule> ExpandSchedule(const CompactSchedule& schedule);

// Rank `rank`'s ids in every microbatch: element m equals
// ExpandSchedule(schedule)->microbatches[m].rank_ids[rank]. Costs
// O(groups + the ids returned): each microbatch's groups are checked to tile
// (integer comparisons, no allocation), and no other rank's list is built.
// InvalidArgument when the groups of a microbatch do not tile its ranks, or
// when `rank` is negative or not below a microbatch's width.
absl::StatusOr<std::vector<std::vector<SampleId>>> RankIds(
    const CompactSchedule& schedule, std::int64_t rank);

// The compact form of a per-rank schedule (one read from a file, or
// upstream's): each maximal run of consecutive ranks holding equal lists
// becomes one group. ExpandSchedule(CompactFromRanks(s)) == s for every s.
// In a schedule that keeps SPEC's invariants no two neighbouring groups hold
// equal lists, so this is the form the schedulers build.
CompactSchedule CompactFromRanks(const Schedule& schedule);

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_COMPACT_SCHEDULE_H_
