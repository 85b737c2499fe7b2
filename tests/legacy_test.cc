#include "core/legacy.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/compact_schedule.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_options.h"

namespace dcpsched::legacy_test {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Hand-traced: two distinct minimum CP sizes make two buckets, [A] and
// [B, C, D]. A opens a group of 2, B and C one rank each; D fits no group of
// its size and no rank is free, so the step stops and D waits for the next
// microbatch, where doubling fills all four ranks.
TEST(ScheduleLegacyTest, EverySampleTakesExactlyItsMinimumCpSize) {
  const std::vector<Sample> samples = {{0, 200}, {1, 100}, {2, 100}, {3, 50}};
  const absl::StatusOr<Schedule> schedule = ScheduleLegacy(samples, Options(4, 100));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_EQ(schedule->microbatches.size(), 2u);
  EXPECT_EQ(schedule->microbatches[0].rank_ids, (RankLists{{0}, {0}, {1}, {2}}));
  EXPECT_EQ(schedule->microbatches[1].rank_ids, (RankLists{{3}, {3}, {3}, {3}}));
}

// The legacy schedule as upstream returns it. The bucket rules below are
// pinned at G that are not powers of two, where upstream's schedules put a
// sample on a group the runtime never creates (invariant 11), so
// ScheduleLegacy refuses them; the rules are upstream's all the same.
absl::StatusOr<Schedule> LegacyAsUpstream(const std::vector<Sample>& samples,
                                          const DynamicCpOptions& options) {
  const absl::StatusOr<CompactSchedule> schedule = ScheduleLegacyAsUpstream(samples, options);
  if (!schedule.ok()) return schedule.status();
  return ExpandSchedule(*schedule);
}

// Upstream's schedule at G = 5 holds a group of 4 ranks, a size the runtime
// does not create there (1, 2 and 5): ScheduleLegacy refuses it, naming
// invariant 11, and the compact form does the same.
TEST(ScheduleLegacyTest, AScheduleTheRuntimeCannotRunIsFailedPrecondition) {
  const std::vector<Sample> samples = {{0, 400}, {1, 200}, {2, 10}, {3, 10}, {4, 10}};
  ASSERT_TRUE(LegacyAsUpstream(samples, Options(5, 100)).ok());
  for (const absl::Status& status :
       {ScheduleLegacy(samples, Options(5, 100)).status(),
        ScheduleLegacyCompact(samples, Options(5, 100)).status()}) {
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(std::string(status.message()),
                ::testing::StartsWith("upstream returns a schedule its runtime cannot run: "
                                      "invariant 11 (runtime groups): microbatch 0 ranks 0-3"));
    EXPECT_THAT(status.message(), ::testing::HasSubstr("legacy scheduler"));
  }
}

// Bucket boundaries. G=5, mslpr=100; cp_min 4, 2, 1, 1, 1; works 40000,
// 20000, 100 x 3: target 60300 / 3 = 20100, slack bound 22110. The 200 would
// take the first bucket past the bound, so it opens the second; the count
// rule (n - i <= k - 2 * closed: 5 - 4 <= 3 - 2) closes that one before the
// last sample. Id 0 takes ranks 0-3; id 1 finds no group of 2 and one free
// rank, so its bucket waits and the last bucket's id 4 takes rank 4.
// Without that close, id 4 would wait behind id 1 too (rank 4 would get a
// copy of id 0); with a close one sample earlier, ids 3 and 4 would share
// rank 4.
TEST(ScheduleLegacyTest, CountRuleGivesTheLastSampleItsOwnBucket) {
  const std::vector<Sample> samples = {{0, 400}, {1, 200}, {2, 10}, {3, 10}, {4, 10}};
  const absl::StatusOr<Schedule> schedule = LegacyAsUpstream(samples, Options(5, 100));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_EQ(schedule->microbatches.size(), 2u);
  EXPECT_EQ(schedule->microbatches[0].rank_ids, (RankLists{{0}, {0}, {0}, {0}, {4}}));
  EXPECT_EQ(schedule->microbatches[1].rank_ids, (RankLists{{1}, {1}, {2}, {2}, {3}}));
}

// The slack test is strict. G=5, mslpr=10; lengths 32, 20, 16, 10, 6 have
// works 256, 200, 128, 100, 36 (total 720, k=3, target 240). The third
// bucket grows to 128 + 100 + 36 = 264, exactly 240 * 1.1 in double, and
// stays open, so id 4 waits behind id 2 (no group of 2, one free rank) and
// the first microbatch is id 0 alone, widened to five ranks.
TEST(ScheduleLegacyTest, BucketAtExactlyTheSlackBoundStaysOpen) {
  const std::vector<Sample> samples = {{0, 32}, {1, 20}, {2, 16}, {3, 10}, {4, 6}};
  const absl::StatusOr<Schedule> schedule = ScheduleLegacy(samples, Options(5, 10));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_EQ(schedule->microbatches.size(), 3u);
  EXPECT_EQ(schedule->microbatches[0].rank_ids, (RankLists{{0}, {0}, {0}, {0}, {0}}));
  EXPECT_EQ(schedule->microbatches[1].rank_ids, (RankLists{{1}, {1}, {2}, {2}, {3}}));
  EXPECT_EQ(schedule->microbatches[2].rank_ids, (RankLists{{4}, {4}, {4}, {4}, {4}}));
}

// G=3, mslpr=100: id 0 on two ranks (5100.5 each), then id 1, a smaller CP
// size, on rank 2 (5184). Samples remain and 5184 - 5100.5 <= 0.05 * 5184:
// the step stops, though id 2 would fit on rank 2.
TEST(ScheduleLegacyTest, BalancedRanksStopTheStep) {
  const std::vector<Sample> samples = {{0, 101}, {1, 72}, {2, 5}};
  const absl::StatusOr<Schedule> schedule = LegacyAsUpstream(samples, Options(3, 100));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_EQ(schedule->microbatches.size(), 2u);
  EXPECT_EQ(schedule->microbatches[0].rank_ids, (RankLists{{0}, {0}, {1}}));
  EXPECT_EQ(schedule->microbatches[1].rank_ids, (RankLists{{2}, {2}, {2}}));
}

// Only the CP sizes the samples need count. G=10, mslpr=10, min_cp_size 2:
// lengths 60, 40, 36, 18, 15 need 8, 4, 4, 2, 2 ranks, so k = 3; works 450,
// 400, 324, 162, 112.5 give the slack bound 1448.5 / 3 * 1.1 = 531.1.
// Buckets [0] [1] [2 3] [4]: ids 1 and 2 need 4 ranks and only 2 are free
// after id 0, so id 4 takes ranks 8-9. Counting a fourth size would lower
// the bound to 398.3 and start a bucket at id 3 (324 + 162 = 486 > 398.3),
// which would then take ranks 8-9.
TEST(ScheduleLegacyTest, BucketsCountOnlyTheCpSizesTheSamplesNeed) {
  const std::vector<Sample> samples = {{0, 60}, {1, 40}, {2, 36}, {3, 18}, {4, 15}};
  const absl::StatusOr<Schedule> schedule = LegacyAsUpstream(samples, Options(10, 10, 2));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_EQ(schedule->microbatches.size(), 2u);
  EXPECT_EQ(schedule->microbatches[0].rank_ids,
            (RankLists{{0}, {0}, {0}, {0}, {0}, {0}, {0}, {0}, {4}, {4}}));
  EXPECT_EQ(schedule->microbatches[1].rank_ids,
            (RankLists{{1}, {1}, {1}, {1}, {2}, {2}, {2}, {2}, {3}, {3}}));
}

// The balance test includes equality. G=3, mslpr=363: id 0 (380) on ranks
// 0-1 (72200 each); ids 1, 2, 3 (225, 134, 3) on rank 2 reach 50625 + 17956
// + 9 = 68590, and 72200 - 68590 = 3610 = 0.05 * 72200 exactly: the step
// stops before id 4, which would still fit (363 tokens).
TEST(ScheduleLegacyTest, RanksExactlyAtTheBalanceToleranceStopTheStep) {
  const std::vector<Sample> samples = {{0, 380}, {1, 225}, {2, 134}, {3, 3}, {4, 1}};
  const absl::StatusOr<Schedule> schedule = LegacyAsUpstream(samples, Options(3, 363));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_EQ(schedule->microbatches.size(), 2u);
  EXPECT_EQ(schedule->microbatches[0].rank_ids, (RankLists{{0}, {0}, {1, 2, 3}}));
  EXPECT_EQ(schedule->microbatches[1].rank_ids, (RankLists{{4}, {4}, {4}}));
}

// G=2, mslpr=100: ids 0 and 1 take a rank each; id 2 (50 tokens) fits on
// neither (100 and 60 packed) and no rank is free, so the step ends there,
// although id 3, in the next bucket, would fit on rank 1.
TEST(ScheduleLegacyTest, HeadThatFitsNoGroupStopsTheWholeStep) {
  const std::vector<Sample> samples = {{0, 100}, {1, 60}, {2, 50}, {3, 10}};
  const absl::StatusOr<Schedule> schedule = ScheduleLegacy(samples, Options(2, 100));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_EQ(schedule->microbatches.size(), 2u);
  EXPECT_EQ(schedule->microbatches[0].rank_ids, (RankLists{{0}, {1}}));
  EXPECT_EQ(schedule->microbatches[1].rank_ids, (RankLists{{2}, {3}}));
}

// G=5, mslpr=100: id 0 on ranks 0-1, ids 1 and 2 one rank each, rank 4
// empty. The fill doubles the first one-rank group (id 1) and moves id 2
// to rank 4.
TEST(ScheduleLegacyTest, FillDoublesTheFirstSmallestGroup) {
  const std::vector<Sample> samples = {{0, 150}, {1, 50}, {2, 40}};
  const absl::StatusOr<Schedule> schedule = ScheduleLegacy(samples, Options(5, 100));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_EQ(schedule->microbatches.size(), 1u);
  EXPECT_EQ(schedule->microbatches[0].rank_ids, (RankLists{{0}, {0}, {1}, {1}, {2}}));
}

// With G = 7, three groups of 2 ranks leave rank 6 empty; doubling the first
// group would push rank 5 to rank 7 (upstream: IndexError).
TEST(ScheduleLegacyTest, FillPastLastRankIsFailedPrecondition) {
  const std::vector<Sample> samples = {{0, 2}, {1, 2}, {2, 2}};
  const absl::StatusOr<Schedule> schedule = ScheduleLegacy(samples, Options(7, 1));
  EXPECT_EQ(schedule.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(schedule.status().message()), HasSubstr("legacy fill step"));
  EXPECT_THAT(std::string(schedule.status().message()), HasSubstr("total_gpus=7"));
}

TEST(ScheduleLegacyTest, EmptyInputGivesNoMicrobatches) {
  const absl::StatusOr<Schedule> schedule = ScheduleLegacy({}, Options(4, 100));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  EXPECT_THAT(schedule->microbatches, IsEmpty());
}

TEST(ScheduleLegacyTest, RejectsInvalidInputWithInvalidArgument) {
  const std::vector<Sample> too_long = {{0, 10}, {1, 401}};
  const absl::StatusOr<Schedule> schedule = ScheduleLegacy(too_long, Options(2, 100));
  EXPECT_EQ(schedule.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(schedule.status().message()), HasSubstr("requires CP size 8"));
  const std::vector<Sample> negative = {{0, -55}};
  EXPECT_EQ(ScheduleLegacy(negative, Options(1, 47)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// The cap on samples per rank is the packing-aware scheduler's; legacy has
// none, so a cap is refused rather than silently ignored.
TEST(ScheduleLegacyTest, RefusesMaxNumSeqs) {
  DynamicCpOptions options = Options(4, 100);
  options.max_num_seqs = 3;
  const std::vector<Sample> samples = {{0, 10}};
  const absl::StatusOr<Schedule> schedule = ScheduleLegacy(samples, options);
  EXPECT_EQ(schedule.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(schedule.status().message()),
              HasSubstr("legacy scheduler takes no cap"));
}

}  // namespace
}  // namespace dcpsched::legacy_test
