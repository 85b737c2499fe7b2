#include "io/workload.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "core/types.h"
#include "gtest/gtest.h"

namespace dcpsched::workload_test {
namespace {

std::vector<std::int64_t> Lengths(const LognormalWorkload& workload) {
  const absl::StatusOr<std::vector<Sample>> samples =
      GenerateLognormalWorkload(workload);
  EXPECT_TRUE(samples.ok()) << samples.status();
  std::vector<std::int64_t> lens;
  if (samples.ok()) {
    for (const Sample& sample : *samples) lens.push_back(sample.len);
  }
  return lens;
}

double NormalCdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// Moments of L = trunc(clip(exp(mu + sigma Z), a, b)) with
// mu = ln(mean) - sigma^2 / 2, in closed form: for the part inside (a, b),
// E[X^k; a < X < b] = exp(k mu + k^2 sigma^2 / 2) *
//   (Phi((ln b - mu - k sigma^2) / sigma) - Phi((ln a - mu - k sigma^2) /
//   sigma)).
// Truncation lowers a non-integer value by 1/2 on average.
struct ClippedMoments {
  double fraction_at_min;
  double mean;
  double standard_deviation;
};

ClippedMoments ExpectedMoments(const LognormalWorkload& w) {
  const double mu = std::log(w.mean_len) - w.sigma * w.sigma / 2.0;
  const double a = static_cast<double>(w.min_len);
  const double b = static_cast<double>(w.max_len);
  const double below = NormalCdf((std::log(a) - mu) / w.sigma);
  const double above = 1.0 - NormalCdf((std::log(b) - mu) / w.sigma);
  const auto inside_moment = [&](double k) {
    const double shift = k * w.sigma * w.sigma;
    return std::exp(k * mu + k * k * w.sigma * w.sigma / 2.0) *
           (NormalCdf((std::log(b) - mu - shift) / w.sigma) -
            NormalCdf((std::log(a) - mu - shift) / w.sigma));
  };
  const double first = a * below + b * above + inside_moment(1.0);
  const double second = a * a * below + b * b * above + inside_moment(2.0);
  return {below, first - 0.5 * (1.0 - below - above),
          std::sqrt(second - first * first)};
}

TEST(WorkloadTest, SameSeedGivesSameSamples) {
  LognormalWorkload workload;
  workload.num_samples = 1000;

  EXPECT_EQ(GenerateLognormalWorkload(workload).value(),
            GenerateLognormalWorkload(workload).value());
}

TEST(WorkloadTest, DifferentSeedsGiveDifferentLengths) {
  LognormalWorkload first;
  first.num_samples = 100;
  LognormalWorkload second = first;
  second.seed = first.seed + 1;

  EXPECT_NE(Lengths(first), Lengths(second));
}

TEST(WorkloadTest, LengthsAreTheSameOnEveryMachine) {
  // Pinned output of the default workload: a change here means the lengths
  // moved, on this platform or in the generator.
  LognormalWorkload workload;
  workload.num_samples = 12;

  EXPECT_EQ(Lengths(workload),
            (std::vector<std::int64_t>{523, 128, 128, 397, 936, 128, 128, 437,
                                       1121, 609, 8192, 820}));
}

TEST(WorkloadTest, IdsArePositions) {
  LognormalWorkload workload;
  workload.num_samples = 7;

  const std::vector<Sample> samples =
      GenerateLognormalWorkload(workload).value();

  ASSERT_EQ(samples.size(), 7u);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    EXPECT_EQ(samples[i].id, static_cast<SampleId>(i));
  }
}

void ExpectMatchesDistribution(const LognormalWorkload& preset) {
  LognormalWorkload workload = preset;
  workload.num_samples = 100000;
  const std::vector<std::int64_t> lens = Lengths(workload);
  ASSERT_EQ(lens.size(), 100000u);

  double sum = 0.0;
  std::int64_t at_min = 0;
  for (const std::int64_t len : lens) {
    ASSERT_GE(len, workload.min_len);
    ASSERT_LE(len, workload.max_len);
    sum += static_cast<double>(len);
    if (len == workload.min_len) ++at_min;
  }
  const double n = static_cast<double>(lens.size());
  const ClippedMoments expected = ExpectedMoments(workload);
  // Five standard errors: a correct generator fails about once in 1.7
  // million seeds; a wrong mu (e.g. ln(mean) without the -sigma^2/2) or
  // resampling instead of clipping moves the mean by far more.
  const double mean_tolerance =
      5.0 * expected.standard_deviation / std::sqrt(n);
  EXPECT_NEAR(sum / n, expected.mean, mean_tolerance);
  const double p = expected.fraction_at_min;
  EXPECT_NEAR(static_cast<double>(at_min) / n, p,
              5.0 * std::sqrt(p * (1.0 - p) / n));
}

TEST(WorkloadTest, BenchmarkPresetMatchesClippedLognormal) {
  const LognormalWorkload preset = DcpBenchmarkWorkload();
  EXPECT_EQ(preset.mean_len, 1024.0);
  EXPECT_EQ(preset.sigma, 1.5);
  EXPECT_EQ(preset.min_len, 128);
  EXPECT_EQ(preset.max_len, 8192);
  // Clipping at 128 and 8192 pulls the mean from 1024 to about 905.7.
  EXPECT_NEAR(ExpectedMoments(preset).mean, 905.66, 0.01);
  ExpectMatchesDistribution(preset);
}

TEST(WorkloadTest, SkewedPresetMatchesClippedLognormal) {
  const LognormalWorkload preset = SkewedDcpBenchmarkWorkload();
  EXPECT_EQ(preset.mean_len, 768.0);
  EXPECT_EQ(preset.sigma, 1.8);
  ExpectMatchesDistribution(preset);
}

TEST(WorkloadTest, ZeroSigmaGivesTheMean) {
  LognormalWorkload workload;
  workload.num_samples = 5;
  workload.sigma = 0.0;
  workload.mean_len = 1000.5;

  EXPECT_EQ(Lengths(workload), (std::vector<std::int64_t>(5, 1000)));
}

TEST(WorkloadTest, EmptyWorkloadIsAllowed) {
  LognormalWorkload workload;
  workload.num_samples = 0;

  EXPECT_TRUE(GenerateLognormalWorkload(workload).value().empty());
}

TEST(WorkloadTest, OutOfRangeParametersAreInvalidArgument) {
  const auto code = [](auto change) {
    LognormalWorkload workload;
    change(workload);
    return GenerateLognormalWorkload(workload).status().code();
  };
  constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

  EXPECT_EQ(code([](LognormalWorkload& w) { w.num_samples = -1; }), kInvalid);
  EXPECT_EQ(code([](LognormalWorkload& w) {
              w.num_samples = kMaxWorkloadSamples + 1;
            }),
            kInvalid);
  EXPECT_EQ(code([](LognormalWorkload& w) { w.mean_len = 0.0; }), kInvalid);
  EXPECT_EQ(code([](LognormalWorkload& w) { w.mean_len = NAN; }), kInvalid);
  EXPECT_EQ(code([](LognormalWorkload& w) { w.sigma = -0.1; }), kInvalid);
  EXPECT_EQ(code([](LognormalWorkload& w) { w.min_len = 0; }), kInvalid);
  EXPECT_EQ(code([](LognormalWorkload& w) { w.min_len = 9000; }), kInvalid);
  EXPECT_EQ(code([](LognormalWorkload& w) { w.max_len = (1 << 26) + 1; }),
            kInvalid);
}

TEST(WorkloadTest, DescriptionNamesTheParameters) {
  EXPECT_EQ(
      DescribeWorkload(DcpBenchmarkWorkload()),
      "lognormal(mean 1024, sigma 1.5) clipped to [128, 8192], seed 5154");
}

}  // namespace
}  // namespace dcpsched::workload_test
