#include "core/runtime_groups.h"

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "core/compact_schedule.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "oracle/reference_definitions.h"
#include "tests/test_options.h"

namespace dcpsched::runtime_groups_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

TEST(RuntimeGroupsTest, TwelveRanksHaveGroupsOfOneTwoFourAndTwelve) {
  const DynamicCpOptions options = Options(12, 2048);
  EXPECT_EQ(RuntimeGroupSizes(options), "1, 2, 4 and 12 (all ranks)");
  for (std::int64_t size = 0; size <= 16; ++size) {
    const bool expected = size == 1 || size == 2 || size == 4 || size == 12;
    EXPECT_EQ(RuntimeHasGroupSize(size, options), expected) << "size " << size;
  }
}

TEST(RuntimeGroupsTest, MinCpSizeDropsTheSmallerSizes) {
  const DynamicCpOptions options = Options(16, 100, 4);
  EXPECT_EQ(RuntimeGroupSizes(options), "4, 8 and 16 (all ranks)");
  EXPECT_FALSE(RuntimeHasGroupSize(2, options));
  EXPECT_TRUE(RuntimeHasGroupSize(8, options));
  EXPECT_EQ(RuntimeGroupSizes(Options(4, 100, 4)), "only 4 (all ranks)");
  EXPECT_EQ(RuntimeGroupSizes(Options(1, 100)), "only 1 (all ranks)");
}

TEST(RuntimeGroupsTest, ARankGetsTheAlignedBlockThatHoldsIt) {
  const DynamicCpOptions options = Options(12, 100);
  EXPECT_THAT(RuntimeGroupOf(5, 4, options), Optional(RankBlock{4, 4}));
  EXPECT_THAT(RuntimeGroupOf(5, 12, options), Optional(RankBlock{0, 12}));
  EXPECT_THAT(RuntimeGroupOf(5, 1, options), Optional(RankBlock{5, 1}));
  EXPECT_EQ(RuntimeGroupOf(5, 8, options), std::nullopt);
  EXPECT_EQ(RuntimeGroupOf(5, 3, options), std::nullopt);
  // At G = 10 the last block of 4 is cut at rank 9, as upstream's slice is.
  EXPECT_THAT(RuntimeGroupOf(9, 4, Options(10, 100)), Optional(RankBlock{8, 2}));
}

// The core's rule against the reference definitions, written from upstream's
// loops, for every rank, CP size and min_cp_size at every G up to 40.
TEST(RuntimeGroupsTest, EqualsTheReferenceDefinitionsUpToFortyRanks) {
  for (std::int64_t total = 1; total <= 40; ++total) {
    for (std::int64_t min_cp = 1; min_cp <= total; min_cp *= 2) {
      const DynamicCpOptions options = Options(total, 100, min_cp);
      for (std::int64_t cp = 1; cp <= total; ++cp) {
        for (std::int64_t rank = 0; rank < total; ++rank) {
          const std::optional<RankBlock> block = RuntimeGroupOf(rank, cp, options);
          const std::optional<std::vector<std::int64_t>> expected =
              oracle::RuntimeGroupRanks(rank, cp, total, min_cp);
          ASSERT_EQ(block.has_value(), expected.has_value())
              << "G " << total << " min_cp " << min_cp << " cp " << cp << " rank " << rank;
          if (!block.has_value()) continue;
          std::vector<std::int64_t> ranks;
          for (std::int64_t r = block->first_rank; r < block->first_rank + block->size; ++r) {
            ranks.push_back(r);
          }
          EXPECT_EQ(ranks, *expected)
              << "G " << total << " min_cp " << min_cp << " cp " << cp << " rank " << rank;
        }
      }
    }
  }
}

CompactSchedule OneMicrobatchOfGroups(std::vector<CpGroupIds> groups) {
  return CompactSchedule{{CompactMicrobatch{std::move(groups)}}};
}

TEST(RuntimeGroupsTest, SchedulerOutputOnAGroupOfEightAtTwelveRanksIsRefused) {
  const absl::Status status = CheckSchedulerOutputRunnable(
      OneMicrobatchOfGroups({{0, 8, {0}}, {8, 2, {1, 2}}, {10, 2, {3, 4, 5}}}),
      Options(12, 2048), "packing-aware");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(),
              HasSubstr("upstream returns a schedule its runtime cannot run: invariant 11 "
                        "(runtime groups): microbatch 0 ranks 0-7: each runs its first "
                        "sample 0 on a CP group of size 8 (ranks 0-7)"));
  EXPECT_THAT(status.message(), HasSubstr("it creates 1, 2, 4 and 12 (all ranks)"));
  EXPECT_THAT(status.message(), HasSubstr("packing-aware"));
}

TEST(RuntimeGroupsTest, SchedulerOutputOnAMisalignedGroupIsRefused) {
  const absl::Status status = CheckSchedulerOutputRunnable(
      OneMicrobatchOfGroups({{0, 2, {0}}, {2, 4, {1}}, {6, 2, {2}}}), Options(8, 100),
      "legacy");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(),
              HasSubstr("microbatch 0 ranks 2-5: each gets the runtime's CP group of size 4 "
                        "(ranks 0-3, from its first sample 1), but sample 1 is held by "
                        "ranks 2-5"));
}

TEST(RuntimeGroupsTest, SchedulerOutputOnCreatedGroupsIsRunnable) {
  EXPECT_TRUE(CheckSchedulerOutputRunnable(
                  OneMicrobatchOfGroups({{0, 4, {0}}, {4, 2, {1}}, {6, 1, {2}}, {7, 1, {3}}}),
                  Options(8, 100), "packing-aware")
                  .ok());
  EXPECT_TRUE(CheckSchedulerOutputRunnable(OneMicrobatchOfGroups({{0, 12, {0, 1}}}),
                                           Options(12, 100), "packing-aware")
                  .ok());
}

TEST(RuntimeGroupsTest, SchedulerOutputChecksNoGroupForAnEmptyRun) {
  // Ranks 1-3 are no CP group the runtime creates at four ranks: empty,
  // they run no sample, so they need none; holding one, they are refused.
  EXPECT_TRUE(CheckSchedulerOutputRunnable(OneMicrobatchOfGroups({{0, 1, {0}}, {1, 3, {}}}),
                                           Options(4, 100), "packing-aware")
                  .ok());
  EXPECT_THAT(CheckSchedulerOutputRunnable(OneMicrobatchOfGroups({{0, 1, {0}}, {1, 3, {1}}}),
                                           Options(4, 100), "packing-aware")
                  .message(),
              HasSubstr("microbatch 0 ranks 1-3: each runs its first sample 1 on a CP group "
                        "of size 3"));
}

TEST(RankBlockTest, EqualWhenFirstRankAndSizeAreEqual) {
  EXPECT_EQ((RankBlock{4, 2}), (RankBlock{4, 2}));
  EXPECT_NE((RankBlock{4, 2}), (RankBlock{5, 2}));
  EXPECT_NE((RankBlock{4, 2}), (RankBlock{4, 4}));
}

}  // namespace
}  // namespace dcpsched::runtime_groups_test
