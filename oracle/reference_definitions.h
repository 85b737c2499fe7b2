// The specification's words and input limits, written once for the test-only
// oracles: cp_min, work, tokens per rank, the work cap, and what makes a
// problem valid.
//
// The reference oracle (reference_oracle.h) and the reference checker
// (reference_checker.h) both build on these definitions; neither shares code
// with core/, so a slip in the core's cost model or validation cannot hide
// in the yardstick too. Floating point is IEEE double in the specification's
// order (the build uses -ffp-contract=off).

#ifndef DCPSCHED_ORACLE_REFERENCE_DEFINITIONS_H_
#define DCPSCHED_ORACLE_REFERENCE_DEFINITIONS_H_

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/types.h"

namespace dcpsched::oracle {

inline constexpr std::int64_t kMaxTotalGpus = 65536;
inline constexpr std::int64_t kMaxSeqLenPerRank = (std::int64_t{1} << 31) - 1;
inline constexpr std::int64_t kMaxSampleLen = std::int64_t{1} << 26;
inline constexpr double kWorkCapDelta = 0.05;

bool IsPowerOfTwo(std::int64_t x);

// cp_min(len): the smallest power of two c with c * mslpr >= len, raised to
// min_cp_size. Only for validated input: len <= 2^26 and mslpr >= 1 keep
// c <= 2^26 and c * mslpr < 2^58.
std::int64_t CpMin(std::int64_t len, std::int64_t mslpr, std::int64_t min_cp_size);

// work(len, c) = len*len / c: len*len is exact (len <= 2^26), one rounding.
double Work(std::int64_t len, std::int64_t cp_size);

// Tokens a sample puts on each rank of its CP group: len / c, one rounding.
double TokensPerRank(std::int64_t len, std::int64_t cp_size);

// The per-rank work cap of a microbatch whose longest sample is `tallest`,
// evaluated left to right like upstream: (tall * mslpr) * (1.0 + 0.05).
double WorkCap(std::int64_t tallest, std::int64_t mslpr);

// The CP group sizes Megatron-LM's runtime creates at start-up for G ranks
// (create_dynamic_dp_cp_groups): 2^i for i in range(int(log2(G))) with
// 2^i >= min_cp_size, in increasing order. The whole group of G ranks exists
// besides them.
std::vector<std::int64_t> RuntimeCreatedSizes(std::int64_t total_gpus,
                                              std::int64_t min_cp_size);

// The ranks of the group the runtime hands `rank` for CP size `cp_size`
// (get_dynamic_data_context_parallel_groups): all G ranks when cp_size is G;
// else, when cp_size was created, the one of the blocks ranks[i : i + cp_size]
// (i = 0, cp_size, 2 * cp_size, ... below G) that holds `rank`; else nothing,
// and nothing for a rank outside [0, G), which no runtime group holds.
// The same group as its bounds [first, end), without listing its ranks.
std::optional<std::pair<std::int64_t, std::int64_t>> RuntimeGroupBounds(
    std::int64_t rank, std::int64_t cp_size, std::int64_t total_gpus,
    std::int64_t min_cp_size);
std::optional<std::vector<std::int64_t>> RuntimeGroupRanks(std::int64_t rank,
                                                           std::int64_t cp_size,
                                                           std::int64_t total_gpus,
                                                           std::int64_t min_cp_size);

// InvalidArgument with the reason when a limit of the specification's
// "Valid input" is broken.
absl::Status ValidateVppGroup(const std::optional<std::int64_t>& vpp_group);
absl::Status ValidateMaxNumSeqs(const std::optional<std::int64_t>& max_num_seqs);
absl::Status ValidateSeqLenPerRank(std::int64_t mslpr);
absl::Status ValidateSampleLen(std::int64_t len, absl::string_view what);
absl::Status ValidateDynamicCpOptions(const DynamicCpOptions& options);
absl::Status ValidateUniqueIds(absl::Span<const Sample> samples);
// Options in range, every length in range, ids unique, every sample fits in
// G ranks.
absl::Status ValidateDynamicCpProblem(absl::Span<const Sample> samples,
                                      const DynamicCpOptions& options);

}  // namespace dcpsched::oracle

#endif  // DCPSCHED_ORACLE_REFERENCE_DEFINITIONS_H_
