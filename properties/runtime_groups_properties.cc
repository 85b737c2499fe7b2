// Properties of invariant 11, the CP groups Megatron-LM's runtime has
// (core/runtime_groups.h): the schedulers reproduce upstream's schedule
// exactly and refuse it where the runtime cannot run it, at every G (odd and
// non-power-of-two G included); and the checker's reading of the rule
// agrees with the exhaustive oracle's, on every placement it ranks best.

#include "properties/generators.h"
#include "properties/problem_checks.h"
#include "properties/rc_status.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"

namespace dcpsched::properties {
namespace {

RC_GTEST_PROP(RuntimeGroupsProperties, PackingAwareRefusesExactlyTheUnrunnable, ()) {
  RC_ASSERT_OK(CheckUnrunnableIsRefused(*GenValidProblem(), /*legacy=*/false));
}

RC_GTEST_PROP(RuntimeGroupsProperties, PackingAwareOnMixedSizesRefusesExactlyTheUnrunnable,
              ()) {
  RC_ASSERT_OK(CheckUnrunnableIsRefused(*GenMixedCpSizeProblem(), /*legacy=*/false));
}

RC_GTEST_PROP(RuntimeGroupsProperties, LegacyRefusesExactlyTheUnrunnable, ()) {
  RC_ASSERT_OK(CheckUnrunnableIsRefused(*GenMixedCpSizeProblem(), /*legacy=*/true));
}

RC_GTEST_PROP(RuntimeGroupsProperties, TieProneRefusesExactlyTheUnrunnable, ()) {
  RC_ASSERT_OK(CheckUnrunnableIsRefused(*GenTieProneProblem(), /*legacy=*/false));
}

RC_GTEST_PROP(RuntimeGroupsProperties, TheExhaustiveOracleAgreesWithTheChecker, ()) {
  RC_ASSERT_OK(CheckRuntimeOptimumAgreesWithChecker(*GenExhaustiveProblem()));
}

}  // namespace
}  // namespace dcpsched::properties
