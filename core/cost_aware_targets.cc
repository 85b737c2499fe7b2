#include "core/cost_aware_targets.h"

#include <limits>
#include <vector>

namespace dcpsched {

std::vector<double> CoarseTargets(double top, double bottom) {
  std::vector<double> targets = {std::numeric_limits<double>::infinity()};
  for (double target = top * kTargetRatio; targets.size() <= kMaxCoarseTargets;
       target *= kTargetRatio) {
    targets.push_back(target);
    if (target < bottom) break;
  }
  return targets;
}

}  // namespace dcpsched
