// Fuzz target: cost profiles parse without crashing, and every profile that
// parses measures sanely.
//
// The input bytes are a cost profile document (io/cost_profile_file.h).
// ParseCostProfile must not crash; when it succeeds the profile is valid
// (ValidateCostProfile), every curve gives its measured time at each
// measured size and a finite time >= 0 everywhere, the non-attention curve
// is never below its least seconds per token, and a small schedule measured
// by it (core/gpu_time.h) takes a finite step time no shorter than its
// bound.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/compact_schedule.h"
#include "core/cost_profile.h"
#include "core/gpu_time.h"
#include "core/types.h"
#include "fuzz/fuzz_input.h"
#include "io/cost_profile_file.h"

namespace dcpsched::fuzz {
namespace {

constexpr absl::string_view kTarget = "fuzz_cost_profile";
// Relative slack for sums that agree in exact arithmetic.
constexpr double kSlack = 1e-9;

absl::Status CheckCurve(const MeasuredCurve& curve, int growth, absl::string_view name) {
  for (std::size_t i = 0; i < curve.sizes.size(); ++i) {
    const double at = CurveSeconds(curve, static_cast<double>(curve.sizes[i]), growth);
    if (at != curve.seconds[i]) {
      return absl::InternalError(absl::StrCat(name, " at measured size ", curve.sizes[i], " is ",
                                              at, ", not the measured ", curve.seconds[i]));
    }
  }
  for (const double size : {0.5, 1.0, 3.7, 100.0, 4097.5, 1e6, 6.7e7}) {
    const double seconds = CurveSeconds(curve, size, growth);
    if (!std::isfinite(seconds) || seconds < 0.0) {
      return absl::InternalError(absl::StrCat(name, " at ", size, " is ", seconds));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckProfile(const CostProfile& profile) {
  if (absl::Status valid = ValidateCostProfile(profile); !valid.ok()) {
    return absl::InternalError(absl::StrCat("parsed but invalid: ", valid.message()));
  }
  for (const auto& [curve, growth, name] :
       {std::tuple{&profile.causal_attention, 2, "causal attention"},
        std::tuple{&profile.full_attention, 2, "full attention"},
        std::tuple{&profile.non_attention, 1, "non-attention"}}) {
    if (absl::Status status = CheckCurve(*curve, growth, name); !status.ok()) return status;
  }
  const double per_token = MinNonAttentionSecondsPerToken(profile);
  for (const double tokens : {1.0, 77.0, 1000.0, 65536.0, 1e6}) {
    if (NonAttentionSeconds(profile, tokens) < tokens * per_token * (1.0 - kSlack)) {
      return absl::InternalError(absl::StrCat("non-attention at ", tokens,
                                              " tokens is below the least seconds per token ",
                                              per_token));
    }
  }
  // Sample 1 on ranks 0-3, samples 2 and 3 on rank 4, rank 5 empty.
  const std::vector<Sample> samples = {{1, 9000}, {2, 3000}, {3, 17}};
  CompactSchedule schedule;
  schedule.microbatches.push_back({{{0, 4, {1}}, {4, 1, {2, 3}}, {5, 1, {}}}});
  const absl::StatusOr<ScheduleTime> time = MeasureScheduleTime(
      samples, schedule, profile, GpuTimeOptions{.max_seq_len_per_rank = 4096});
  if (!time.ok()) return absl::InternalError(time.status().ToString());
  if (!std::isfinite(time->step_seconds) || !(time->bound_seconds > 0.0) ||
      time->step_seconds < time->bound_seconds * (1.0 - kSlack)) {
    return absl::InternalError(absl::StrCat("step ", time->step_seconds, " s, bound ",
                                            time->bound_seconds, " s"));
  }
  return absl::OkStatus();
}

void TestOneInput(const std::uint8_t* data, std::size_t size) {
  const absl::string_view contents(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<CostProfile> profile = ParseCostProfile(contents);
  if (!profile.ok()) {
    if (profile.status().code() != absl::StatusCode::kInvalidArgument) {
      ReportAndAbort(kTarget, "a malformed profile is not InvalidArgument", profile.status(),
                     absl::CEscape(contents));
    }
    return;
  }
  if (const absl::Status status = CheckProfile(*profile); !status.ok()) {
    ReportAndAbort(kTarget, "a parsed profile measures wrongly", status, absl::CEscape(contents));
  }
}

}  // namespace
}  // namespace dcpsched::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dcpsched::fuzz::TestOneInput(data, size);
  return 0;
}
