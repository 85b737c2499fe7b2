// Properties of input validation (core/validate.h): every problem outside
// the specification's limits is rejected with InvalidArgument by every entry point.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

#include "core/types.h"
#include "core/validate.h"
#include "properties/generators.h"
#include "properties/problem_checks.h"
#include "properties/rc_status.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"

namespace dcpsched::properties::validate_properties {
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

// dp_balanced's dp_size * cp_size may fill the rank limit exactly: such a
// problem is valid (one replica more is not: GenInvalidDpBalancedProblem).
// One case in 128 is also scheduled, or refused, as the oracle does it: a
// schedule of 2^16 rank lists costs tens of milliseconds. Up to 4 replicas
// of 2^14 to 2^16 ranks, one sample each, keep it to one microbatch.
RC_GTEST_PROP(ValidateProperties, DpBalancedReplicasThatFillTheRankLimitAreValid, ()) {
  DpBalancedProblem problem = *GenDpBalancedProblem();
  const int dp_exponent = *rc::gen::inRange(0, 3);
  problem.options.dp_size = std::int64_t{1} << dp_exponent;
  problem.options.cp_size = kMaxTotalGpus >> dp_exponent;
  problem.options.vpp_group = std::nullopt;
  problem.lens.resize(static_cast<std::size_t>(problem.options.dp_size), 1);
  for (std::int64_t& len : problem.lens) {
    len = std::min({len, problem.options.max_seq_len_per_rank * problem.options.cp_size,
                    kMaxSampleLen});
  }
  RC_ASSERT_OK(ValidateDpBalancedProblem(problem.lens, problem.options));
  if (*rc::gen::inRange(0, 128) == 0) RC_ASSERT_OK(CheckDpBalancedMatchesOracle(problem));
}

}  // namespace
}  // namespace dcpsched::properties::validate_properties
