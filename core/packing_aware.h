// The packing-aware dynamic context-parallel scheduler (Megatron-LM's
// DefaultDynamicCPScheduler, #5154), reproduced bit for bit.
//
// Each microbatch is built greedily from the longest sample down: a sample
// joins an existing CP group of its size or opens a new one, at its minimum
// CP size or any larger power of two, whichever keeps the busiest rank least
// loaded without passing the microbatch's work cap. Ranks left empty are
// filled by doubling the smallest CP group; when G is not a power of two and
// that cannot fill them, the whole microbatch becomes one group of all G
// ranks. Samples that fit nowhere wait for the next microbatch.
//
// Both functions validate their input (validate.h) and never abort: an input
// on which upstream fails is FailedPrecondition.

#ifndef DCPSCHED_CORE_PACKING_AWARE_H_
#define DCPSCHED_CORE_PACKING_AWARE_H_

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/compact_schedule.h"
#include "core/types.h"

namespace dcpsched {

// Builds one microbatch from `samples` (any order; upstream's
// next_hdp_group_packing_aware, with its max_num_seqs cap when
// options.max_num_seqs is set). options.vpp_group plays no part. Leftovers
// come back longest first, equal lengths in input order.
absl::StatusOr<PackedMicrobatch> PackingAwareStep(
    absl::Span<const Sample> samples, const DynamicCpOptions& options);

// The step's placement before its fill step (the specification's step 5 alone): like
// PackingAwareStep, but ranks no sample reached stay empty (work 0) and the
// leftovers are the placement's. For inspecting a step, and for testing the specification's
// invariant 7: the empty ranks form a tail.
absl::StatusOr<PackedMicrobatch> PackingAwarePlacement(
    absl::Span<const Sample> samples, const DynamicCpOptions& options);

// Schedules a whole global batch: microbatches are built until every sample
// is placed, then aligned to options.vpp_group when it is > 1
// (upstream's DefaultDynamicCPScheduler.get_groups_and_subsamples). Where
// upstream's schedule is one Megatron-LM's runtime cannot run (invariant 11,
// runtime_groups.h), FailedPrecondition says why instead. The
// schedule is built as its groups (compact_schedule.h): memory and time are
// O(samples + groups), whatever G; no group holds the same list as its
// neighbour, so it equals CompactFromRanks(ScheduleDynamicCp(...)).
absl::StatusOr<CompactSchedule> ScheduleDynamicCpCompact(
    absl::Span<const Sample> samples, const DynamicCpOptions& options);

// The schedule exactly as upstream returns it, whether or not Megatron-LM's
// runtime can run it: ScheduleDynamicCpCompact without its invariant-11
// refusal. For comparing with upstream (golden vectors, conformance), which
// returns such schedules; a training job wants ScheduleDynamicCpCompact.
absl::StatusOr<CompactSchedule> ScheduleDynamicCpAsUpstream(
    absl::Span<const Sample> samples, const DynamicCpOptions& options);

// The same schedule in per-rank form: ExpandSchedule of the compact one.
absl::StatusOr<Schedule> ScheduleDynamicCp(absl::Span<const Sample> samples,
                                           const DynamicCpOptions& options);

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_PACKING_AWARE_H_
