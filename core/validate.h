// Input validation for every scheduler: the limits of the specification's "Valid input".
//
// Each scheduler calls these before it runs, so callers never need to; they
// are public so that a caller can reject a bad global batch early, and so the
// tests can state the limits once. Every violation is InvalidArgument with a
// message that names the bad value and says what is allowed.

#ifndef DCPSCHED_CORE_VALIDATE_H_
#define DCPSCHED_CORE_VALIDATE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/types.h"

namespace dcpsched {

inline constexpr std::int64_t kMaxTotalGpus = 65536;
inline constexpr std::int64_t kMaxSeqLenPerRank = (std::int64_t{1} << 31) - 1;
inline constexpr std::int64_t kMaxSampleLen = std::int64_t{1} << 26;

// Whether `value` is a power of two (1, 2, 4, ...): a CP size dynamic CP
// allows, besides G itself.
bool IsPowerOfTwo(std::int64_t value);

// G, max_seq_len_per_rank, min_cp_size, vpp_group and max_num_seqs are in
// range.
absl::Status ValidateDynamicCpOptions(const DynamicCpOptions& options);

// The options are valid, every sample length is in [1, 2^26], ids are unique,
// and every sample fits in G ranks (MinCpSize(len) <= G).
absl::Status ValidateDynamicCpProblem(absl::Span<const Sample> samples,
                                      const DynamicCpOptions& options);

// dp_size, cp_size (product <= 65536), max_seq_len_per_rank, max_num_seqs and
// vpp_group are in range, and every length is in [1, 2^26] and fits in one
// packed sequence (len <= max_seq_len_per_rank * cp_size).
absl::Status ValidateDpBalancedProblem(absl::Span<const std::int64_t> lens,
                                       const DpBalancedOptions& options);

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_VALIDATE_H_
