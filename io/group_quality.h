// How good a compact schedule is, measured per CP group.
//
// core/quality.h measures a per-rank Schedule and keeps per-rank tokens and
// work for every microbatch: microbatches x G doubles, gigabytes at
// G = 65536 on a batch that needs one microbatch per sample. Every rank of a
// CP group carries the same load, so this measures the compact form
// (core/compact_schedule.h) group by group, at O(samples + groups), and
// gives the per-rank figures of one microbatch only when they are asked for
// (RankTokens, RankWork). Its figures equal MeasureQuality's on the
// expanded schedule, bit for bit: a sample's CP size in a microbatch is the
// number of ranks that hold its id, and a group's work adds Work(len, cp)
// over its ids in list order.

#ifndef DCPSCHED_IO_GROUP_QUALITY_H_
#define DCPSCHED_IO_GROUP_QUALITY_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/compact_schedule.h"
#include "core/quality.h"
#include "core/types.h"

namespace dcpsched {

// The load of one microbatch, by CP group.
struct GroupedLoad {
  // The microbatch's groups in rank order, each with its ids and the tokens
  // and work every one of its ranks carries.
  std::vector<CpGroupLoad> groups;
  double max_work = 0.0;  // of the busiest rank
  double min_work = 0.0;  // of the idlest rank
  // Ranks the groups cover (G).
  std::int64_t width() const {
    return groups.empty() ? 0 : groups.back().first_rank + groups.back().size;
  }
};

// SPEC "Quality" figures of a compact schedule (as ScheduleQuality, with
// the microbatches by group).
struct GroupedQuality {
  std::vector<GroupedLoad> microbatches;
  // G, the width of every microbatch (0 for an empty schedule).
  std::int64_t total_gpus = 0;
  // (sum over samples of len^2 / G) / critical_path_work; 0 when empty.
  double balance_efficiency = 0.0;
  std::int64_t microbatch_count = 0;
  // ceil(sum len / (G * max_seq_len_per_rank)).
  std::int64_t microbatch_lower_bound = 0;
  // Sum over microbatches of the busiest rank's work.
  double critical_path_work = 0.0;
  // The most work any rank carries in any microbatch (0 when empty).
  double max_rank_work = 0.0;
  std::int64_t total_tokens = 0;
  std::int64_t min_len = 0;
  std::int64_t max_len = 0;
};

// Measures `schedule` of `samples`, as MeasureQuality measures its
// expansion. InvalidArgument, naming the microbatch and group, if a group
// names an id that is not among `samples`, the groups of a microbatch do not
// tile its ranks, microbatches differ in width or have no ranks, `samples`
// repeats an id or has a length outside [1, 2^26], max_seq_len_per_rank < 1,
// or the schedule is empty while `samples` is not.
absl::StatusOr<GroupedQuality> MeasureGroupedQuality(
    absl::Span<const Sample> samples, const CompactSchedule& schedule,
    std::int64_t max_seq_len_per_rank);

// Per-rank tokens and work of one microbatch (element r: the group that
// covers rank r), for output that lists every rank. O(G).
std::vector<double> RankTokens(const GroupedLoad& load);
std::vector<double> RankWork(const GroupedLoad& load);

// Sum over ranks of the group values, added rank by rank in rank order (as
// a per-rank list would be summed), without building the list.
double SumOverRanks(const GroupedLoad& load, double CpGroupLoad::*value);

}  // namespace dcpsched

#endif  // DCPSCHED_IO_GROUP_QUALITY_H_
