// Reference oracle: the schedulers of docs/specification.md written the plainest way, as the
// yardstick the fast core (core/) is checked against.
//
// Everything here follows docs/specification.md step by step with vectors and loops, the way
// upstream's Python does it: per-rank time arrays, explicit member lists for
// every CP group, the projected maximum recomputed over all ranks for every
// candidate, free ranks sorted by time, microbatches rebuilt rank by rank.
// It shares no code with core/ beyond the value types of core/types.h, so a
// bug in the core's bookkeeping cannot hide in the oracle too. It is meant for
// tests: correct and easy to read first, fast enough second (G up to 65536
// with a few samples, or a few thousand samples with G up to 512, in seconds).
//
// Floating point is IEEE double in exactly the order docs/specification.md gives (the build
// uses -ffp-contract=off), so exec times match upstream bit for bit.
//
// Errors (never a crash, hang or silent result):
//  - InvalidArgument: the input is outside the specification's "Valid input": G, mslpr,
//    min_cp_size, vpp_group, max_num_seqs, dp_size/cp_size out of range, a
//    length outside [1, 2^26], a duplicate id, a sample that needs more than
//    G ranks (cp_min(len) > G), a dp_balanced sample longer than
//    mslpr * cp_size, or a malformed schedule given to alignment (ragged,
//    an empty rank, CP runs growing left to right in a microbatch it splits).
//  - FailedPrecondition: valid input on which upstream's algorithm fails
//    (an assertion, an IndexError, a hang, or a microbatch of the wrong
//    width): expand-once would move a rank past G-1, the legacy fill would
//    widen a group or move a rank past G-1, VPP alignment finds nothing left
//    to split or cannot widen a half to G ranks, dp_balanced has too few
//    samples to move.

#ifndef DCPSCHED_ORACLE_REFERENCE_ORACLE_H_
#define DCPSCHED_ORACLE_REFERENCE_ORACLE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/types.h"

namespace dcpsched::oracle {

// One packing-aware step (the specification's "Packing-aware step"; upstream's
// next_hdp_group_packing_aware): builds one microbatch of G ranks from
// `samples` (any order). Leftovers come back longest first, equal lengths in
// input order. options.vpp_group is validated but plays no part. With
// options.max_num_seqs set (Megatron-LM PR #6479), a group whose first rank
// already holds that many samples takes no more, and the full-group fallback
// takes at most that many; opening a group, the fill and VPP alignment are
// unchanged, since they move groups whole.
absl::StatusOr<PackedMicrobatch> ReferencePackingAwareStep(
    absl::Span<const Sample> samples, const DynamicCpOptions& options);

// The step's placement before its fill (the specification's steps 2-5): like
// ReferencePackingAwareStep, but ranks no sample reached stay empty (work 0)
// and the leftovers are the placement's.
absl::StatusOr<PackedMicrobatch> ReferencePackingAwarePlacement(
    absl::Span<const Sample> samples, const DynamicCpOptions& options);

// The whole dynamic-CP schedule (the specification's "Dynamic-CP schedule"; upstream's
// DefaultDynamicCPScheduler): steps until every sample is placed, then VPP
// alignment when options.vpp_group > 1. No samples: no microbatches.
// FailedPrecondition where that schedule is one Megatron-LM's runtime cannot
// run (the reference checker finds invariant 11 broken).
absl::StatusOr<Schedule> ReferenceScheduleDynamicCp(
    absl::Span<const Sample> samples, const DynamicCpOptions& options);

// The same schedule as upstream returns it, runnable or not.
absl::StatusOr<Schedule> ReferenceScheduleDynamicCpAsUpstream(
    absl::Span<const Sample> samples, const DynamicCpOptions& options);

// The legacy bucket scheduler that #5154 replaced (the specification's "Legacy bucket
// scheduler (before #5154)"; upstream's next_hdp_group with
// dcp_make_buckets_equal as DefaultDynamicCPScheduler ran them before #5154):
// every sample takes exactly cp_min(len) ranks. Sorted longest first, the
// samples go through legacy steps until every one is placed, then VPP
// alignment when options.vpp_group > 1. Each step cuts its samples into
// buckets of about equal work, places bucket heads on the least loaded group
// of their size or a new group until the ranks are balanced, and fills empty
// ranks by doubling the first smallest group (each widened rank carrying the
// work of its first sample only, like upstream). No samples: no
// microbatches. InvalidArgument when options.max_num_seqs is set: upstream's
// legacy step has no cap. FailedPrecondition where the fill runs past rank G-1
// (upstream: IndexError), which only a G that is not a power of two allows,
// or where VPP alignment fails (ReferenceAlignToVppGroup below), or where the
// schedule breaks invariant 11 (as ReferenceScheduleDynamicCp).
absl::StatusOr<Schedule> ReferenceScheduleLegacy(
    absl::Span<const Sample> samples, const DynamicCpOptions& options);

// The same schedule as upstream returns it, runnable or not.
absl::StatusOr<Schedule> ReferenceScheduleLegacyAsUpstream(
    absl::Span<const Sample> samples, const DynamicCpOptions& options);

// VPP alignment (the specification's "VPP alignment"; upstream's align_sample_id_groups):
// splits microbatches until their number is a multiple of `vpp_group` (>= 1).
// InvalidArgument unless every microbatch has the same number of ranks (>= 1)
// and no empty rank, or when an input microbatch that alignment splits has CP
// runs that grow from left to right (upstream's assertion; the scheduler
// never builds one). Microbatches that are never split are not inspected,
// like upstream. FailedPrecondition when nothing is left to split, when a
// half cannot be widened back to G ranks, when a microbatch an earlier split
// built has growing runs, or -- only for a hand-made schedule, never for one
// the scheduler built -- when more than count * (G - 1) splits would be
// needed (each split separates CP groups; a microbatch holds at most G).
absl::StatusOr<Schedule> ReferenceAlignToVppGroup(Schedule schedule,
                                                  std::int64_t vpp_group);

// The fixed-CP dp_balanced schedule (the specification's "DP-balanced schedule"; upstream's
// DpBalancedScheduler). Like upstream, samples are named by their position
// in `lens` (0-based).
absl::StatusOr<Schedule> ReferenceScheduleDpBalanced(
    absl::Span<const std::int64_t> lens, const DpBalancedOptions& options);

}  // namespace dcpsched::oracle

#endif  // DCPSCHED_ORACLE_REFERENCE_ORACLE_H_
