// Synthetic global batches: seeded, clipped-lognormal sample lengths like
// the ones upstream Megatron-LM benchmarks its dynamic-CP scheduler on.
//
// Upstream's mock variable-length dataset (examples/dynamic_context_parallel,
// "mode": "distribution", "type": "lognormal") draws each length as
//   L = exp(mu + sigma * Z),  Z ~ N(0, 1),  mu = ln(mean) - sigma^2 / 2,
// so `mean` is the mean of the unclipped lognormal; it then clips L to
// [min_len, max_len] (clipping, not resampling: 26% of the benchmark
// preset's lengths sit at exactly min_len) and truncates it to an integer.
// The generator here draws from the same distribution. It cannot reproduce
// upstream's exact lengths (those come from NumPy's global random state);
// what it guarantees instead is that one seed gives the same lengths on
// every machine, compiler and standard library: raw bits come from
// std::mt19937_64 (fully specified by the C++ standard) and every further
// step uses only IEEE-exact operations (+, -, *, /, sqrt), never the
// unspecified std::normal_distribution or the libm-dependent exp and log.

#ifndef DCPSCHED_IO_WORKLOAD_H_
#define DCPSCHED_IO_WORKLOAD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/types.h"

namespace dcpsched {

// Parameters of a clipped-lognormal workload. The defaults are upstream's
// DCP benchmark workload (benchmark_dcp.sh) with dcpsched's default seed and
// batch size.
struct LognormalWorkload {
  std::int64_t num_samples = 256;  // 0..kMaxWorkloadSamples
  double mean_len = 1024.0;        // mean of the unclipped lognormal, > 0
  double sigma = 1.5;              // >= 0; 0 gives mean_len every time
  std::int64_t min_len = 128;      // 1 <= min_len <= max_len
  std::int64_t max_len = 8192;     // <= 2^26, the longest valid sample
  std::uint64_t seed = 5154;
};

// Largest num_samples the generator accepts (a guard against typos that
// would exhaust memory, far beyond any real global batch).
inline constexpr std::int64_t kMaxWorkloadSamples = std::int64_t{1} << 24;

// Upstream's default DCP benchmark distribution: mean 1024, sigma 1.5,
// lengths clipped to [128, 8192].
LognormalWorkload DcpBenchmarkWorkload();

// Upstream's "more skewed long/short distribution" (DCP README): mean 768,
// sigma 1.8, lengths clipped to [128, 8192].
LognormalWorkload SkewedDcpBenchmarkWorkload();

// Draws workload.num_samples lengths; sample i gets id i. InvalidArgument
// (naming the parameter and its allowed range) for parameters out of range.
absl::StatusOr<std::vector<Sample>> GenerateLognormalWorkload(
    const LognormalWorkload& workload);

// One line describing the workload, e.g. "lognormal(mean 1024, sigma 1.5)
// clipped to [128, 8192], seed 5154".
std::string DescribeWorkload(const LognormalWorkload& workload);

}  // namespace dcpsched

#endif  // DCPSCHED_IO_WORKLOAD_H_
