// The adversarial batches of the benchmark suite (docs/performance.md,
// "Adversarial batches"): length distributions that a realistic workload
// never produces but that a valid batch may hold, each chosen to push one
// cost of the scheduler to its extreme (microbatch count, groups per
// microbatch, CP sizes). bench/adversarial_lengths.py writes lengths files
// of the same definitions for the command line.

#ifndef DCPSCHED_BENCH_ADVERSARIAL_BATCHES_H_
#define DCPSCHED_BENCH_ADVERSARIAL_BATCHES_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/types.h"

namespace dcpsched::bench {

enum class Distribution {
  kEqual,      // every length max_seq_len_per_rank: one rank each
  kOnes,       // every length 1
  kBimodal,    // 16 or 8192 tokens, even odds
  kUniform,    // uniform on 1..16384
  kPareto,     // 64 / U^(1/1.1): heavy-tailed, clipped to 2^26
  kOverMslpr,  // every length max_seq_len_per_rank + 1: CP 2 each
  kHuge,       // uniform on 1..2^26: about one microbatch per sample
};

inline constexpr Distribution kAllDistributions[] = {
    Distribution::kEqual,   Distribution::kOnes,      Distribution::kBimodal,
    Distribution::kUniform, Distribution::kPareto,    Distribution::kOverMslpr,
    Distribution::kHuge};

// "equal", "ones", "bimodal", "uniform", "pareto", "over_mslpr", "huge" (the
// names bench/adversarial_lengths.py takes).
std::string_view DistributionName(Distribution distribution);

// `num_samples` samples of `distribution`, ids 0..n-1, drawn with a fixed
// seed: the same arguments always give the same batch.
std::vector<Sample> AdversarialBatch(Distribution distribution,
                                     std::int64_t num_samples,
                                     std::int64_t max_seq_len_per_rank);

}  // namespace dcpsched::bench

#endif  // DCPSCHED_BENCH_ADVERSARIAL_BATCHES_H_
