// Properties of the compact form of a schedule (core/compact_schedule.h):
// for every scheduler, the compact schedule it builds natively is its
// per-rank schedule (expanded, it equals it; it is CompactFromRanks of it),
// and the per-rank view RankIds is the slice of the per-rank schedule.

#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "core/compact_schedule.h"
#include "core/packing_aware.h"
#include "core/types.h"
#include "properties/generators.h"
#include "properties/problem_checks.h"
#include "properties/rc_status.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"

namespace dcpsched::properties::compact_schedule_properties {
namespace {

RC_GTEST_PROP(CompactScheduleProperties, PackingAwareCompactIsPerRank, ()) {
  RC_ASSERT_OK(CheckCompactMatchesPerRank(*GenValidProblem()));
}

RC_GTEST_PROP(CompactScheduleProperties, LegacyCompactIsPerRank, ()) {
  RC_ASSERT_OK(CheckLegacyCompactMatchesPerRank(*GenValidUncappedProblem()));
}

RC_GTEST_PROP(CompactScheduleProperties, MixedCpSizesCompactIsPerRank, ()) {
  const DynamicCpProblem problem = *GenMixedCpSizeProblem();
  RC_ASSERT_OK(CheckCompactMatchesPerRank(problem));
  RC_ASSERT_OK(CheckLegacyCompactMatchesPerRank(problem));
}

RC_GTEST_PROP(CompactScheduleProperties, InvalidProblemFailsAlikeInBothForms, ()) {
  const DynamicCpProblem problem = *GenInvalidProblem();
  RC_ASSERT_OK(CheckCompactMatchesPerRank(problem));
  RC_ASSERT_OK(CheckLegacyCompactMatchesPerRank(problem));
}

RC_GTEST_PROP(CompactScheduleProperties, DpBalancedCompactIsPerRank, ()) {
  RC_ASSERT_OK(CheckDpBalancedCompactMatchesPerRank(*GenDpBalancedProblem()));
}

RC_GTEST_PROP(CompactScheduleProperties, AlignmentOfScheduledBatchesCompactIsPerRank, ()) {
  DynamicCpProblem problem = *GenValidProblem();
  problem.options.vpp_group.reset();
  const absl::StatusOr<Schedule> schedule = ScheduleDynamicCp(problem.samples, problem.options);
  RC_PRE(schedule.ok());
  RC_ASSERT_OK(CheckAlignmentCompactMatchesPerRank(*schedule,
                                                   *rc::gen::inRange<std::int64_t>(1, 6)));
}

RC_GTEST_PROP(CompactScheduleProperties, AlignmentOfHandMadeSchedulesCompactIsPerRank, ()) {
  RC_ASSERT_OK(CheckAlignmentCompactMatchesPerRank(*GenHandMadeSchedule(),
                                                   *rc::gen::inRange<std::int64_t>(0, 6)));
}

// The expansion of any schedule's compact form is the schedule, and each
// rank's view is its slice, whatever the lists hold (empty, equal, ragged).
RC_GTEST_PROP(CompactScheduleProperties, CompactFromRanksRoundTrips, ()) {
  const Schedule schedule = *GenHandMadeSchedule();
  const CompactSchedule compact = CompactFromRanks(schedule);
  const absl::StatusOr<Schedule> expanded = ExpandSchedule(compact);
  RC_ASSERT(expanded.ok());
  RC_ASSERT(*expanded == schedule);
  for (std::size_t m = 0; m < compact.microbatches.size(); ++m) {
    const auto& groups = compact.microbatches[m].groups;
    for (std::size_t g = 1; g < groups.size(); ++g) {
      RC_ASSERT(groups[g].ids != groups[g - 1].ids);
    }
  }
  // A rank outside some microbatch (negative, or not below its width) has no
  // view in it.
  RC_PRE(!schedule.microbatches.empty());
  std::int64_t narrowest = std::numeric_limits<std::int64_t>::max();
  for (const Microbatch& microbatch : schedule.microbatches) {
    narrowest = std::min(narrowest, static_cast<std::int64_t>(microbatch.rank_ids.size()));
  }
  const std::int64_t outside =
      *rc::gen::oneOf(rc::gen::inRange<std::int64_t>(narrowest, narrowest + 4),
                      rc::gen::inRange<std::int64_t>(-4, 0));
  RC_ASSERT(RankIds(compact, outside).status().code() == absl::StatusCode::kInvalidArgument);
}

// The rank numbers end at the largest std::int64_t: a last group that ends
// exactly there tiles (the microbatch is that wide), one rank more is an
// error that says so.
RC_GTEST_PROP(CompactScheduleProperties, AGroupMayEndAtTheLargestRankNumberAndNoFurther, ()) {
  const Schedule schedule = *GenHandMadeSchedule();
  CompactSchedule compact = CompactFromRanks(schedule);
  RC_PRE(!compact.microbatches.empty());
  const std::size_t m = *rc::gen::inRange<std::size_t>(0, compact.microbatches.size());
  CompactMicrobatch& microbatch = compact.microbatches[m];
  // Two RC_PREs: RapidCheck captures the expression, so `&&` would not
  // short-circuit.
  RC_PRE(!microbatch.groups.empty());
  RC_PRE(microbatch.groups.back().first_rank > 0);
  constexpr std::int64_t kLargest = std::numeric_limits<std::int64_t>::max();
  CpGroupIds& last = microbatch.groups.back();
  last.size = kLargest - last.first_rank;
  const absl::StatusOr<std::int64_t> width = MicrobatchWidth(microbatch, m);
  RC_ASSERT(width.ok());
  RC_ASSERT(*width == kLargest);
  last.size += 1;
  const absl::StatusOr<std::int64_t> past = MicrobatchWidth(microbatch, m);
  RC_ASSERT(past.status().code() == absl::StatusCode::kInvalidArgument);
  RC_ASSERT(absl::StrContains(past.status().message(), "ends past the largest rank number"));
}

}  // namespace
}  // namespace dcpsched::properties::compact_schedule_properties
