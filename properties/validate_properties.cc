// Properties of input validation (core/validate.h): every problem outside
// SPEC's limits is rejected with InvalidArgument by every entry point.

#include "properties/generators.h"
#include "properties/problem_checks.h"
#include "properties/rc_status.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"

namespace dcpsched::properties {
namespace {

RC_GTEST_PROP(ValidateProperties, InvalidProblemsAreRejectedWithInvalidArgument, ()) {
  RC_ASSERT_OK(CheckInvalidIsRejected(*GenInvalidProblem()));
}

}  // namespace
}  // namespace dcpsched::properties
