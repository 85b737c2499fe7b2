// The fixed-CP dp_balanced scheduler (upstream's DpBalancedScheduler).
//
// Samples are packed in their given order into sequences of at most
// max_seq_len_per_rank * cp_size tokens (and at most max_num_seqs samples);
// microbatch i gives each DP replica d the packed sequence i*dp_size + d,
// held by all cp_size ranks of that replica.

#ifndef DCPSCHED_CORE_DP_BALANCED_H_
#define DCPSCHED_CORE_DP_BALANCED_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/compact_schedule.h"
#include "core/types.h"

namespace dcpsched {

// Schedules samples of the given lengths. Like upstream, the schedule names
// samples by their position in `lens` (0-based), not by an id. Each DP
// replica of a microbatch is one CP group of cp_size ranks, so the compact
// form has dp_size groups per microbatch. Errors: InvalidArgument for input
// outside the limits (validate.h); FailedPrecondition when there are too few
// samples to make the number of packed sequences a multiple of
// dp_size * vpp_group.
absl::StatusOr<CompactSchedule> ScheduleDpBalancedCompact(
    absl::Span<const std::int64_t> lens, const DpBalancedOptions& options);

// The same schedule in per-rank form: ExpandSchedule of the compact one.
absl::StatusOr<Schedule> ScheduleDpBalanced(absl::Span<const std::int64_t> lens,
                                            const DpBalancedOptions& options);

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_DP_BALANCED_H_
