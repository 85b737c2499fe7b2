// RapidCheck generators of cost profiles (core/cost_profile.h), and a
// profile in the reference oracle's form, for the properties that measure
// schedules in GPU time.
//
// Generated profiles are valid but not monotone: a curve may fall as sizes
// grow, per-call floors may dominate, and half of them model communication,
// so properties that hold for every profile are checked where the shipped
// ones would never reach.

#ifndef DCPSCHED_PROPERTIES_PROFILE_GENERATORS_H_
#define DCPSCHED_PROPERTIES_PROFILE_GENERATORS_H_

#include "core/cost_profile.h"
#include "oracle/reference_gpu_time.h"
#include "rapidcheck.h"

namespace dcpsched::properties {

// A valid curve of 1 to 8 points: sizes strictly increasing from 1 to about
// 2^17, times anywhere from 1e-7 to 1 s, not necessarily increasing.
rc::Gen<MeasuredCurve> GenCurve();

// A valid profile of generated curves, with communication half the time.
rc::Gen<CostProfile> GenCostProfile();

// One of the shipped profiles (profiles/*.json), drawn inside a property.
CostProfile ShippedProfile();

// `profile` as the reference oracle's tables (oracle/reference_gpu_time.h).
oracle::ReferenceCostTables ToReference(const CostProfile& profile);

}  // namespace dcpsched::properties

#endif  // DCPSCHED_PROPERTIES_PROFILE_GENERATORS_H_
