// RapidCheck generators of scheduling problems that break schedulers.
//
// Valid problems mix what the specification's limits allow and what real batches look
// like: realistic lognormal lengths (mean 1024, sigma 1.5, clipped to
// [128, 8192]), lengths at and around k * mslpr, runs of equal lengths, tiny
// lengths and budgets, fewer samples than ranks, G that is not a power of two
// (3, 5, 6, 7, 12, 14, 24, and any G up to 64), min_cp_size > 1, VPP groups
// 2-4, large G (up to 4096) with few samples, and in half the problems
// max_num_seqs: mostly 1..4, where it binds, sometimes 5..17, sometimes at
// least the number of samples. Every length is clamped to what G ranks can
// hold, so shrinking (fewer samples, shorter lengths, smaller G, min_cp 1,
// no VPP, no cap) keeps the problem valid and ends on small
// counterexamples.
//
// Failing problems print in the one-line form of io/problem_text.h.

#ifndef DCPSCHED_PROPERTIES_GENERATORS_H_
#define DCPSCHED_PROPERTIES_GENERATORS_H_

#include <cstdint>
#include <ostream>
#include <vector>

#include "core/types.h"
#include "rapidcheck.h"

namespace dcpsched {

// Prints `problem` for RapidCheck counterexamples (found by ADL).
void showValue(const DynamicCpProblem& problem, std::ostream& os);

namespace properties {

// A problem that satisfies every limit of the specification's "Valid input".
rc::Gen<DynamicCpProblem> GenValidProblem();

// GenValidProblem without max_num_seqs: for the legacy scheduler, which
// takes no cap.
rc::Gen<DynamicCpProblem> GenValidUncappedProblem();

// A valid problem made for exact ties: odd G and any G up to 16, and one to
// three runs of one to four equal lengths at mslpr or 2 * mslpr, minus one,
// exactly, or plus one, capped like GenValidProblem's. Equal lengths give
// equal works, so candidates of different CP sizes and kinds tie and the specification's
// tie order decides.
rc::Gen<DynamicCpProblem> GenTieProneProblem();

// A valid problem small enough for the exhaustive oracle: G from 1 to 4
// (3, whose runtime creates groups of 1 and 3 only, most often), one to five
// samples whose lengths need every CP size up to the widest, min_cp_size 1
// or 2, sometimes a cap of 1 to 3.
rc::Gen<DynamicCpProblem> GenExhaustiveProblem();

// A valid problem for the legacy scheduler's balance stop (a step ends when,
// after a sample of a smaller CP size, no rank is free and the ranks' works
// are within 5% of the most): G = 3, a sample of two ranks' length, a second
// whose work on the third rank is 93% to 100% of the first's per rank, often
// at the tolerance's edge, and short samples that would still fit beside
// it. Other problems seldom fill every rank with works that close.
rc::Gen<DynamicCpProblem> GenBalanceProneProblem();

// A valid problem whose lengths need up to four distinct CP sizes, mostly
// two or more (fewer where G or min_cp_size leaves fewer, or the draws
// repeat one): each length lies in ((c/2) * mslpr, c * mslpr] for one
// chosen power of two c, at either end or inside, or repeats the previous
// length. G is any from 2 to 16 or one of a few up to 64, or the largest
// chosen size plus fewer spare ranks than that; half the problems have at
// most six samples. The legacy scheduler cuts about one bucket per distinct
// CP size, and a G that is not a power of two leaves too few free ranks for
// a larger size, so bucket boundaries decide which samples a microbatch
// gets; with about one sample per size the count rule closes buckets too.
// Lognormal lengths on mslpr 2048 rarely need more than one size, and
// GenValidProblem seldom picks such G. Never capped: it serves the legacy
// scheduler.
rc::Gen<DynamicCpProblem> GenMixedCpSizeProblem();

// A valid problem whose sample lengths are pairwise distinct.
rc::Gen<DynamicCpProblem> GenProblemWithDistinctLengths();

// One of `count` cases, 0 to count - 1, each as likely at every size. For
// choosing which breakage or damage a case gets: RapidCheck's inRange scales
// with the size parameter, so the small sizes every run starts with would
// draw only the first cases, and the last only near the top size (a run of
// 1000 cases drew dp_balanced's "longer than a packed sequence" breakage not
// once).
rc::Gen<int> GenCase(int count);

// A valid problem with exactly one limit broken: G, mslpr, min_cp_size (0
// among its bad values), vpp_group or max_num_seqs out of range, a length
// out of [1, 2^26], a duplicate id, or a sample that needs more than G ranks.
rc::Gen<DynamicCpProblem> GenInvalidProblem();

// Lengths and options for the dp_balanced scheduler, valid.
struct DpBalancedProblem {
  std::vector<std::int64_t> lens;
  DpBalancedOptions options;
};
rc::Gen<DpBalancedProblem> GenDpBalancedProblem();

// A dp_balanced problem with exactly one limit broken: dp_size, cp_size or
// their product, mslpr, max_num_seqs or vpp_group out of range, a length out
// of [1, 2^26], or one longer than mslpr * cp_size.
rc::Gen<DpBalancedProblem> GenInvalidDpBalancedProblem();

// A schedule of `width` ranks per microbatch that need not come from any
// scheduler: runs of equal id lists, sometimes malformed (ragged, an empty
// rank, runs growing left to right), some runs split into two groups that
// share the run's first id, for VPP alignment.
rc::Gen<Schedule> GenHandMadeSchedule();

// One well-formed hand-made microbatch of 2 to 16 ranks: up to four runs of
// 1 to 8 ranks, largest first, then single ranks up to the width. Drawn
// evenly (GenCase) at every size: a few large runs followed by single ranks
// are the shapes whose halves VPP alignment widens into growing runs.
rc::Gen<Schedule> GenMicrobatchOfFewRuns();

}  // namespace properties

void showValue(const properties::DpBalancedProblem& problem, std::ostream& os);

}  // namespace dcpsched

#endif  // DCPSCHED_PROPERTIES_GENERATORS_H_
