// What each sample of a batch costs the ranks of each CP group the runtime
// lets it use, under a cost profile: the table the cost-aware scheduler
// (core/cost_aware.h) chooses CP sizes and stacks samples by.
//
// The sizes are Megatron-LM's runtime sizes (core/runtime_groups.h): every
// power of two the runtime creates at options.total_gpus and
// options.min_cp_size, and G itself. A sample may use a size when it is at
// least cp_min(len) (MinCpSize, core/cost_model.h), so its tokens fit the
// per-rank budget. Its attention on each rank is SampleRankSeconds
// (core/gpu_time.h), computed once per distinct length and size, on demand:
// a batch of thousands of samples has far fewer distinct lengths, and most
// samples are only ever asked about their smallest size.

#ifndef DCPSCHED_CORE_SAMPLE_COSTS_H_
#define DCPSCHED_CORE_SAMPLE_COSTS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/cost_profile.h"
#include "core/types.h"

namespace dcpsched {

class SampleCosts {
 public:
  // `samples`, `options` and `profile` must be valid (ValidateDynamicCpProblem,
  // ValidateCostProfile) and outlive the table.
  SampleCosts(absl::Span<const Sample> samples, const DynamicCpOptions& options,
              const CostProfile& profile);

  SampleCosts(const SampleCosts&) = delete;
  SampleCosts& operator=(const SampleCosts&) = delete;

  std::size_t sample_count() const { return samples_.size(); }
  const Sample& sample(std::size_t i) const { return samples_[i]; }
  const DynamicCpOptions& options() const { return options_; }

  // The runtime sizes, ascending; the last is G.
  const std::vector<std::int64_t>& sizes() const { return sizes_; }
  // Index into sizes() of the smallest size sample i may use.
  std::size_t first_size(std::size_t i) const { return first_size_[i]; }
  // Index of `size`, which must be one of sizes().
  std::size_t SizeIndex(std::int64_t size) const;

  // Attention seconds sample i puts on each of sizes()[k] ranks.
  double Attention(std::size_t i, std::size_t k);
  // Seconds each rank of a group of sizes()[k] ranks takes holding sample i
  // alone: the non-attention part on its len / size tokens plus Attention.
  double Alone(std::size_t i, std::size_t k);

  // Every sample, ordered by its smallest size (largest first), then by
  // Alone at that size (slowest first), then longest first, then by index:
  // the planner's stacking order when no sample widens. Sorted once.
  const std::vector<std::size_t>& SmallestSizeOrder();

  // The non-attention part of a rank holding `tokens` (>= 0) tokens plus
  // `attention` seconds of attention: a rank's time (core/gpu_time.h). The
  // non-attention part of a whole number of tokens up to kMemoTokens (what
  // groups of one rank hold) is computed once.
  double RankSeconds(double tokens, double attention);

  static constexpr std::int64_t kMemoTokens = std::int64_t{1} << 17;

 private:
  absl::Span<const Sample> samples_;
  const DynamicCpOptions& options_;
  const CostProfile& profile_;
  std::vector<std::int64_t> sizes_;
  std::vector<std::size_t> first_size_;
  // Sample i's row in the caches: one row per distinct length.
  std::vector<std::size_t> row_;
  // row * sizes().size() + k; negative until computed.
  std::vector<double> attention_;
  std::vector<double> alone_;
  // Non-attention seconds by whole token count, up to the budget (or
  // kMemoTokens); negative until computed.
  std::vector<double> non_attention_;
  std::vector<std::size_t> smallest_size_order_;
};

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_SAMPLE_COSTS_H_
