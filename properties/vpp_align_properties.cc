// Properties of VPP alignment (core/vpp_align.h): the core against the
// reference oracle, on schedules the scheduler built and on hand-made ones.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

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

// One canonical microbatch of 2 to 16 ranks: up to four runs of 1 to 8
// ranks, largest first, then single ranks up to the width; each run holds a
// fresh id. Drawn evenly (GenCase) at every size: a few large runs followed
// by single ranks are the shapes whose halves widen into growing runs.
rc::Gen<Schedule> GenMicrobatchOfFewRuns() {
  return rc::gen::apply(
      [](int width, const std::vector<int>& sizes_drawn) {
        std::vector<int> sizes = sizes_drawn;
        std::sort(sizes.rbegin(), sizes.rend());
        Microbatch microbatch;
        SampleId next_id = 0;
        for (const int size : sizes) {
          for (int r = 0; r < size && static_cast<int>(microbatch.rank_ids.size()) < width; ++r) {
            microbatch.rank_ids.push_back({next_id});
          }
          ++next_id;
        }
        while (static_cast<int>(microbatch.rank_ids.size()) < width) {
          microbatch.rank_ids.push_back({next_id++});
        }
        return Schedule{{std::move(microbatch)}};
      },
      rc::gen::map(GenCase(15), [](int k) { return 2 + k; }),
      rc::gen::mapcat(GenCase(5), [](int runs) {
        return rc::gen::container<std::vector<int>>(
            static_cast<std::size_t>(runs), rc::gen::map(GenCase(8), [](int k) { return 1 + k; }));
      }));
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
}  // namespace dcpsched::properties
