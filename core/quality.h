// How good a schedule is, measured rather than asserted (SPEC "Quality").
//
// MeasureQuality reads any schedule (from any scheduler, valid or not) and
// reports what each rank carries, how the samples are grouped, how close the
// critical path comes to a perfect split of the attention work, and how many
// microbatches it used against the fewest any schedule could use. It checks
// only what it needs to compute those figures; whether the schedule keeps the
// scheduling invariants is checked elsewhere.

#ifndef DCPSCHED_CORE_QUALITY_H_
#define DCPSCHED_CORE_QUALITY_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/types.h"

namespace dcpsched {

// A maximal run of consecutive ranks of one microbatch that hold the same id
// list: in a dynamic-CP schedule exactly one CP group, in a dp_balanced
// schedule one DP replica. An empty rank (a broken schedule) forms a run
// with no ids.
struct CpGroupLoad {
  std::int64_t first_rank = 0;
  std::int64_t size = 0;
  std::vector<SampleId> ids;   // the list every member holds
  double tokens_per_rank = 0;  // of the first member
  double work_per_rank = 0;    // of the first member
};

// Per-rank load of one microbatch.
struct MicrobatchLoad {
  std::vector<double> rank_tokens;  // sum of len / cp over the rank's samples
  std::vector<double> rank_work;    // sum of len*len / cp
  double max_work = 0.0;
  double min_work = 0.0;
  std::vector<CpGroupLoad> groups;  // in rank order, covering every rank
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
  // Sum over samples of len, and the shortest and longest len (0 if none).
  std::int64_t total_tokens = 0;
  std::int64_t min_len = 0;
  std::int64_t max_len = 0;
};

// Measures `schedule` of `samples`. A sample's CP size in a microbatch is the
// number of ranks that hold its id; a rank's work adds Work(len, cp) over
// its ids in list order. Per-sample sums run over `samples` as given, so a
// sample the schedule leaves out still counts in the efficiency's numerator
// and in the lower bound.
//
// InvalidArgument if the schedule names an id that is not among `samples`,
// its microbatches differ in width or have no ranks, `samples` repeats an id
// or has a length outside [1, 2^26], max_seq_len_per_rank < 1, or the
// schedule is empty while `samples` is not (G is then unknown).
absl::StatusOr<ScheduleQuality> MeasureQuality(
    absl::Span<const Sample> samples, const Schedule& schedule,
    std::int64_t max_seq_len_per_rank);

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_QUALITY_H_
