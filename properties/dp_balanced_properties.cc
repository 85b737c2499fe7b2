// Properties of the dp_balanced scheduler (core/dp_balanced.h).

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/statusor.h"
#include "core/dp_balanced.h"
#include "properties/generators.h"
#include "properties/problem_checks.h"
#include "properties/rc_status.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"

namespace dcpsched::properties::dp_balanced_properties {
namespace {

RC_GTEST_PROP(DpBalancedProperties, MatchesTheOracle, ()) {
  RC_ASSERT_OK(CheckDpBalancedMatchesOracle(*GenDpBalancedProblem()));
}

// A problem outside the limits is refused with InvalidArgument by the
// scheduler, its compact form and the oracle alike.
RC_GTEST_PROP(DpBalancedProperties, InvalidProblemsAreRejectedWithInvalidArgument, ()) {
  const DpBalancedProblem problem = *GenInvalidDpBalancedProblem();
  const absl::StatusOr<Schedule> schedule = ScheduleDpBalanced(problem.lens, problem.options);
  RC_ASSERT(schedule.status().code() == absl::StatusCode::kInvalidArgument);
  RC_ASSERT_OK(CheckDpBalancedMatchesOracle(problem));
  RC_ASSERT_OK(CheckDpBalancedCompactMatchesPerRank(problem));
}

// A vpp_group so large that dp_size * vpp_group passes 2^64 (no count of
// packed sequences is a multiple of it), or stands just below that edge, is
// refused as the oracle refuses it: FailedPrecondition, never a wrapped
// product. The draws keep dp_size >= 3, where a vpp_group one past the edge
// still fits 63 bits.
RC_GTEST_PROP(DpBalancedProperties, VppGroupsNearTwoToTheSixtyFourMatchTheOracle, ()) {
  DpBalancedProblem problem = *GenDpBalancedProblem();
  problem.options.dp_size = std::max<std::int64_t>(problem.options.dp_size, 3);
  const auto edge = static_cast<std::int64_t>(std::numeric_limits<std::uint64_t>::max() /
                                              static_cast<std::uint64_t>(problem.options.dp_size));
  problem.options.vpp_group = *rc::gen::element<std::int64_t>(
      edge - 1, edge, edge + 1, std::numeric_limits<std::int64_t>::max());
  RC_ASSERT_OK(CheckDpBalancedMatchesOracle(problem));
}

// Every position is in exactly one microbatch, held by the cp_size ranks of
// one DP replica, and no packed sequence is over its token budget.
RC_GTEST_PROP(DpBalancedProperties, EveryPositionOnceOnOneReplicaWithinBudget, ()) {
  const DpBalancedProblem problem = *GenDpBalancedProblem();
  const absl::StatusOr<Schedule> schedule = ScheduleDpBalanced(problem.lens, problem.options);
  RC_PRE(schedule.ok());
  const std::int64_t cp = problem.options.cp_size;
  std::vector<int> seen(problem.lens.size(), 0);
  for (const Microbatch& microbatch : schedule->microbatches) {
    const auto& ranks = microbatch.rank_ids;
    RC_ASSERT(static_cast<std::int64_t>(ranks.size()) == problem.options.dp_size * cp);
    for (std::size_t r = 0; r < ranks.size(); r += static_cast<std::size_t>(cp)) {
      std::int64_t tokens = 0;
      for (const SampleId position : ranks[r]) {
        RC_ASSERT(position >= 0 && position < static_cast<SampleId>(problem.lens.size()));
        ++seen[static_cast<std::size_t>(position)];
        tokens += problem.lens[static_cast<std::size_t>(position)];
      }
      RC_ASSERT(!ranks[r].empty());
      RC_ASSERT(tokens <= problem.options.max_seq_len_per_rank * cp);
      for (std::int64_t k = 1; k < cp; ++k) RC_ASSERT(ranks[r + static_cast<std::size_t>(k)] == ranks[r]);
    }
  }
  for (const int count : seen) RC_ASSERT(count == 1);
}

}  // namespace
}  // namespace dcpsched::properties::dp_balanced_properties
