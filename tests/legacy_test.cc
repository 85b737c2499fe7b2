#include "core/legacy.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_options.h"

namespace dcpsched {
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
  EXPECT_EQ(schedule->microbatches[0].rank_ids, (RankIds{{0}, {0}, {1}, {2}}));
  EXPECT_EQ(schedule->microbatches[1].rank_ids, (RankIds{{3}, {3}, {3}, {3}}));
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

}  // namespace
}  // namespace dcpsched
