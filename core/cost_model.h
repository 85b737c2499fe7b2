// The cost model every dynamic-CP scheduler shares: how many ranks a sample
// needs for memory, what attention work it puts on each of them, and the work
// cap of a microbatch. All arithmetic matches upstream's Python bit for bit:
// one IEEE double rounding per operation, in the order written.

#ifndef DCPSCHED_CORE_COST_MODEL_H_
#define DCPSCHED_CORE_COST_MODEL_H_

#include <cstdint>

namespace dcpsched {

// Relative slack of the per-microbatch work cap.
inline constexpr double kWorkCapDelta = 0.05;

// Attention work a sample of `len` tokens puts on each of `cp_size` ranks:
// len*len / cp_size. len*len is exact for every valid len (<= 2^26).
double Work(std::int64_t len, std::int64_t cp_size);

// Smallest power of two c with c * max_seq_len_per_rank >= len, raised to
// min_cp_size. The caller checks the result against G.
std::int64_t MinCpSize(std::int64_t len, std::int64_t max_seq_len_per_rank,
                       std::int64_t min_cp_size);

// Largest work any rank may carry in a microbatch whose longest sample has
// `tallest_len` tokens: tallest_len * max_seq_len_per_rank * (1 + delta).
double WorkCap(std::int64_t tallest_len, std::int64_t max_seq_len_per_rank);

// Tokens a sample of `len` puts on each of `cp_size` ranks (len / cp_size).
double TokensPerRank(std::int64_t len, std::int64_t cp_size);

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_COST_MODEL_H_
