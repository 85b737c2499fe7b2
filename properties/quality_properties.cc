// Properties of MeasureQuality (core/quality.h) on the schedules the
// packing-aware scheduler builds for generated problems.

#include "absl/status/statusor.h"
#include "core/packing_aware.h"
#include "core/types.h"
#include "properties/generators.h"
#include "properties/problem_checks.h"
#include "properties/rc_status.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"

namespace dcpsched::properties {
namespace {

RC_GTEST_PROP(QualityProperties, ReadsEveryScheduleAsBuilt, ()) {
  const DynamicCpProblem problem = *GenValidProblem();
  const absl::StatusOr<Schedule> schedule = ScheduleDynamicCp(problem.samples, problem.options);
  RC_PRE(schedule.ok());
  RC_ASSERT_OK(CheckQualityReadsSchedule(problem, *schedule));
}

}  // namespace
}  // namespace dcpsched::properties
