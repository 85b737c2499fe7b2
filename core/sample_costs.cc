#include "core/sample_costs.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
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
  // Rows by length, longest first: the planner visits samples about in
  // that order, so the caches are read about in sequence.
  std::vector<std::int64_t> lens;
  lens.reserve(samples.size());
  for (const Sample& sample : samples) lens.push_back(sample.len);
  std::sort(lens.begin(), lens.end(), std::greater<>());
  lens.erase(std::unique(lens.begin(), lens.end()), lens.end());
  absl::flat_hash_map<std::int64_t, std::size_t> rows;
  rows.reserve(lens.size());
  for (const std::int64_t len : lens) rows.emplace(len, rows.size());
  for (const Sample& sample : samples) {
    const std::int64_t cp_min =
        MinCpSize(sample.len, options.max_seq_len_per_rank, options.min_cp_size);
    // G is last and at least cp_min in a valid problem.
    const auto first = std::lower_bound(sizes_.begin(), sizes_.end(), cp_min);
    first_size_.push_back(static_cast<std::size_t>(first - sizes_.begin()));
    row_.push_back(rows.at(sample.len));
  }
  attention_.assign(rows.size() * sizes_.size(), -1.0);
  alone_.assign(rows.size() * sizes_.size(), -1.0);
  non_attention_.assign(
      static_cast<std::size_t>(std::min(options.max_seq_len_per_rank, kMemoTokens)) + 1, -1.0);
}

const std::vector<std::size_t>& SampleCosts::SmallestSizeOrder() {
  if (smallest_size_order_.size() == samples_.size()) return smallest_size_order_;
  struct Key {
    std::size_t size;
    double seconds;
    std::int64_t len;
    std::size_t index;
  };
  std::vector<Key> keys;
  keys.reserve(samples_.size());
  for (std::size_t i = 0; i < samples_.size(); ++i) {
    keys.push_back({first_size_[i], Alone(i, first_size_[i]), samples_[i].len, i});
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    if (a.size != b.size) return a.size > b.size;
    if (a.seconds != b.seconds) return a.seconds > b.seconds;
    if (a.len != b.len) return a.len > b.len;
    return a.index < b.index;
  });
  smallest_size_order_.clear();
  for (const Key& key : keys) smallest_size_order_.push_back(key.index);
  return smallest_size_order_;
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

double SampleCosts::RankSeconds(double tokens, double attention) {
  const auto whole = static_cast<std::size_t>(tokens);
  if (whole < non_attention_.size() &&
      static_cast<double>(whole) == tokens) {
    double& cached = non_attention_[whole];
    if (cached < 0.0) cached = NonAttentionSeconds(profile_, tokens);
    return cached + attention;
  }
  return NonAttentionSeconds(profile_, tokens) + attention;
}

}  // namespace dcpsched
