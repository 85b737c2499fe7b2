// How good a schedule is, measured rather than asserted (the specification's "Quality measures").
//
// MeasureQuality reads any schedule (from any scheduler, valid or not) and
// reports what each CP group carries, how close the critical path comes to a
// perfect split of the attention work, and how many microbatches it used
// against the fewest any schedule could use. It checks only what it needs to
// compute those figures; whether the schedule keeps the scheduling
// invariants is checked elsewhere (core/checker.h).
//
// Every rank of a CP group carries the same load, so the schedule is measured
// group by group on its compact form (core/compact_schedule.h), at
// O(samples + groups) whatever G is. A per-rank Schedule is measured as its
// compact form (CompactFromRanks), and a microbatch's per-rank figures are
// derived only when they are asked for (RankTokens, RankWork).

#ifndef DCPSCHED_CORE_QUALITY_H_
#define DCPSCHED_CORE_QUALITY_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/compact_schedule.h"
#include "core/types.h"

namespace dcpsched {

// One group of a microbatch and the load each of its ranks carries. Read
// from a per-rank schedule, a group is a maximal run of consecutive ranks
// that hold the same id list: in a dynamic-CP schedule exactly one CP group,
// in a dp_balanced schedule one DP replica. An empty rank (a broken
// schedule) is part of a group with no ids.
struct CpGroupLoad {
  std::int64_t first_rank = 0;
  std::int64_t size = 0;
  std::vector<SampleId> ids;   // the list every member holds
  double tokens_per_rank = 0;  // sum of len / cp over the ids
  double work_per_rank = 0;    // sum of len * len / cp over the ids
};

// The load of one microbatch, by group.
struct MicrobatchLoad {
  std::vector<CpGroupLoad> groups;  // in rank order, covering every rank
  double max_work = 0.0;            // of the busiest rank
  double min_work = 0.0;            // of the idlest rank
  // Ranks the groups cover (G).
  std::int64_t width() const {
    return groups.empty() ? 0 : groups.back().first_rank + groups.back().size;
  }
};

struct ScheduleQuality {
  std::vector<MicrobatchLoad> microbatches;
  // G, the width of every microbatch (0 for an empty schedule).
  std::int64_t total_gpus = 0;
  // (sum over samples of len^2 / G) / (sum over microbatches of max rank
  // work); 1.0 is the bound. 0 for an empty schedule.
  double balance_efficiency = 0.0;
  std::int64_t microbatch_count = 0;
  // ceil(sum len / (G * max_seq_len_per_rank)): no schedule has fewer.
  std::int64_t microbatch_lower_bound = 0;
  // Sum over microbatches of the busiest rank's work (the critical path).
  double critical_path_work = 0.0;
  // The most work any rank carries in any microbatch (0 when empty).
  double max_rank_work = 0.0;
  // Sum over samples of len, and the shortest and longest len (0 if none).
  std::int64_t total_tokens = 0;
  std::int64_t min_len = 0;
  std::int64_t max_len = 0;
};

// Measures `schedule` of `samples`. A sample's CP size in a microbatch is the
// number of ranks that hold its id; a group's work adds Work(len, cp) over
// its ids in list order. Per-sample sums run over `samples` as given, so a
// sample the schedule leaves out still counts in the efficiency's numerator
// and in the lower bound.
//
// InvalidArgument, naming the microbatch and ranks, if a group names an id
// that is not among `samples`, the groups of a microbatch do not tile its
// ranks, microbatches differ in width or have no ranks, `samples` repeats an
// id or has a length outside [1, 2^26], max_seq_len_per_rank < 1, or the
// schedule is empty while `samples` is not (G is then unknown).
absl::StatusOr<ScheduleQuality> MeasureQuality(
    absl::Span<const Sample> samples, const CompactSchedule& schedule,
    std::int64_t max_seq_len_per_rank);

// Measures a per-rank schedule as its compact form, CompactFromRanks(schedule):
// the same figures, bit for bit, as a rank-by-rank count would give.
absl::StatusOr<ScheduleQuality> MeasureQuality(
    absl::Span<const Sample> samples, const Schedule& schedule,
    std::int64_t max_seq_len_per_rank);

// Per-rank tokens and work of one microbatch (element r: the group that
// covers rank r), for output that lists every rank. O(G).
std::vector<double> RankTokens(const MicrobatchLoad& load);
std::vector<double> RankWork(const MicrobatchLoad& load);

// Sum over ranks of a group figure, added rank by rank in rank order (as a
// per-rank list would be summed), without building the list.
double SumOverRanks(const MicrobatchLoad& load, double CpGroupLoad::*value);

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_QUALITY_H_
