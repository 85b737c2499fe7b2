// The bucket scheduler that the packing-aware scheduler replaced (Megatron-LM
// before #5154), kept so the two can be compared side by side.
//
// Every sample takes exactly its minimum CP size. Samples are cut into
// buckets of similar work and placed round the buckets onto the least loaded
// group of their size, until the ranks are balanced; empty ranks are then
// filled by doubling the first smallest group.

#ifndef DCPSCHED_CORE_LEGACY_H_
#define DCPSCHED_CORE_LEGACY_H_

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/compact_schedule.h"
#include "core/types.h"

namespace dcpsched {

// Schedules a whole global batch the legacy way, then aligns it to
// options.vpp_group when that is > 1, as its groups (compact_schedule.h):
// memory is O(samples + groups), whatever G. Errors: InvalidArgument for
// input outside the limits or with options.max_num_seqs set (the legacy
// scheduler has no cap); FailedPrecondition where upstream fails (no
// group to widen, a widened group running past rank G-1, alignment
// impossible) or returns a schedule Megatron-LM's runtime cannot run
// (invariant 11, runtime_groups.h).
absl::StatusOr<CompactSchedule> ScheduleLegacyCompact(
    absl::Span<const Sample> samples, const DynamicCpOptions& options);

// The schedule exactly as upstream returns it, runnable or not:
// ScheduleLegacyCompact without its invariant-11 refusal, for comparing with
// upstream (golden vectors, conformance).
absl::StatusOr<CompactSchedule> ScheduleLegacyAsUpstream(
    absl::Span<const Sample> samples, const DynamicCpOptions& options);

// The same schedule in per-rank form: ExpandSchedule of the compact one.
absl::StatusOr<Schedule> ScheduleLegacy(absl::Span<const Sample> samples,
                                        const DynamicCpOptions& options);

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_LEGACY_H_
