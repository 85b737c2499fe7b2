#include "oracle/reference_gpu_time.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "core/types.h"

namespace dcpsched::oracle {
namespace {

// The table at x: flat below its first point, x^power beyond its last, and
// between points y = exp(log y0 + (log x - log x0) / (log x1 - log x0) *
// (log y1 - log y0)).
double Lookup(const ReferenceTable& table, double x, double power) {
  if (x <= 0.0) return 0.0;
  const std::size_t n = table.sizes.size();
  if (x <= static_cast<double>(table.sizes[0])) return table.seconds[0];
  const auto last = static_cast<double>(table.sizes[n - 1]);
  if (x >= last) return table.seconds[n - 1] * std::pow(x / last, power);
  for (std::size_t k = 1; k < n; ++k) {
    const auto x1 = static_cast<double>(table.sizes[k]);
    if (x > x1) continue;
    const auto x0 = static_cast<double>(table.sizes[k - 1]);
    const double fraction = (std::log(x) - std::log(x0)) / (std::log(x1) - std::log(x0));
    return std::exp(std::log(table.seconds[k - 1]) +
                    fraction * (std::log(table.seconds[k]) - std::log(table.seconds[k - 1])));
  }
  return table.seconds[n - 1];  // not reached: x < last
}

double SampleAttention(const ReferenceCostTables& tables, std::int64_t len,
                       std::int64_t c) {
  const auto l = static_cast<double>(len);
  if (c == 1) return Lookup(tables.causal, l, 2.0);
  const double half = l / (2.0 * static_cast<double>(c));
  const double attention = (2.0 * static_cast<double>(c) - 1.0) * Lookup(tables.full, half, 2.0) +
                           2.0 * Lookup(tables.causal, half, 2.0);
  if (!tables.communication) return attention;
  const double gb_per_s =
      c <= tables.gpus_per_node ? tables.intra_node_gb_per_s : tables.inter_node_gb_per_s;
  const double bytes = 3.0 * static_cast<double>(c - 1) * (l / static_cast<double>(c)) *
                       tables.kv_bytes_per_token;
  const double exchange = bytes / (gb_per_s * 1e9);
  return exchange > attention ? exchange : attention;
}

}  // namespace

absl::StatusOr<std::vector<double>> ReferenceMicrobatchSeconds(
    absl::Span<const Sample> samples, const Schedule& schedule,
    const ReferenceCostTables& tables) {
  std::map<SampleId, std::int64_t> len_of;
  for (const Sample& sample : samples) len_of[sample.id] = sample.len;
  std::vector<double> result;
  for (std::size_t m = 0; m < schedule.microbatches.size(); ++m) {
    const Microbatch& microbatch = schedule.microbatches[m];
    std::map<SampleId, std::int64_t> ranks_holding;
    for (const std::vector<SampleId>& rank : microbatch.rank_ids) {
      for (const SampleId id : rank) {
        if (len_of.count(id) == 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("microbatch ", m, " holds unknown sample id ", id));
        }
        ranks_holding[id] += 1;
      }
    }
    double slowest = 0.0;
    for (const std::vector<SampleId>& rank : microbatch.rank_ids) {
      double tokens = 0.0;
      double attention = 0.0;
      for (const SampleId id : rank) {
        const std::int64_t c = ranks_holding[id];
        tokens += static_cast<double>(len_of[id]) / static_cast<double>(c);
        attention += SampleAttention(tables, len_of[id], c);
      }
      const double seconds = Lookup(tables.non_attention, tokens, 1.0) + attention;
      if (seconds > slowest) slowest = seconds;
    }
    result.push_back(slowest);
  }
  return result;
}

}  // namespace dcpsched::oracle
