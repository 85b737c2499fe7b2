// The reference checker (oracle/reference_checker.h) on schedules small
// enough to judge by hand, one reading rule of the specification each. The
// property tests compare the core's checker with it on random damage
// (properties/checker_properties.cc); these pin the yardstick itself.

#include "oracle/reference_checker.h"

#include <cstdint>
#include <vector>

#include "core/types.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_options.h"

namespace dcpsched::oracle::reference_checker_test {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

Schedule OneMicrobatch(RankLists ranks) { return Schedule{{Microbatch{std::move(ranks)}}}; }

ReferenceFinding Finding(int invariant, std::int64_t microbatch, std::int64_t rank,
                         std::vector<SampleId> ids) {
  return ReferenceFinding{invariant, microbatch, rank, std::move(ids)};
}

TEST(ReferenceCheckerTest, AValidScheduleHasNoFinding) {
  // Sample 1 (200 tokens) on 2 ranks, sample 2 and 3 on one each.
  const std::vector<Sample> samples = {{1, 200}, {2, 90}, {3, 100}};
  EXPECT_THAT(ReferenceFindViolations(samples, OneMicrobatch({{1}, {1}, {2}, {3}}),
                                      Options(4, 100)),
              IsEmpty());
}

TEST(ReferenceCheckerTest, ASampleAcrossNeighbouringGroupsIsOneRun) {
  // Sample 1 spans the groups of ranks 0-1 and 2-3: one contiguous run of 4,
  // so invariant 2 holds. But ranks 0-1 take the runtime's group of sample 1,
  // all four ranks, and sample 2 is only on two of them (invariant 11).
  const std::vector<Sample> samples = {{1, 200}, {2, 100}};
  EXPECT_THAT(ReferenceFindViolations(samples, OneMicrobatch({{1, 2}, {1, 2}, {1}, {1}}),
                                      Options(4, 100)),
              ElementsAre(Finding(11, 0, 0, {2})));
}

TEST(ReferenceCheckerTest, RuntimeGroupsAreCreatedAlignedAndNotNested) {
  // G = 12 creates 1, 2, 4 and 12: a group of 8 is refused at its first rank.
  const std::vector<Sample> twelve = {{0, 8}, {1, 1}, {2, 1}, {3, 1}, {4, 1}};
  EXPECT_THAT(
      ReferenceFindViolations(
          twelve, OneMicrobatch({{0}, {0}, {0}, {0}, {0}, {0}, {0}, {0}, {1}, {2}, {3}, {4}}),
          Options(12, 100)),
      ElementsAre(Finding(11, 0, 0, {0})));
  // A group of 4 on ranks 2-5 of 8 is not the runtime's block 0-3 or 4-7.
  const std::vector<Sample> eight = {{0, 1}, {1, 1}, {2, 4}, {3, 1}, {4, 1}};
  EXPECT_THAT(ReferenceFindViolations(eight,
                                      OneMicrobatch({{0}, {1}, {2}, {2}, {2}, {2}, {3}, {4}}),
                                      Options(8, 100)),
              ElementsAre(Finding(11, 0, 2, {2})));
  // Nested at G = 4: both groups are wrong, each from its own first sample.
  const std::vector<Sample> nested = {{0, 1}, {1, 1}, {2, 1}};
  EXPECT_THAT(ReferenceFindViolations(nested, OneMicrobatch({{0, 1}, {0, 1}, {1, 2}, {1, 2}}),
                                      Options(4, 100)),
              ElementsAre(Finding(11, 0, 0, {1}), Finding(11, 0, 2, {2})));
}

TEST(ReferenceCheckerTest, OverTheTokenBudgetAloneIsInvariantFour) {
  // 60 + 45 tokens > 100; work 3600 + 2025 is within the cap 60 * 100 * 1.05.
  const std::vector<Sample> samples = {{1, 60}, {2, 45}, {3, 10}};
  EXPECT_THAT(ReferenceFindViolations(samples, OneMicrobatch({{1, 2}, {3}}), Options(2, 100)),
              ElementsAre(Finding(4, 0, 0, {1, 2})));
}

TEST(ReferenceCheckerTest, TheWorkCapIsTallTimesBudgetTimesOnePointZeroFive) {
  // cap(100) = 100 * 100 * 1.05 = 10500: work 10000 + 20^2 is within it,
  // 10000 + 23^2 is not; both ranks are over the token budget.
  const std::vector<Sample> within = {{1, 100}, {2, 20}, {3, 5}};
  EXPECT_THAT(ReferenceFindViolations(within, OneMicrobatch({{1, 2}, {3}}), Options(2, 100)),
              ElementsAre(Finding(4, 0, 0, {1, 2})));
  const std::vector<Sample> over = {{1, 100}, {2, 23}, {3, 5}};
  EXPECT_THAT(ReferenceFindViolations(over, OneMicrobatch({{1, 2}, {3}}), Options(2, 100)),
              ElementsAre(Finding(4, 0, 0, {1, 2}), Finding(5, 0, 0, {1, 2})));
}

TEST(ReferenceCheckerTest, EachReadingRuleOfInvariantTwo) {
  // Microbatch 0: samples 1 and 2 each on two runs of ranks (0 and 2, 1 and
  // 3), id 9 unknown, sample 2 twice in rank 1's list. Microbatch 1: sample 1 again,
  // on both ranks of one group (reported once). Sample 3 is nowhere.
  const std::vector<Sample> samples = {{1, 10}, {2, 10}, {3, 10}};
  const Schedule schedule{{Microbatch{{{1, 9}, {2, 2}, {1}, {2}}}, Microbatch{{{1}, {1}, {1}, {1}}}}};
  EXPECT_THAT(ReferenceFindViolations(samples, schedule, Options(4, 100)),
              ElementsAre(Finding(2, -1, -1, {3}), Finding(2, 0, 0, {9}), Finding(2, 0, 1, {2}),
                          Finding(2, 0, 2, {1}), Finding(2, 0, 3, {2}), Finding(2, 1, 0, {1}),
                          Finding(11, 0, 0, {1}), Finding(11, 0, 1, {2, 2}),
                          Finding(11, 0, 2, {1}), Finding(11, 0, 3, {2})));
}

TEST(ReferenceCheckerTest, CpSizesWidthEmptyRanksVppAndTheSequenceCap) {
  // G = 4: sample 1 (length 150, cp_min 2) on 3 ranks; microbatch 1 is 3
  // ranks wide with an empty rank; 2 microbatches under vpp_group 3; rank 0
  // of microbatch 1 holds 2 samples > max_num_seqs 1.
  const std::vector<Sample> samples = {{1, 150}, {2, 10}, {3, 10}, {4, 10}};
  DynamicCpOptions options = Options(4, 100);
  options.vpp_group = 3;
  options.max_num_seqs = 1;
  const Schedule schedule{{Microbatch{{{1}, {1}, {1}, {2}}}, Microbatch{{{3, 4}, {}, {3, 4}}}}};
  EXPECT_THAT(
      ReferenceFindViolations(samples, schedule, options),
      ElementsAre(Finding(1, 1, -1, {}), Finding(1, 1, 1, {}), Finding(2, 1, 2, {3}),
                  Finding(2, 1, 2, {4}), Finding(3, 0, 0, {1}), Finding(8, -1, -1, {}),
                  Finding(10, 1, 0, {3, 4}), Finding(10, 1, 2, {3, 4}), Finding(11, 0, 0, {1}),
                  Finding(11, 1, 0, {3, 4}), Finding(11, 1, 2, {3, 4})));
}

TEST(ReferenceCheckerTest, ShortOfItsMinimumCpIsInvariantSix) {
  // Length 150 needs 2 ranks of 100; min_cp_size 4 raises sample 2's to 4.
  const std::vector<Sample> samples = {{1, 150}, {2, 10}};
  DynamicCpOptions options = Options(4, 100);
  EXPECT_THAT(ReferenceFindViolations(samples, OneMicrobatch({{1}, {2}, {2}, {2}}), options),
              ElementsAre(Finding(3, 0, 1, {2}), Finding(4, 0, 0, {1}), Finding(5, 0, 0, {1}),
                          Finding(6, 0, 0, {1}), Finding(11, 0, 1, {2})));
  options.min_cp_size = 4;
  // Groups of 2 are not created under min_cp_size 4, and ranks 2-3 take the
  // whole group of sample 2, which all four hold: only ranks 0-1 break.
  EXPECT_THAT(ReferenceFindViolations(samples, OneMicrobatch({{1, 2}, {1, 2}, {2}, {2}}), options),
              ElementsAre(Finding(6, 0, 0, {1}), Finding(11, 0, 0, {1})));
}

TEST(ReferenceCheckerTest, AnInvalidProblemHasNoFinding) {
  const std::vector<Sample> samples = {{1, 10}, {1, 20}};  // a duplicate id
  EXPECT_THAT(ReferenceFindViolations(samples, OneMicrobatch({{}}), Options(1, 100)), IsEmpty());
}

}  // namespace
}  // namespace dcpsched::oracle::reference_checker_test
