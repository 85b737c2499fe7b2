// Properties of VPP alignment (core/vpp_align.h): the core against the
// reference oracle, on schedules the scheduler built and on hand-made ones.

#include <cstdint>

#include "absl/status/statusor.h"
#include "core/packing_aware.h"
#include "properties/generators.h"
#include "properties/problem_checks.h"
#include "properties/rc_status.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"

namespace dcpsched::properties::vpp_align_properties {
namespace {

RC_GTEST_PROP(VppAlignProperties, MatchesTheOracleOnScheduledBatches, ()) {
  DynamicCpProblem problem = *GenValidProblem();
  problem.options.vpp_group.reset();
  const absl::StatusOr<Schedule> schedule = ScheduleDynamicCp(problem.samples, problem.options);
  RC_PRE(schedule.ok());
  RC_ASSERT_OK(CheckAlignmentMatchesOracle(*schedule, *rc::gen::inRange<std::int64_t>(1, 6)));
}

RC_GTEST_PROP(VppAlignProperties, MatchesTheOracleOnHandMadeSchedules, ()) {
  const Schedule schedule = *GenHandMadeSchedule();
  RC_ASSERT_OK(CheckAlignmentMatchesOracle(schedule, *rc::gen::inRange<std::int64_t>(0, 6)));
}

// One microbatch and a vpp_group of 3 or more: the microbatch is split, and
// then its halves are, after widening may have made a half's runs grow
// (FailedPrecondition, not the input's fault: InvalidArgument is only for
// runs that grow in the input).
RC_GTEST_PROP(VppAlignProperties, MatchesTheOracleWhenHalvesAreSplitAgain, ()) {
  RC_ASSERT_OK(CheckAlignmentMatchesOracle(*GenMicrobatchOfFewRuns(),
                                           *rc::gen::element<std::int64_t>(3, 4, 5, 6, 7, 8)));
}

}  // namespace
}  // namespace dcpsched::properties::vpp_align_properties
