// The checks behind the property tests, as plain functions on one problem.
//
// Each returns OK when its property holds for the given input and otherwise
// an error whose message says what differs. RapidCheck properties
// (properties/*_properties.cc) call them on generated problems; a regression
// test calls CheckEveryProperty on a problem pasted from a counterexample
// (see io/problem_text.h), so a failure found once is checked forever.

#ifndef DCPSCHED_PROPERTIES_PROBLEM_CHECKS_H_
#define DCPSCHED_PROPERTIES_PROBLEM_CHECKS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/checker.h"
#include "core/compact_schedule.h"
#include "core/types.h"
#include "properties/generators.h"

namespace dcpsched::properties {

// The core's dynamic-CP schedule keeps `invariant` (core/checker.h). A
// FailedPrecondition from the scheduler (an upstream defect docs/specification.md lists) is
// accepted; any other error is not, since the problem is valid.
absl::Status CheckKeepsInvariant(const DynamicCpProblem& problem, Invariant invariant);

// Invariant 7: in the packing-aware step's placement before its fill, the
// empty ranks form a contiguous tail.
absl::Status CheckEmptyRanksFormATail(const DynamicCpProblem& problem);

// The packing-aware step's placement before its fill
// (PackingAwarePlacement) equals the reference oracle's
// (oracle::ReferencePackingAwarePlacement): ids, lengths, per-rank work bit
// for bit, and leftovers. Without this check a placement that already
// filled its free ranks went unnoticed (mutation testing: placement_fills).
// FailedPrecondition is not accepted: a valid problem always has a placement.
absl::Status CheckPlacementMatchesReference(const DynamicCpProblem& problem);

// Invariant 9: scheduling the same problem twice gives the same result.
absl::Status CheckDeterministic(const DynamicCpProblem& problem);

// Differential: the core equals the reference oracle exactly (exec times bit
// for bit) or both fail with the same status code. The step check also
// compares the step's placement before its fill with the reference
// placement (CheckPlacementMatchesReference), so the fuzz target built on it
// sees the placement too.
absl::Status CheckStepMatchesOracle(const DynamicCpProblem& problem);
absl::Status CheckScheduleMatchesOracle(const DynamicCpProblem& problem);
// Alignment fails where upstream loops forever or returns a microbatch wider
// than G; both are FailedPrecondition, so the check also asks that both
// messages say "upstream loops forever", or neither.
absl::Status CheckAlignmentMatchesOracle(const Schedule& schedule, std::int64_t vpp_group);
absl::Status CheckDpBalancedMatchesOracle(const DpBalancedProblem& problem);

// Metamorphic: renaming ids by a bijection (id -> id * odd + salt, wrapping)
// renames the schedule the same way.
absl::Status CheckRelabellingRelabels(const DynamicCpProblem& problem, std::uint64_t salt);

// Metamorphic: doubling every length and mslpr leaves the id layout
// unchanged (every comparison scales exactly). OK if doubling would leave
// the limits.
absl::Status CheckDoublingKeepsLayout(const DynamicCpProblem& problem);

// Metamorphic: with pairwise distinct lengths, the input order does not
// matter. InvalidArgument if two lengths are equal.
absl::Status CheckPermutationKeepsSchedule(const DynamicCpProblem& problem,
                                           std::uint64_t shuffle_seed);

// Metamorphic: min_cp_size 1 schedules exactly as options that never set it.
absl::Status CheckMinCpOneIsTheDefault(const DynamicCpProblem& problem);

// Metamorphic: max_num_seqs of at least the number of samples gives exactly
// the uncapped step, placement and schedule (no group can reach the cap
// while a sample is left to add).
absl::Status CheckCapOfEverySampleIsNoCap(const DynamicCpProblem& problem);

// Under max_num_seqs 1 (whatever the problem's cap), every rank of every
// microbatch holds at most one sample, counted on the rank lists themselves
// (not through the checker). FailedPrecondition is accepted.
absl::Status CheckCapOneHoldsOneSamplePerRank(const DynamicCpProblem& problem);

// Every entry point that takes DynamicCpOptions (step, placement, schedule
// and its compact form, legacy and its compact form, the checker, and the
// oracle's step, placement, schedule and legacy schedule) rejects an invalid
// problem with InvalidArgument.
absl::Status CheckInvalidIsRejected(const DynamicCpProblem& problem);

// The legacy scheduler takes no cap: with max_num_seqs set (to 1 if the
// problem has none), ScheduleLegacy, ScheduleLegacyCompact and the oracle's
// legacy schedule fail with InvalidArgument on a valid problem.
absl::Status CheckLegacyRefusesSequenceCap(const DynamicCpProblem& problem);

// The legacy scheduler's schedules keep every invariant too (or it fails
// with FailedPrecondition, as upstream does). With max_num_seqs set, it
// refuses the cap instead (CheckLegacyRefusesSequenceCap).
absl::Status CheckLegacyKeepsInvariants(const DynamicCpProblem& problem);

// MeasureQuality (core/quality.h) reads `schedule`, a valid schedule of
// `problem`, as built: every microbatch G ranks wide (its width() too) and
// split into runs that cover them, each run the ids its member ranks hold, with the work and
// tokens per rank counted afresh from the rank lists; the busiest and idlest
// rank among them, and SumOverRanks equal to the ranks' sums, bit for bit;
// the batch's token total and length range; the microbatch lower bound
// exactly ceil(total tokens / (G * max_seq_len_per_rank)), and no fewer
// microbatches than it; a balance efficiency in (0, 1].
absl::Status CheckQualityReadsSchedule(const DynamicCpProblem& problem,
                                       const Schedule& schedule);

// MeasureQuality of `schedule` with any `max_seq_len_per_rank` (the figure is
// an input of the measurement, not of the schedule) gives the lower bound
// ceil(total tokens / (G * max_seq_len_per_rank)) exactly.
absl::Status CheckQualityLowerBound(absl::Span<const Sample> samples,
                                    const CompactSchedule& schedule,
                                    std::int64_t max_seq_len_per_rank);

// Differential: the legacy scheduler (ScheduleLegacy) gives the same
// schedule as the reference oracle's (oracle::ReferenceScheduleLegacy), or
// both fail with the same status code. Invariants alone let the bucket rules
// drift unseen (mutation testing: the slack, the bucket count, the target).
absl::Status CheckLegacyMatchesReference(const DynamicCpProblem& problem);

// Invariant 11 (core/runtime_groups.h) in the schedulers: the schedule as
// upstream returns it (ScheduleDynamicCpAsUpstream, ScheduleLegacyAsUpstream)
// equals the reference oracle's, runnable or not; where the reference checker
// finds it breaking invariant 11, the scheduler refuses with
// FailedPrecondition "upstream returns a schedule its runtime cannot run:
// invariant 11 ..."; elsewhere the scheduler returns it unchanged.
// `legacy` picks the legacy scheduler (the problem must then have no cap).
absl::Status CheckUnrunnableIsRefused(const DynamicCpProblem& problem, bool legacy);

// The exhaustive oracle's runtime-groups rule (PlacementRule::kRuntimeGroups,
// its own reading of invariant 11) against the checker's, on a tiny problem
// (G <= 4, at most 6 samples): the best runnable placement keeps invariant
// 11 in the checker's eyes; when the best placement of all does too, the
// two optima are equal; and a packing-aware step that places every sample
// and keeps invariant 11 is no better than the best runnable placement.
absl::Status CheckRuntimeOptimumAgreesWithChecker(const DynamicCpProblem& problem);

// The compact form is the per-rank form, for every scheduler: the compact
// schedule and the per-rank one both succeed or fail alike (same code and
// message); ExpandSchedule(compact) equals the per-rank schedule; the
// compact form is CompactFromRanks of it (no two neighbouring groups hold
// equal lists); and RankIds(compact, r) is the slice of rank r, for ranks 0,
// G/2 and G-1 (every rank when G <= 16).
// CheckCompactMatchesPerRank: the packing-aware schedule of `problem`;
// the others: the legacy schedule, dp_balanced, and VPP alignment of
// `schedule` (AlignToVppGroup of CompactFromRanks(schedule) against that of
// `schedule`).
absl::Status CheckCompactMatchesPerRank(const DynamicCpProblem& problem);
absl::Status CheckLegacyCompactMatchesPerRank(const DynamicCpProblem& problem);
absl::Status CheckDpBalancedCompactMatchesPerRank(const DpBalancedProblem& problem);
absl::Status CheckAlignmentCompactMatchesPerRank(const Schedule& schedule,
                                                 std::int64_t vpp_group);

// Invariant 9 for the legacy scheduler: the same problem twice, the same
// schedule (or the same error).
absl::Status CheckLegacyDeterministic(const DynamicCpProblem& problem);

// Every check above of the packing-aware scheduler (its step, placement,
// schedule, compact form and quality) that applies to the problem; an
// invalid problem must be rejected everywhere (CheckInvalidIsRejected).
absl::Status CheckEveryPackingAwareProperty(const DynamicCpProblem& problem);

// Every check above of the legacy scheduler: it refuses a cap, and on the
// problem without its cap it keeps the invariants, refuses what upstream's
// runtime cannot run, equals the reference oracle, its compact form is its
// per-rank form, and it is deterministic. An invalid problem must be
// rejected everywhere.
absl::Status CheckEveryLegacyProperty(const DynamicCpProblem& problem);

// Both of the above: for regression tests.
absl::Status CheckEveryProperty(const DynamicCpProblem& problem);

}  // namespace dcpsched::properties

#endif  // DCPSCHED_PROPERTIES_PROBLEM_CHECKS_H_
