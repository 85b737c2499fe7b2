// Properties of the legacy bucket scheduler (core/legacy.h).

#include "properties/generators.h"
#include "properties/problem_checks.h"
#include "properties/rc_status.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"

namespace dcpsched::properties {
namespace {

RC_GTEST_PROP(LegacyProperties, SchedulesKeepEveryInvariant, ()) {
  RC_ASSERT_OK(CheckLegacyKeepsInvariants(*GenValidProblem()));
}

}  // namespace
}  // namespace dcpsched::properties
