// Exhaustive time oracle: the fastest schedule of a tiny instance under a
// cost profile, found by trying every one Megatron-LM's runtime can run.
//
// The cost-aware scheduler (core/cost_aware.h) is a heuristic; this oracle
// says how fast any runnable schedule could be, so the suite can check that
// the scheduler never claims to beat the optimum (which would mean it broke
// a rule) and can bound how far from it the scheduler lands.
//
// A schedule here is a split of the samples into microbatches, each placed
// on G ranks so that:
//  - every sample is on one run of ranks: all G ranks, or an aligned block
//    [k * c, (k + 1) * c) of a size c the runtime creates
//    (RuntimeCreatedSizes), with c >= cp_min(len) (which includes
//    min_cp_size);
//  - two samples whose runs share a rank have the same run;
//  - no rank is empty;
//  - every rank's tokens, the sum of len / c over its samples in input order,
//    are at most max_seq_len_per_rank;
//  - when options.max_num_seqs is set, no rank holds more samples;
//  - when options.vpp_group > 1, the number of microbatches is a multiple.
// The work cap (invariant 5) is no rule here: the cost-aware scheduler does
// not keep it. Its time is the sum over microbatches of the slowest rank by
// ReferenceMicrobatchSeconds (reference_gpu_time.h). Nothing here shares code
// with core/: the definitions are reference_definitions.h's.
//
// Method: the best placement of every subset of the samples as one
// microbatch (every combination of per-sample runs), then the best split of
// the whole batch into subsets with a microbatch count the rules allow
// (dynamic programming over subsets).

#ifndef DCPSCHED_ORACLE_EXHAUSTIVE_TIME_ORACLE_H_
#define DCPSCHED_ORACLE_EXHAUSTIVE_TIME_ORACLE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/types.h"
#include "oracle/reference_gpu_time.h"

namespace dcpsched::oracle {

// Largest instance enumerated: 5 samples on at most 8 ranks (at most 8 + 4
// + 2 + 1 runs per sample, so at most 16^5 combinations for the whole batch).
inline constexpr std::int64_t kTimeOracleMaxSamples = 5;
inline constexpr std::int64_t kTimeOracleMaxGpus = 8;

struct TimeOptimum {
  // The least step time over every runnable schedule, in seconds.
  double step_seconds = 0.0;
  // One fastest schedule (the first found), per rank.
  Schedule schedule;
  // How many single-microbatch placements were valid (for sanity tests).
  std::int64_t placements_enumerated = 0;
};

// Every placement of the samples samples[members] (indices in increasing
// order) as one microbatch of options.total_gpus ranks that keeps the rules
// above that concern one microbatch: runs, nesting, no empty rank, token
// budget, max_num_seqs. Each rank lists its ids in input order. The order
// is fixed: the first member's runs vary slowest, each sample's runs in
// increasing size and then first rank, all G ranks last. Empty when none
// keeps them. Shared with the runtime oracle
// (exhaustive_runtime_oracle.h); for validated input within the limits
// above.
std::vector<Microbatch> RunnableMicrobatches(absl::Span<const Sample> samples,
                                             absl::Span<const std::size_t> members,
                                             const DynamicCpOptions& options);

// The fastest runnable schedule of `samples`. InvalidArgument for input
// outside the specification's limits or larger than the limits above;
// NotFound when no schedule keeps the rules (for example fewer samples than
// vpp_group, or only one sample per microbatch possible and a count that is
// no multiple of it). An empty batch has the empty schedule, 0 seconds.
absl::StatusOr<TimeOptimum> ExhaustiveFastestSchedule(absl::Span<const Sample> samples,
                                                      const DynamicCpOptions& options,
                                                      const ReferenceCostTables& tables);

}  // namespace dcpsched::oracle

#endif  // DCPSCHED_ORACLE_EXHAUSTIVE_TIME_ORACLE_H_
