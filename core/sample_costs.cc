#include "core/sample_costs.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "core/cost_model.h"
#include "core/cost_profile.h"
#include "core/gpu_time.h"
#include "core/runtime_groups.h"
#include "core/types.h"

namespace dcpsched {
namespace {

// Every size the runtime creates, ascending, G last.
std::vector<std::int64_t> RuntimeSizes(const DynamicCpOptions& options) {
  std::vector<std::int64_t> sizes;
  for (std::int64_t size = 1; size < options.total_gpus; size *= 2) {
    if (RuntimeHasGroupSize(size, options)) sizes.push_back(size);
  }
  sizes.push_back(options.total_gpus);
  return sizes;
}

}  // namespace

SampleCosts::SampleCosts(absl::Span<const Sample> samples,
                         const DynamicCpOptions& options, const CostProfile& profile)
    : samples_(samples), options_(options), profile_(profile),
      sizes_(RuntimeSizes(options)) {
  first_size_.reserve(samples.size());
  row_.reserve(samples.size());
  absl::flat_hash_map<std::int64_t, std::size_t> rows;
  for (const Sample& sample : samples) {
    const std::int64_t cp_min =
        MinCpSize(sample.len, options.max_seq_len_per_rank, options.min_cp_size);
    // G is last and at least cp_min in a valid problem.
    const auto first = std::lower_bound(sizes_.begin(), sizes_.end(), cp_min);
    first_size_.push_back(static_cast<std::size_t>(first - sizes_.begin()));
    row_.push_back(rows.emplace(sample.len, rows.size()).first->second);
  }
  attention_.assign(rows.size() * sizes_.size(), -1.0);
  alone_.assign(rows.size() * sizes_.size(), -1.0);
}

std::size_t SampleCosts::SizeIndex(std::int64_t size) const {
  return static_cast<std::size_t>(
      std::lower_bound(sizes_.begin(), sizes_.end(), size) - sizes_.begin());
}

double SampleCosts::Attention(std::size_t i, std::size_t k) {
  double& cached = attention_[row_[i] * sizes_.size() + k];
  if (cached < 0.0) cached = SampleRankSeconds(profile_, samples_[i].len, sizes_[k]);
  return cached;
}

double SampleCosts::Alone(std::size_t i, std::size_t k) {
  double& cached = alone_[row_[i] * sizes_.size() + k];
  if (cached < 0.0) {
    cached = RankSeconds(TokensPerRank(samples_[i].len, sizes_[k]), Attention(i, k));
  }
  return cached;
}

double SampleCosts::RankSeconds(double tokens, double attention) const {
  return NonAttentionSeconds(profile_, tokens) + attention;
}

}  // namespace dcpsched
