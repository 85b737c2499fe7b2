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

namespace dcpsched::properties {
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

}  // namespace
}  // namespace dcpsched::properties
