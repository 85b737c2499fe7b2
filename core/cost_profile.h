// A device cost profile: what one transformer layer costs in seconds on a
// real GPU, measured, so that schedules can be judged in the unit a training
// step is paid in (docs/cost_model.md).
//
// The schedulers balance upstream's proxy, len^2 / cp per rank
// (core/cost_model.h). A profile replaces the proxy for measuring, never for
// scheduling: the schedules stay upstream's bit for bit. It holds three
// measured curves, each a table of (size, seconds) points:
//   - causal attention of one sequence of L tokens (forward + backward);
//   - full (unmasked) attention of one sequence of L tokens: the blocks ring
//     attention runs between the zigzag halves of different ranks;
//   - the rest of the layer (projections, MLP, norms) on T tokens.
// Between measured points a curve is interpolated log-log (a power law per
// segment). Below the smallest point it takes the smallest point's time (a
// fixed per-call cost dominates there); beyond the largest it grows as the
// work does: attention as L^2, the rest as T.
//
// Optionally a profile models communication: the ring-attention KV exchange
// of a sample split over c > 1 ranks (core/gpu_time.h). That part is a model,
// not a measurement, and every report that uses it says so.

#ifndef DCPSCHED_CORE_COST_PROFILE_H_
#define DCPSCHED_CORE_COST_PROFILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace dcpsched {

// The largest size and time a measured point may have: beyond them a value
// is no measurement, and interpolating it could lose precision (sizes past
// 2^53 are not exact doubles) or overflow.
inline constexpr std::int64_t kMaxProfileSize = std::int64_t{1} << 40;
inline constexpr double kMaxProfileSeconds = 1e6;
// The least time a measured point may have: below it a value is no
// measurement. It keeps the ratio of any two times of a curve, which
// log-log interpolation divides, within 1e18 (a tiny time such as a
// subnormal 1e-315 made that ratio overflow to inf), so every valid curve
// gives a finite time at every size.
inline constexpr double kMinProfileSeconds = 1e-12;

// A measured curve: seconds[i] at sizes[i]. Valid when non-empty, of equal
// lengths, sizes strictly increasing positive integers up to
// kMaxProfileSize and every time a finite number in
// [kMinProfileSeconds, kMaxProfileSeconds].
struct MeasuredCurve {
  std::vector<std::int64_t> sizes;
  std::vector<double> seconds;

  friend bool operator==(const MeasuredCurve&, const MeasuredCurve&) = default;
};

// The modelled ring-attention KV exchange (not measured: one GPU cannot
// measure it). A CP group of at most gpus_per_node ranks exchanges at the
// intra-node bandwidth, a larger one at the inter-node bandwidth.
struct CommunicationModel {
  std::int64_t gpus_per_node = 8;
  double intra_node_gb_per_s = 0.0;  // 1 GB = 1e9 bytes
  double inter_node_gb_per_s = 0.0;
  double kv_bytes_per_token = 0.0;  // K and V of one token, one layer

  friend bool operator==(const CommunicationModel&,
                         const CommunicationModel&) = default;
};

// One profile. The descriptive fields are for reports; the curves and the
// communication model are what the times are computed from.
struct CostProfile {
  std::string name;         // e.g. "h200-llama3-8b"
  std::string description;  // one line
  std::string device;       // e.g. "NVIDIA H200"; may be empty
  std::string model;        // e.g. "llama3-8b"; may be empty
  MeasuredCurve causal_attention;
  MeasuredCurve full_attention;
  MeasuredCurve non_attention;
  // Absent: compute only, communication not modelled.
  std::optional<CommunicationModel> communication;

  friend bool operator==(const CostProfile&, const CostProfile&) = default;
};

// OK, or InvalidArgument naming the first bad field the way the profile's
// JSON spells it ("attention.causal.seconds[3] is -1; every time must be a
// finite number > 0"): an empty curve, sizes and seconds of different
// lengths, a size < 1, above kMaxProfileSize or not above the one before, a
// time that is not a finite number > 0, below kMinProfileSeconds or above
// kMaxProfileSeconds, or a
// communication model with gpus_per_node < 1 or a
// bandwidth or byte count outside [1e-3, 1e9].
absl::Status ValidateCostProfile(const CostProfile& profile);

// `curve` at `size` (> 0): log-log between measured points, the smallest
// point's time below it, and beyond the largest point that point's time
// scaled by (size / largest)^growth_exponent (2 for attention, 1 for the
// rest). At a measured size exactly its measured time. 0 when size <= 0.
// The curve must be valid.
double CurveSeconds(const MeasuredCurve& curve, double size,
                    int growth_exponent);

// Causal attention of one sequence of `len` tokens (real-valued: a zigzag
// half of a CP-split sample holds len / 2c tokens).
double CausalAttentionSeconds(const CostProfile& profile, double len);

// Full (unmasked) attention between two blocks of `len` tokens.
double FullAttentionSeconds(const CostProfile& profile, double len);

// The rest of the layer on `tokens` tokens; 0 for a rank that holds none.
double NonAttentionSeconds(const CostProfile& profile, double tokens);

// The least non-attention time per token over every token count:
// min over measured points of seconds / tokens. Log-log interpolation makes
// seconds / tokens a power of tokens on each segment (monotone there, so
// its extremes are at the points), constant beyond the largest point and
// decreasing below the smallest: this minimum is the infimum over all T > 0,
// so NonAttentionSeconds(T) >= T * it for every T (up to rounding).
double MinNonAttentionSecondsPerToken(const CostProfile& profile);

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_COST_PROFILE_H_
