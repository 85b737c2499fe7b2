// How long a schedule takes on a GPU, in seconds, by a measured cost
// profile (core/cost_profile.h), beside the len^2 figures of core/quality.h
// (docs/cost_model.md has the rule, its calibration and the bound's proof).
//
// The rule. A rank's time in one microbatch is the non-attention part of the
// layer on the tokens it holds plus the attention of each of its samples:
//   rank seconds = NonAttention(tokens on the rank) + sum of SampleRankSeconds
// A sample of L tokens on c = 1 rank puts L tokens and causal(L) on it. On
// c > 1 ranks (ring attention over zigzag halves: each rank holds two halves
// of L / 2c tokens) it puts L / c tokens on each and, per rank,
//   attention = (2c - 1) * full(L / 2c) + 2 * causal(L / 2c)
// (its own two halves causally, and the 2c - 1 blocks the ring passes it in
// full). With a communication model, per rank
//   max(attention, comm),  comm = 3 (c - 1) (L / c) kv_bytes_per_token / B
// (forward KV, backward KV and dKV each pass the c - 1 other ranks' blocks;
// B is the intra-node bandwidth when c <= gpus_per_node, else the inter-node
// one, in bytes/s): the exchange overlaps the attention and the slower wins.
// A rank that holds nothing costs 0. A microbatch takes its slowest rank's
// time; the step takes the sum over microbatches.
//
// The bound (StepSecondsLowerBound) is the least step time any schedule of
// the same samples on G ranks can have, whatever its microbatches, if it
// places each sample once on c ranks with c either G, or a power of two
// >= cp_min(len) (MinCpSize with min_cp_size 1), or the fixed CP size when
// it holds the sample (c * max_seq_len_per_rank >= len). The GPU
// efficiency is bound / step: 1.0 would be a schedule no other beats.
//
// Everything is measured group by group on the compact form
// (core/compact_schedule.h): O(samples + groups), whatever G is.

#ifndef DCPSCHED_CORE_GPU_TIME_H_
#define DCPSCHED_CORE_GPU_TIME_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/compact_schedule.h"
#include "core/cost_profile.h"
#include "core/types.h"

namespace dcpsched {

// What the bound may assume about the schedules it bounds.
struct GpuTimeOptions {
  // For cp_min(len): the fewest ranks a sample of len tokens may use.
  std::int64_t max_seq_len_per_rank = 0;
  // dp_balanced's CP size, when the schedules compared include its (it may
  // be neither a power of two nor G).
  std::optional<std::int64_t> fixed_cp_size;
};

// One microbatch's time: per CP group (in the compact form's order) the
// time of each of its ranks, and the slowest rank's.
struct MicrobatchTime {
  std::vector<double> group_seconds;
  double max_seconds = 0.0;
};

struct ScheduleTime {
  std::vector<MicrobatchTime> microbatches;
  // Sum over microbatches of the slowest rank's time.
  double step_seconds = 0.0;
  // StepSecondsLowerBound of the samples on G ranks.
  double bound_seconds = 0.0;
  // bound_seconds / step_seconds (0 when the step takes no time).
  double gpu_efficiency = 0.0;
  // Whether the times include the profile's modelled communication.
  bool communication_modelled = false;
};

// The time a sample of `len` tokens costs each of the `cp_size` ranks that
// hold it, beyond its tokens' non-attention part: the rule above.
double SampleRankSeconds(const CostProfile& profile, std::int64_t len,
                         std::int64_t cp_size);

// The bound above for `samples` on `total_gpus` ranks (0 when total_gpus
// < 1). Linear in the samples (about log2(G) sizes tried per sample).
double StepSecondsLowerBound(absl::Span<const Sample> samples,
                             std::int64_t total_gpus,
                             const CostProfile& profile,
                             const GpuTimeOptions& options);

// Measures `schedule` of `samples` by `profile` (which must be valid,
// ValidateCostProfile). A sample's CP size in a microbatch is the number of
// ranks that hold its id, as in core/quality.h. InvalidArgument, naming the
// microbatch and ranks, for an id not among `samples`, a duplicate id or a
// length outside [1, 2^26] in `samples`, groups that do not tile their
// microbatch, microbatches of different widths or of none, or an empty
// schedule of a non-empty batch.
absl::StatusOr<ScheduleTime> MeasureScheduleTime(
    absl::Span<const Sample> samples, const CompactSchedule& schedule,
    const CostProfile& profile, const GpuTimeOptions& options);

// MeasureScheduleTime without the bound's pass over the samples (its
// bound_seconds and gpu_efficiency stay 0), the rest the same bit for bit
// and with the same errors: what a scheduler comparing candidate schedules
// needs.
absl::StatusOr<ScheduleTime> MeasureScheduleTimeWithoutBound(absl::Span<const Sample> samples,
                                                             const CompactSchedule& schedule,
                                                             const CostProfile& profile);

// The same for a per-rank schedule, measured as CompactFromRanks(schedule).
absl::StatusOr<ScheduleTime> MeasureScheduleTime(
    absl::Span<const Sample> samples, const Schedule& schedule,
    const CostProfile& profile, const GpuTimeOptions& options);

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_GPU_TIME_H_
