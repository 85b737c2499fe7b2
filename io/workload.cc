#include "io/workload.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "core/types.h"
#include "core/validate.h"

namespace dcpsched {
namespace {

// --- Portable elementary functions -------------------------------------------
// libm's exp and log may differ in the last bit between implementations,
// which would move a truncated length across an integer now and then. These
// use only IEEE-exact operations in a fixed order (the build forbids FMA
// contraction), so they give the same bits everywhere. They are accurate to a
// few ulps, which is all a random-length generator needs.

// ln 2 split so that k * kLn2High is exact for |k| < 2^20 (Cody and Waite).
constexpr double kLn2High = 6.93147180369123816490e-01;
constexpr double kLn2Low = 1.90821492927058770002e-10;
constexpr double kInverseLn2 = 1.44269504088896338700e+00;
constexpr double kSqrtHalf = 0.70710678118654752440;

// e^x. Reduces x = k ln2 + r with |r| <= ln2 / 2, sums the Taylor series of
// e^r to 1/17! (below 2^-60 relative there), then scales by 2^k exactly.
double PortableExp(double x) {
  if (std::isnan(x)) return x;
  if (x > 709.8) return HUGE_VAL;
  if (x < -745.2) return 0.0;
  const double k = std::floor(x * kInverseLn2 + 0.5);
  const double r = (x - k * kLn2High) - k * kLn2Low;
  double series = 1.0;
  for (int term = 17; term >= 1; --term) {
    series = 1.0 + r * series / term;
  }
  return std::ldexp(series, static_cast<int>(k));
}

// ln x for finite x > 0. Writes x = m 2^e with m in [sqrt(1/2), sqrt(2)),
// then ln m = 2 atanh(f), f = (m - 1) / (m + 1), |f| < 0.172, whose odd
// series is summed to f^27 (below 2^-60 relative there).
double PortableLog(double x) {
  int exponent = 0;
  double mantissa = std::frexp(x, &exponent);  // in [0.5, 1)
  if (mantissa < kSqrtHalf) {
    mantissa *= 2.0;
    --exponent;
  }
  const double f = (mantissa - 1.0) / (mantissa + 1.0);
  const double f2 = f * f;
  double series = 0.0;
  for (int power = 27; power >= 1; power -= 2) {
    series = 1.0 / power + f2 * series;
  }
  const double e = exponent;
  return e * kLn2High + (e * kLn2Low + 2.0 * f * series);
}

// --- Random variates
// -----------------------------------------------------------

// Uniform on [-1, 1) from the top 53 bits of one draw.
double SignedUnitFromBits(std::uint64_t bits) {
  constexpr double kTwoToMinus53 = 1.0 / 9007199254740992.0;
  return 2.0 * (static_cast<double>(bits >> 11) * kTwoToMinus53) - 1.0;
}

// Two independent standard normal variates (Marsaglia's polar method).
struct NormalPair {
  double first;
  double second;
};

NormalPair DrawNormalPair(std::mt19937_64& bits) {
  while (true) {
    const double u = SignedUnitFromBits(bits());
    const double v = SignedUnitFromBits(bits());
    const double s = u * u + v * v;
    if (s >= 1.0 || s == 0.0) continue;
    const double scale = std::sqrt(-2.0 * PortableLog(s) / s);
    return {u * scale, v * scale};
  }
}

// Upstream's clipped lognormal: exp(mu + sigma z) clipped to the length
// range, then truncated.
std::int64_t LengthFromNormal(double z, double mu,
                              const LognormalWorkload& workload) {
  const double raw = PortableExp(mu + workload.sigma * z);
  const double low = static_cast<double>(workload.min_len);
  const double high = static_cast<double>(workload.max_len);
  const double clipped = raw < low ? low : (raw > high ? high : raw);
  return static_cast<std::int64_t>(clipped);
}

absl::Status ValidateWorkload(const LognormalWorkload& workload) {
  if (workload.num_samples < 0 || workload.num_samples > kMaxWorkloadSamples) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "workload sample count is %d; it must be between 0 and %d",
        workload.num_samples, kMaxWorkloadSamples));
  }
  if (!(workload.mean_len > 0.0) || !std::isfinite(workload.mean_len)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "workload mean length is %g; it must be a finite number > 0",
        workload.mean_len));
  }
  if (!(workload.sigma >= 0.0) || workload.sigma > 100.0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "workload sigma is %g; it must be between 0 and 100", workload.sigma));
  }
  if (workload.min_len < 1 || workload.max_len > kMaxSampleLen ||
      workload.min_len > workload.max_len) {
    return absl::InvalidArgumentError(
        absl::StrFormat("workload length range is [%d, %d]; it must satisfy "
                        "1 <= min length <= max length <= %d",
                        workload.min_len, workload.max_len, kMaxSampleLen));
  }
  return absl::OkStatus();
}

}  // namespace

LognormalWorkload DcpBenchmarkWorkload() { return LognormalWorkload{}; }

LognormalWorkload SkewedDcpBenchmarkWorkload() {
  LognormalWorkload workload;
  workload.mean_len = 768.0;
  workload.sigma = 1.8;
  return workload;
}

absl::StatusOr<std::vector<Sample>> GenerateLognormalWorkload(
    const LognormalWorkload& workload) {
  if (absl::Status valid = ValidateWorkload(workload); !valid.ok()) {
    return valid;
  }
  const double mu =
      PortableLog(workload.mean_len) - workload.sigma * workload.sigma / 2.0;
  std::mt19937_64 bits(workload.seed);
  std::vector<Sample> samples;
  samples.reserve(static_cast<std::size_t>(workload.num_samples));
  for (std::int64_t id = 0; id < workload.num_samples; id += 2) {
    const NormalPair z = DrawNormalPair(bits);
    samples.push_back({id, LengthFromNormal(z.first, mu, workload)});
    if (id + 1 < workload.num_samples) {
      samples.push_back({id + 1, LengthFromNormal(z.second, mu, workload)});
    }
  }
  return samples;
}

std::string DescribeWorkload(const LognormalWorkload& workload) {
  return absl::StrFormat(
      "lognormal(mean %g, sigma %g) clipped to [%d, %d], seed %d",
      workload.mean_len, workload.sigma, workload.min_len, workload.max_len,
      workload.seed);
}

}  // namespace dcpsched
