// Exhaustive oracle: the best possible single microbatch of a tiny instance,
// found by trying every placement.
//
// The packing-aware step is a greedy heuristic; this oracle bounds how good
// any placement could be, so the suite can check that the step never claims
// to beat the optimum (which would mean it broke a constraint) and can
// measure how far from the optimum it lands.
//
// A placement puts every given sample on one contiguous run of ranks
// [first_rank, first_rank + cp_size) of one microbatch of G ranks, where
//  - cp_size is a power of two or G, with cp_min(len) <= cp_size <= G
//    (cp_min includes min_cp_size, as in docs/specification.md);
//  - every rank's tokens, sum(len / cp_size) over the samples it holds, are
//    at most max_seq_len_per_rank;
//  - no rank is empty;
//  - when options.max_num_seqs is set, no rank holds more samples than that.
// The work cap (tall * mslpr * 1.05) is not a constraint here: it cannot
// lower the optimum below a placement that respects it.
//
// Why all given samples and no empty rank: the packing-aware step's result,
// when it places every sample, satisfies exactly these rules (docs/specification.md
// invariants 1-6, and 10 under a cap), so it is one of the enumerated placements and its max rank
// work can never be below the optimum. An optimum over subsets would not be
// comparable (placing fewer samples is always cheaper). To compare against a
// step that left samples over, pass only the samples it placed.
//
// Work is compared exactly, in integers: rank work times kWorkScale (12, a
// multiple of every CP size 1..4) is sum(len*len * (12 / cp_size)), exact for
// every valid len (<= 2^26). Tokens are compared the same way.

#ifndef DCPSCHED_ORACLE_EXHAUSTIVE_ORACLE_H_
#define DCPSCHED_ORACLE_EXHAUSTIVE_ORACLE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/types.h"

namespace dcpsched::oracle {

// Which placements are enumerated: every one the rules above allow, or only
// those Megatron-LM's runtime can run (the specification's invariant 11,
// written here as its own reading): every sample's run is all G ranks, or an
// aligned block [k * c, (k + 1) * c) of a size c the runtime creates
// (RuntimeCreatedSizes), and two samples whose runs share a rank have the
// same run.
enum class PlacementRule { kAny, kRuntimeGroups };

// Largest instance enumerated: at most 8 placements per sample at G = 4, so
// at most 8^6 = 262144 combinations.
inline constexpr std::int64_t kExhaustiveMaxSamples = 6;
inline constexpr std::int64_t kExhaustiveMaxGpus = 4;

// Rank work and tokens are compared multiplied by this (exact integers).
inline constexpr std::int64_t kWorkScale = 12;

// Where one sample goes: ranks [first_rank, first_rank + cp_size).
struct SamplePlacement {
  Sample sample;
  std::int64_t first_rank = 0;
  std::int64_t cp_size = 0;

  friend bool operator==(const SamplePlacement&,
                         const SamplePlacement&) = default;
};

struct ExhaustiveOptimum {
  // The smallest max rank work over all valid placements, times kWorkScale.
  std::int64_t scaled_max_work = 0;
  // The same as a double: scaled_max_work / kWorkScale, one rounding.
  double max_work = 0.0;
  // One optimal placement (the first met in enumeration order), one entry
  // per sample in input order, and the microbatch it gives (per rank, the
  // ids it holds, in input order).
  std::vector<SamplePlacement> placement;
  Microbatch microbatch;
  // How many valid placements were enumerated (for sanity tests).
  std::int64_t placements_enumerated = 0;
};

// Enumerates every valid placement of all of `samples` (options.vpp_group
// plays no part). Errors: InvalidArgument for input outside the specification's limits
// (including cp_min(len) > G and max_num_seqs < 1) or larger than kExhaustiveMaxSamples samples
// or kExhaustiveMaxGpus ranks; NotFound when no valid placement exists (for
// example no samples, more tokens than G ranks hold, fewer samples than
// ranks can cover, or more samples than the cap lets the ranks hold).
absl::StatusOr<ExhaustiveOptimum> ExhaustiveBestPlacement(
    absl::Span<const Sample> samples, const DynamicCpOptions& options,
    PlacementRule rule = PlacementRule::kAny);

// The max rank work of `microbatch` (at most kExhaustiveMaxGpus ranks) times
// kWorkScale, exactly: each sample's CP size is the number of ranks holding
// its id. InvalidArgument if the microbatch is wider than
// kExhaustiveMaxGpus or names an id that is not in `samples`.
absl::StatusOr<std::int64_t> ScaledMaxRankWork(const Microbatch& microbatch,
                                               absl::Span<const Sample> samples);

}  // namespace dcpsched::oracle

#endif  // DCPSCHED_ORACLE_EXHAUSTIVE_ORACLE_H_
