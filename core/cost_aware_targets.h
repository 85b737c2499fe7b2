// The series of targets, times per microbatch, that the cost-aware
// scheduler (core/cost_aware.h) plans for as it descends: each a fixed
// ratio below the one before, from just below the slowest sample alone to
// just below the longest sample's fastest time, and bounded in number.

#ifndef DCPSCHED_CORE_COST_AWARE_TARGETS_H_
#define DCPSCHED_CORE_COST_AWARE_TARGETS_H_

#include <vector>

namespace dcpsched {

// Targets step down by this factor; the best is then refined by half a
// step on either side.
inline constexpr double kTargetRatio = 0.8;
// At most this many finite targets.
inline constexpr int kMaxCoarseTargets = 24;

// +infinity (tokens alone), then top x kTargetRatio, and each next the one
// before times kTargetRatio, ending with the first below `bottom` or at
// kMaxCoarseTargets finite targets. It starts a step below `top` (the
// slowest sample alone at its smallest size): at that time no sample
// widens, so that plan differs from +infinity's only where time bounds
// stacking. `bottom`: the longest sample's fastest time alone, below which
// no sample can widen further.
std::vector<double> CoarseTargets(double top, double bottom);

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_COST_AWARE_TARGETS_H_
