// How good a schedule is, measured rather than asserted (SPEC "Quality").

#ifndef DCPSCHED_CORE_QUALITY_H_
#define DCPSCHED_CORE_QUALITY_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/types.h"

namespace dcpsched {

// Per-rank load of one microbatch.
struct MicrobatchLoad {
  std::vector<double> rank_tokens;  // sum of len / cp over the rank's samples
  std::vector<double> rank_work;    // sum of len*len / cp
  double max_work = 0.0;
  double min_work = 0.0;
};

struct ScheduleQuality {
  std::vector<MicrobatchLoad> microbatches;
  // (sum over samples of len^2 / G) / (sum over microbatches of max rank
  // work); 1.0 is the bound. 0 for an empty schedule.
  double balance_efficiency = 0.0;
  std::int64_t microbatch_count = 0;
  // ceil(sum len / (G * max_seq_len_per_rank)): no schedule has fewer.
  std::int64_t microbatch_lower_bound = 0;
  // Sum over microbatches of the busiest rank's work (the critical path).
  double critical_path_work = 0.0;
};

// Measures `schedule` of `samples`. A sample's CP size in a microbatch is the
// number of ranks that hold its id. InvalidArgument if the schedule names an
// id that is not among `samples` or its microbatches differ in width.
absl::StatusOr<ScheduleQuality> MeasureQuality(absl::Span<const Sample> samples,
                                               const Schedule& schedule,
                                               std::int64_t max_seq_len_per_rank);

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_QUALITY_H_
