#include "core/cost_profile.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace dcpsched {
namespace {

bool IsPositiveFinite(double value) { return std::isfinite(value) && value > 0.0; }

absl::Status ValidateCurve(const MeasuredCurve& curve, const std::string& field,
                           const char* sizes_name) {
  if (curve.sizes.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cost profile: ", field, ".", sizes_name,
        " is empty; every curve needs at least one measured point"));
  }
  if (curve.seconds.size() != curve.sizes.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cost profile: ", field, ".seconds has ", curve.seconds.size(),
        " values but ", field, ".", sizes_name, " has ", curve.sizes.size(),
        "; give one time per measured size"));
  }
  for (std::size_t i = 0; i < curve.sizes.size(); ++i) {
    if (curve.sizes[i] > kMaxProfileSize) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cost profile: ", field, ".", sizes_name, "[", i, "] is ",
          curve.sizes[i], "; sizes above 2^40 are not measurements"));
    }
    if (curve.sizes[i] < 1 || (i > 0 && curve.sizes[i] <= curve.sizes[i - 1])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cost profile: ", field, ".", sizes_name, "[", i, "] is ",
          curve.sizes[i], "; sizes must be positive integers, each larger "
          "than the one before"));
    }
    if (!IsPositiveFinite(curve.seconds[i])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cost profile: ", field, ".seconds[", i, "] is ", curve.seconds[i],
          "; every time must be a finite number > 0"));
    }
    if (curve.seconds[i] < kMinProfileSeconds) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cost profile: ", field, ".seconds[", i, "] is ", curve.seconds[i],
          "; a layer time below 1e-12 s (a picosecond) is not a measurement"));
    }
    if (curve.seconds[i] > kMaxProfileSeconds) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cost profile: ", field, ".seconds[", i, "] is ", curve.seconds[i],
          "; a layer time above 1e6 s (11 days) is not a measurement"));
    }
  }
  return absl::OkStatus();
}

// A bandwidth (GB/s) or byte count: between 1e-3 and 1e9, so no exchange
// time overflows.
absl::Status ValidatePositive(double value, const char* field) {
  if (IsPositiveFinite(value) && value >= 1e-3 && value <= 1e9) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("cost profile: communication.", field, " is ", value,
                   "; it must be a finite number > 0 (between 0.001 and 1e9)"));
}

absl::Status ValidateCommunication(const CommunicationModel& model) {
  if (model.gpus_per_node < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cost profile: communication.gpus_per_node is ", model.gpus_per_node,
        "; it must be an integer >= 1"));
  }
  if (absl::Status s = ValidatePositive(model.intra_node_gb_per_s, "intra_node_gb_per_s");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidatePositive(model.inter_node_gb_per_s, "inter_node_gb_per_s");
      !s.ok()) {
    return s;
  }
  return ValidatePositive(model.kv_bytes_per_token, "kv_bytes_per_token");
}

}  // namespace

absl::Status ValidateCostProfile(const CostProfile& profile) {
  if (absl::Status s = ValidateCurve(profile.causal_attention, "attention.causal", "lengths");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateCurve(profile.full_attention, "attention.full", "lengths");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateCurve(profile.non_attention, "non_attention", "tokens");
      !s.ok()) {
    return s;
  }
  if (profile.communication.has_value()) {
    return ValidateCommunication(*profile.communication);
  }
  return absl::OkStatus();
}

double CurveSeconds(const MeasuredCurve& curve, double size,
                    int growth_exponent) {
  if (!(size > 0.0)) return 0.0;
  const std::size_t last = curve.sizes.size() - 1;
  const auto first_size = static_cast<double>(curve.sizes.front());
  const auto last_size = static_cast<double>(curve.sizes[last]);
  if (size <= first_size) return curve.seconds.front();
  if (size >= last_size) {
    const double ratio = size / last_size;
    double seconds = curve.seconds[last];
    for (int i = 0; i < growth_exponent; ++i) seconds *= ratio;
    return seconds;
  }
  // The segment: sizes[i] <= size < sizes[i + 1].
  const auto above = std::upper_bound(
      curve.sizes.begin(), curve.sizes.end(), size,
      [](double value, std::int64_t point) { return value < static_cast<double>(point); });
  const auto i = static_cast<std::size_t>(above - curve.sizes.begin()) - 1;
  const auto low = static_cast<double>(curve.sizes[i]);
  if (size == low) return curve.seconds[i];
  const auto high = static_cast<double>(curve.sizes[i + 1]);
  const double slope = std::log(curve.seconds[i + 1] / curve.seconds[i]) /
                       std::log(high / low);
  return curve.seconds[i] * std::pow(size / low, slope);
}

double CausalAttentionSeconds(const CostProfile& profile, double len) {
  return CurveSeconds(profile.causal_attention, len, 2);
}

double FullAttentionSeconds(const CostProfile& profile, double len) {
  return CurveSeconds(profile.full_attention, len, 2);
}

double NonAttentionSeconds(const CostProfile& profile, double tokens) {
  return CurveSeconds(profile.non_attention, tokens, 1);
}

double MinNonAttentionSecondsPerToken(const CostProfile& profile) {
  const MeasuredCurve& curve = profile.non_attention;
  double least = curve.seconds.front() / static_cast<double>(curve.sizes.front());
  for (std::size_t i = 1; i < curve.sizes.size(); ++i) {
    least = std::min(least, curve.seconds[i] / static_cast<double>(curve.sizes[i]));
  }
  return least;
}

}  // namespace dcpsched
