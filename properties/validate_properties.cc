// Properties of input validation (core/validate.h): every problem outside
// the specification's limits is rejected with InvalidArgument by every entry point.

#include <cstdint>
#include <limits>

#include "core/types.h"
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

// Upstream's max_num_seqs is a count of sequences: below 1 it is refused
// everywhere, whatever else the problem holds.
RC_GTEST_PROP(ValidateProperties, MaxNumSeqsBelowOneIsInvalidArgumentEverywhere, ()) {
  DynamicCpProblem problem = *GenValidProblem();
  problem.options.max_num_seqs = *rc::gen::weightedOneOf<std::int64_t>(
      {{2, rc::gen::just<std::int64_t>(0)},
       {1, rc::gen::just<std::int64_t>(std::numeric_limits<std::int64_t>::min())},
       {2, rc::gen::inRange<std::int64_t>(-1000, 0)}});
  RC_ASSERT_OK(CheckInvalidIsRejected(problem));
}

}  // namespace
}  // namespace dcpsched::properties
