// Reference GPU time: a schedule's step time by a cost profile, computed
// the plainest way from the per-rank form, as the yardstick the core's
// MeasureScheduleTime (core/gpu_time.h) is checked against.
//
// Written from docs/cost_model.md, sharing no code with core/ beyond the
// value types of core/types.h: its own tables, its own interpolation (in
// the exp/log form, searching the segment linearly), its own count of the
// ranks that hold each sample, rank by rank. The two agree to about 1e-12
// relative, not bit for bit: the formulas round differently.

#ifndef DCPSCHED_ORACLE_REFERENCE_GPU_TIME_H_
#define DCPSCHED_ORACLE_REFERENCE_GPU_TIME_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/types.h"

namespace dcpsched::oracle {

// A measured table: seconds[i] at sizes[i], sizes increasing.
struct ReferenceTable {
  std::vector<std::int64_t> sizes;
  std::vector<double> seconds;
};

// What the rule needs of a cost profile.
struct ReferenceCostTables {
  ReferenceTable causal;
  ReferenceTable full;
  ReferenceTable non_attention;
  bool communication = false;
  std::int64_t gpus_per_node = 0;
  double intra_node_gb_per_s = 0.0;
  double inter_node_gb_per_s = 0.0;
  double kv_bytes_per_token = 0.0;
};

// Per microbatch, its slowest rank's seconds: each rank's time is the
// non-attention table at the tokens it holds (len / c per sample on c
// ranks) plus per sample causal(len) on one rank, or on c > 1 ranks
// (2c - 1) full(len / 2c) + 2 causal(len / 2c), with communication the
// larger of that and 3 (c - 1) (len / c) kv_bytes / bandwidth. A rank that
// holds nothing costs 0. InvalidArgument for an id not among `samples`.
absl::StatusOr<std::vector<double>> ReferenceMicrobatchSeconds(
    absl::Span<const Sample> samples, const Schedule& schedule,
    const ReferenceCostTables& tables);

}  // namespace dcpsched::oracle

#endif  // DCPSCHED_ORACLE_REFERENCE_GPU_TIME_H_
