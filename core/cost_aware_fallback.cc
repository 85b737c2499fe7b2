#include "core/cost_aware_fallback.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "core/cost_aware_plan.h"
#include "core/sample_costs.h"
#include "core/types.h"

namespace dcpsched {
namespace {

// The counts step by a this-th of the distance from the most to the fewest
// (at least 1).
constexpr std::int64_t kMaxFallbackCounts = 16;

// The samples' indices, longest first, ties by index.
std::vector<std::size_t> LongestFirst(const SampleCosts& costs) {
  std::vector<std::size_t> order(costs.sample_count());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return costs.sample(a).len > costs.sample(b).len;
  });
  return order;
}

}  // namespace

std::vector<std::vector<std::size_t>> SpreadOverMicrobatches(const SampleCosts& costs,
                                                             std::int64_t count) {
  const std::vector<std::size_t> order = LongestFirst(costs);
  std::vector<std::vector<std::size_t>> members(static_cast<std::size_t>(count));
  std::vector<std::int64_t> tokens(members.size(), 0);
  for (const std::size_t i : order) {
    const std::size_t m = static_cast<std::size_t>(
        std::min_element(tokens.begin(), tokens.end()) - tokens.begin());
    members[m].push_back(i);
    tokens[m] += costs.sample(i).len;
  }
  return members;
}

std::vector<std::vector<std::size_t>> SpreadLongestAlone(const SampleCosts& costs,
                                                         std::int64_t count) {
  const std::vector<std::size_t> order = LongestFirst(costs);
  std::vector<std::vector<std::size_t>> members(static_cast<std::size_t>(count));
  for (std::size_t p = 0; p < order.size(); ++p) {
    members[p + 1 < members.size() ? p + 1 : 0].push_back(order[p]);
  }
  return members;
}

std::optional<Plan> PlanOverMicrobatchCounts(SampleCosts& costs) {
  const DynamicCpOptions& options = costs.options();
  const std::int64_t vpp = MicrobatchCountMultiple(options);
  std::int64_t tokens = 0;
  for (std::size_t i = 0; i < costs.sample_count(); ++i) tokens += costs.sample(i).len;
  const std::int64_t capacity = options.total_gpus * options.max_seq_len_per_rank;
  const std::int64_t fewest = std::max<std::int64_t>(1, (tokens + capacity - 1) / capacity);
  const std::int64_t low = (fewest + vpp - 1) / vpp;
  const std::int64_t high = static_cast<std::int64_t>(costs.sample_count()) / vpp;
  std::optional<Plan> best;
  if (low > high) return best;
  const std::int64_t stride = std::max<std::int64_t>(1, (high - low) / kMaxFallbackCounts);
  for (std::int64_t multiple = high; multiple >= low; multiple -= stride) {
    for (const auto spread : {SpreadOverMicrobatches, SpreadLongestAlone}) {
      Plan plan = PlanForPartition(costs, spread(costs, multiple * vpp));
      if (static_cast<std::int64_t>(plan.microbatches.size()) % vpp != 0) continue;
      if (!best.has_value() || plan.step_seconds < best->step_seconds) best = std::move(plan);
    }
  }
  return best;
}

}  // namespace dcpsched
