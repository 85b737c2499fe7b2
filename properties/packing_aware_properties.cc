// Properties of the packing-aware scheduler (core/packing_aware.h): the specification's
// invariants on generated problems (half of them under max_num_seqs), the
// core against the reference oracle, and metamorphic relations.

#include <cstdint>

#include "core/checker.h"
#include "properties/generators.h"
#include "properties/problem_checks.h"
#include "properties/rc_status.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"

namespace dcpsched::properties::packing_aware_properties {
namespace {

RC_GTEST_PROP(PackingAwareProperties, Invariant1NoRankIsEmpty, ()) {
  RC_ASSERT_OK(CheckKeepsInvariant(*GenValidProblem(), Invariant::kNoEmptyRank));
}

RC_GTEST_PROP(PackingAwareProperties, Invariant2EachSampleOnceOnOneContiguousRun, ()) {
  RC_ASSERT_OK(CheckKeepsInvariant(*GenValidProblem(), Invariant::kEachSampleOnce));
}

RC_GTEST_PROP(PackingAwareProperties, Invariant3CpSizeIsAPowerOfTwoOrG, ()) {
  RC_ASSERT_OK(CheckKeepsInvariant(*GenValidProblem(), Invariant::kPowerOfTwoCp));
}

RC_GTEST_PROP(PackingAwareProperties, Invariant4RankTokensWithinBudget, ()) {
  RC_ASSERT_OK(CheckKeepsInvariant(*GenValidProblem(), Invariant::kTokenBudget));
}

RC_GTEST_PROP(PackingAwareProperties, Invariant5RankWorkWithinCap, ()) {
  RC_ASSERT_OK(CheckKeepsInvariant(*GenValidProblem(), Invariant::kWorkCap));
}

RC_GTEST_PROP(PackingAwareProperties, Invariant6CpSizeAtLeastTheMinimum, ()) {
  RC_ASSERT_OK(CheckKeepsInvariant(*GenValidProblem(), Invariant::kMinimumCp));
}

RC_GTEST_PROP(PackingAwareProperties, Invariant7EmptyRanksFormATailBeforeTheFill, ()) {
  RC_ASSERT_OK(CheckEmptyRanksFormATail(*GenValidProblem()));
}

RC_GTEST_PROP(PackingAwareProperties, PlacementMatchesTheReference, ()) {
  RC_ASSERT_OK(CheckPlacementMatchesReference(*GenValidProblem()));
}

RC_GTEST_PROP(PackingAwareProperties, Invariant8MicrobatchCountIsAVppMultiple, ()) {
  RC_ASSERT_OK(CheckKeepsInvariant(*GenValidProblem(), Invariant::kVppMultiple));
}

RC_GTEST_PROP(PackingAwareProperties, Invariant10NoRankHoldsMoreThanMaxNumSeqs, ()) {
  RC_ASSERT_OK(CheckKeepsInvariant(*GenValidProblem(), Invariant::kSequenceCap));
}

RC_GTEST_PROP(PackingAwareProperties, Invariant9SameInputSameSchedule, ()) {
  RC_ASSERT_OK(CheckDeterministic(*GenValidProblem()));
}

RC_GTEST_PROP(PackingAwareProperties, StepMatchesTheOracle, ()) {
  RC_ASSERT_OK(CheckStepMatchesOracle(*GenValidProblem()));
}

RC_GTEST_PROP(PackingAwareProperties, ScheduleMatchesTheOracle, ()) {
  RC_ASSERT_OK(CheckScheduleMatchesOracle(*GenValidProblem()));
}

// The specification's step 5's tie order (the smaller CP size, then add over new, then the
// older group) on problems where works tie exactly.
RC_GTEST_PROP(PackingAwareProperties, TieProneProblemsMatchTheOracle, ()) {
  const DynamicCpProblem problem = *GenTieProneProblem();
  RC_ASSERT_OK(CheckStepMatchesOracle(problem));
  RC_ASSERT_OK(CheckScheduleMatchesOracle(problem));
}

RC_GTEST_PROP(PackingAwareProperties, RelabellingIdsRelabelsTheSchedule, ()) {
  const DynamicCpProblem problem = *GenValidProblem();
  RC_ASSERT_OK(CheckRelabellingRelabels(problem, *rc::gen::arbitrary<std::uint64_t>()));
}

RC_GTEST_PROP(PackingAwareProperties, DoublingLengthsAndBudgetKeepsTheLayout, ()) {
  RC_ASSERT_OK(CheckDoublingKeepsLayout(*GenValidProblem()));
}

RC_GTEST_PROP(PackingAwareProperties, PermutingDistinctLengthsKeepsTheSchedule, ()) {
  const DynamicCpProblem problem = *GenProblemWithDistinctLengths();
  RC_ASSERT_OK(CheckPermutationKeepsSchedule(problem, *rc::gen::arbitrary<std::uint64_t>()));
}

RC_GTEST_PROP(PackingAwareProperties, MinCpSizeOneIsTheDefault, ()) {
  RC_ASSERT_OK(CheckMinCpOneIsTheDefault(*GenValidProblem()));
}

RC_GTEST_PROP(PackingAwareProperties, MaxNumSeqsOfEverySampleIsNoCap, ()) {
  RC_ASSERT_OK(CheckCapOfEverySampleIsNoCap(*GenValidProblem()));
}

RC_GTEST_PROP(PackingAwareProperties, MaxNumSeqsOneHoldsOneSamplePerRank, ()) {
  RC_ASSERT_OK(CheckCapOneHoldsOneSamplePerRank(*GenValidProblem()));
}

}  // namespace
}  // namespace dcpsched::properties::packing_aware_properties
