// Properties of cost profiles (core/cost_profile.h): every valid curve,
// to the extremes validation allows (times from kMinProfileSeconds to
// kMaxProfileSeconds, sizes from 1 to kMaxProfileSize, neighbouring sizes
// one apart), measures every size to a finite time; and validation refuses
// a curve whose tables differ in length, or a time below the least, naming
// the field.

#include <algorithm>
#include <cmath>
#include <iterator>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/cost_profile.h"
#include "properties/profile_generators.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"

namespace dcpsched::properties::cost_profile_properties {
namespace {

// A time validation accepts, often at one of its limits: the least, the
// largest, or anywhere between on a log scale.
rc::Gen<double> GenExtremeSeconds() {
  return rc::gen::oneOf(
      rc::gen::just(kMinProfileSeconds), rc::gen::just(kMaxProfileSeconds),
      rc::gen::map(rc::gen::inRange(0, 1001), [](int step) {
        // 10^-12 .. 10^6 in steps of 10^0.018.
        return std::min(kMaxProfileSeconds,
                        std::max(kMinProfileSeconds, std::pow(10.0, -12.0 + step * 0.018)));
      }));
}

// A valid curve of 1 to 6 points that reaches validation's limits: sizes
// from 1 up to kMaxProfileSize, neighbours often one apart (the steepest
// log-log segments), times from GenExtremeSeconds.
rc::Gen<MeasuredCurve> GenExtremeCurve() {
  return rc::gen::exec([] {
    const int points = *rc::gen::inRange(1, 7);
    std::int64_t size = *rc::gen::oneOf(
        rc::gen::just<std::int64_t>(1),
        rc::gen::just<std::int64_t>(kMaxProfileSize - points + 1),
        rc::gen::inRange<std::int64_t>(1, kMaxProfileSize - 2 * points));
    MeasuredCurve curve;
    for (int i = 0; i < points; ++i) {
      curve.sizes.push_back(size);
      curve.seconds.push_back(*GenExtremeSeconds());
      const std::int64_t room = kMaxProfileSize - size - (points - 1 - i);
      if (room <= 1) {
        size += 1;
      } else {
        size += *rc::gen::oneOf(rc::gen::just<std::int64_t>(1),
                                rc::gen::inRange<std::int64_t>(1, room / 2 + 1));
      }
    }
    return curve;
  });
}

// Sizes to measure `curve` at: each measured size, its neighbours by a
// fraction, one in the middle of each segment, and beyond both ends.
std::vector<double> SizesAround(const MeasuredCurve& curve) {
  std::vector<double> sizes = {0.5, 1.0};
  for (std::size_t i = 0; i < curve.sizes.size(); ++i) {
    const auto size = static_cast<double>(curve.sizes[i]);
    sizes.insert(sizes.end(), {size, size * (1.0 - 1e-15), size + 0.25, size + 0.5});
    if (i + 1 < curve.sizes.size()) {
      sizes.push_back((size + static_cast<double>(curve.sizes[i + 1])) / 2.0);
    }
  }
  // Beyond the largest point, up to the largest sample (2^26 tokens) a
  // thousand times over.
  sizes.push_back(static_cast<double>(curve.sizes.back()) * 4.0);
  sizes.push_back(6.7e10);
  return sizes;
}

RC_GTEST_PROP(CostProfileProperties, EveryValidCurveMeasuresEverySizeToAFiniteTime, ()) {
  const MeasuredCurve curve = *GenExtremeCurve();
  CostProfile profile;
  profile.causal_attention = curve;
  profile.full_attention = curve;
  profile.non_attention = curve;
  RC_ASSERT(ValidateCostProfile(profile).ok());
  const double largest = *std::max_element(curve.seconds.begin(), curve.seconds.end());
  for (const int growth : {1, 2}) {
    for (std::size_t i = 0; i < curve.sizes.size(); ++i) {
      RC_ASSERT(CurveSeconds(curve, static_cast<double>(curve.sizes[i]), growth) ==
                curve.seconds[i]);
    }
    for (const double size : SizesAround(curve)) {
      const double seconds = CurveSeconds(curve, size, growth);
      RC_LOG() << "size " << size << " growth " << growth << ": " << seconds << " s\n";
      RC_ASSERT(std::isfinite(seconds));
      RC_ASSERT(seconds > 0.0);
      // Up to the largest point the curve stays within its measured times
      // (log-log interpolation lies between its two ends; twice the
      // largest leaves room for rounding on the steepest segments).
      if (size <= static_cast<double>(curve.sizes.back())) {
        RC_ASSERT(seconds <= 2.0 * largest);
      }
    }
  }
}

// Which curve of a profile, as validation names it.
struct NamedCurve {
  MeasuredCurve CostProfile::*curve;
  const char* field;
  const char* sizes_name;
};

constexpr NamedCurve kCurves[] = {
    {&CostProfile::causal_attention, "attention.causal", "lengths"},
    {&CostProfile::full_attention, "attention.full", "lengths"},
    {&CostProfile::non_attention, "non_attention", "tokens"},
};

RC_GTEST_PROP(CostProfileProperties, RefusesACurveWithOneTimeTooManyOrTooFew, ()) {
  CostProfile profile = *GenCostProfile();
  RC_ASSERT(ValidateCostProfile(profile).ok());
  const NamedCurve named = *rc::gen::elementOf(std::vector<NamedCurve>(
      std::begin(kCurves), std::end(kCurves)));
  MeasuredCurve& curve = profile.*named.curve;
  const bool one_more = curve.seconds.size() == 1 || *rc::gen::arbitrary<bool>();
  if (one_more) {
    curve.seconds.push_back(*GenExtremeSeconds());
  } else {
    curve.seconds.pop_back();
  }
  const absl::Status status = ValidateCostProfile(profile);
  RC_ASSERT(status.code() == absl::StatusCode::kInvalidArgument);
  RC_ASSERT(status.message() ==
            absl::StrCat("cost profile: ", named.field, ".seconds has ", curve.seconds.size(),
                         " values but ", named.field, ".", named.sizes_name, " has ",
                         curve.sizes.size(), "; give one time per measured size"));
}

RC_GTEST_PROP(CostProfileProperties, RefusesATimeBelowTheLeast, ()) {
  CostProfile profile = *GenCostProfile();
  const NamedCurve named = *rc::gen::elementOf(std::vector<NamedCurve>(
      std::begin(kCurves), std::end(kCurves)));
  MeasuredCurve& curve = profile.*named.curve;
  const std::size_t i = *rc::gen::inRange<std::size_t>(0, curve.seconds.size());
  // Just below the least, far below it, or subnormal.
  curve.seconds[i] = *rc::gen::oneOf(
      rc::gen::just(std::nextafter(kMinProfileSeconds, 0.0)),
      rc::gen::map(rc::gen::inRange(1, 300),
                   [](int exponent) { return kMinProfileSeconds * std::pow(10.0, -exponent); }),
      rc::gen::just(std::numeric_limits<double>::denorm_min()), rc::gen::just(1e-315));
  const absl::Status status = ValidateCostProfile(profile);
  RC_ASSERT(status.code() == absl::StatusCode::kInvalidArgument);
  RC_ASSERT(status.message() ==
            absl::StrCat("cost profile: ", named.field, ".seconds[", i, "] is ",
                         curve.seconds[i],
                         "; a layer time below 1e-12 s (a picosecond) is not a measurement"));
}

}  // namespace
}  // namespace dcpsched::properties::cost_profile_properties
