#include "bench/adversarial_batches.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

#include "core/types.h"
#include "core/validate.h"

namespace dcpsched::bench {
namespace {

constexpr std::uint64_t kSeed = 14;  // issue 14

std::int64_t DrawLength(Distribution distribution,
                        std::int64_t max_seq_len_per_rank,
                        std::mt19937_64& random) {
  switch (distribution) {
    case Distribution::kEqual:
      return max_seq_len_per_rank;
    case Distribution::kOnes:
      return 1;
    case Distribution::kBimodal:
      return std::bernoulli_distribution(0.5)(random) ? 8192 : 16;
    case Distribution::kUniform:
      return std::uniform_int_distribution<std::int64_t>(1, 16384)(random);
    case Distribution::kPareto: {
      const double u = std::uniform_real_distribution<double>(
          0.0, 1.0)(random);
      const double len = 64.0 / std::pow(1.0 - u, 1.0 / 1.1);
      return static_cast<std::int64_t>(
          std::min(len, static_cast<double>(kMaxSampleLen)));
    }
    case Distribution::kOverMslpr:
      return max_seq_len_per_rank + 1;
    case Distribution::kHuge:
      return std::uniform_int_distribution<std::int64_t>(1, kMaxSampleLen)(
          random);
  }
  return 1;
}

}  // namespace

std::string_view DistributionName(Distribution distribution) {
  switch (distribution) {
    case Distribution::kEqual:
      return "equal";
    case Distribution::kOnes:
      return "ones";
    case Distribution::kBimodal:
      return "bimodal";
    case Distribution::kUniform:
      return "uniform";
    case Distribution::kPareto:
      return "pareto";
    case Distribution::kOverMslpr:
      return "over_mslpr";
    case Distribution::kHuge:
      return "huge";
  }
  return "unknown";
}

std::vector<Sample> AdversarialBatch(Distribution distribution,
                                     std::int64_t num_samples,
                                     std::int64_t max_seq_len_per_rank) {
  std::mt19937_64 random(kSeed);
  std::vector<Sample> samples;
  samples.reserve(static_cast<std::size_t>(num_samples));
  for (std::int64_t id = 0; id < num_samples; ++id) {
    samples.push_back(
        {id, DrawLength(distribution, max_seq_len_per_rank, random)});
  }
  return samples;
}

}  // namespace dcpsched::bench
