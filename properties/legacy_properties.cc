// Properties of the legacy bucket scheduler (core/legacy.h): the specification's
// invariants, and the core against the reference oracle, on the usual
// problems (without max_num_seqs, which legacy refuses) and on problems that
// need several CP sizes (several buckets), and on problems made for its
// balance stop.

#include "properties/generators.h"
#include "properties/problem_checks.h"
#include "properties/rc_status.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"

namespace dcpsched::properties::legacy_properties {
namespace {

RC_GTEST_PROP(LegacyProperties, SchedulesKeepEveryInvariant, ()) {
  RC_ASSERT_OK(CheckLegacyKeepsInvariants(*GenValidUncappedProblem()));
}

RC_GTEST_PROP(LegacyProperties, MatchesReferenceOracle, ()) {
  RC_ASSERT_OK(CheckLegacyMatchesReference(*GenValidUncappedProblem()));
}

RC_GTEST_PROP(LegacyProperties, RefusesMaxNumSeqs, ()) {
  RC_ASSERT_OK(CheckLegacyRefusesSequenceCap(*GenValidProblem()));
}

RC_GTEST_PROP(LegacyProperties, MixedCpSizesKeepEveryInvariant, ()) {
  RC_ASSERT_OK(CheckLegacyKeepsInvariants(*GenMixedCpSizeProblem()));
}

RC_GTEST_PROP(LegacyProperties, MixedCpSizesMatchReferenceOracle, ()) {
  RC_ASSERT_OK(CheckLegacyMatchesReference(*GenMixedCpSizeProblem()));
}

RC_GTEST_PROP(LegacyProperties, BalanceProneMatchesReferenceOracle, ()) {
  RC_ASSERT_OK(CheckLegacyMatchesReference(*GenBalanceProneProblem()));
}

}  // namespace
}  // namespace dcpsched::properties::legacy_properties
