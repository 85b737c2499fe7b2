// Tests of the compact form of a schedule (core/compact_schedule.h): the
// tiling errors, expansion, the per-rank view and the round trip from the
// per-rank form.

#include "core/compact_schedule.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/types.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dcpsched::compact_schedule_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Ranks = std::vector<std::vector<SampleId>>;

CompactSchedule OneMicrobatch(std::vector<CpGroupIds> groups) {
  return CompactSchedule{{CompactMicrobatch{std::move(groups)}}};
}

Schedule PerRank(std::vector<Ranks> microbatches) {
  Schedule schedule;
  for (Ranks& ranks : microbatches) {
    schedule.microbatches.push_back(Microbatch{std::move(ranks)});
  }
  return schedule;
}

// Several shapes: one group, groups of different sizes, a rank list that
// equals a non-neighbouring one, equal neighbouring lists (merged into one
// group), empty lists, a microbatch of no ranks, and no microbatch at all.
std::vector<Schedule> Shapes() {
  return {
      Schedule{},
      PerRank({{}}),
      PerRank({{{1, 2}}}),
      PerRank({{{0}, {0}, {1}, {2}}, {{3}, {3}, {3}, {3}}}),
      PerRank({{{5}, {6}, {5}}}),
      PerRank({{{}, {}, {7}}, {{8}, {}, {}}}),
      PerRank({{{1}, {1, 2}, {1, 2}, {2}}}),
      PerRank({{{4}}, {{4}, {4}}, {}}),
  };
}

TEST(CompactScheduleTest, ExpandGivesEachRankItsGroupsIds) {
  absl::StatusOr<Schedule> expanded = ExpandSchedule(
      OneMicrobatch({{0, 2, {10, 11}}, {2, 1, {12}}, {3, 1, {13}}}));
  ASSERT_TRUE(expanded.ok()) << expanded.status();
  EXPECT_EQ(*expanded, PerRank({{{10, 11}, {10, 11}, {12}, {13}}}));
}

TEST(CompactScheduleTest, ExpandOfNoGroupsIsAMicrobatchOfNoRanks) {
  absl::StatusOr<Schedule> expanded = ExpandSchedule(OneMicrobatch({}));
  ASSERT_TRUE(expanded.ok()) << expanded.status();
  EXPECT_EQ(*expanded, PerRank({{}}));
}

TEST(CompactScheduleTest, FirstGroupNotAtRankZeroIsAnError) {
  const absl::Status status =
      ExpandSchedule(OneMicrobatch({{1, 2, {10}}})).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("microbatch 0 group 0 starts at rank 1; the first CP "
                        "group must start at rank 0"));
}

TEST(CompactScheduleTest, GapBetweenGroupsIsAnError) {
  const CompactSchedule schedule{
      {CompactMicrobatch{{{0, 1, {1}}}},
       CompactMicrobatch{{{0, 2, {2}}, {3, 1, {3}}}}}};
  const absl::Status status = ExpandSchedule(schedule).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("microbatch 1 group 1 starts at rank 3 but group 0 "
                        "ends at rank 1: ranks 2-2 are in no group (a gap)"));
}

TEST(CompactScheduleTest, OverlappingGroupsAreAnError) {
  const absl::Status status =
      ExpandSchedule(OneMicrobatch({{0, 4, {1}}, {2, 2, {2}}})).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("microbatch 0 group 1 starts at rank 2 but group 0 "
                        "ends at rank 3: ranks 2-3 are in two groups (an "
                        "overlap)"));
}

TEST(CompactScheduleTest, GroupOfSizeZeroIsAnError) {
  const absl::Status status =
      ExpandSchedule(OneMicrobatch({{0, 1, {1}}, {1, 0, {2}}})).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("microbatch 0 group 1 (first rank 1) has size 0; "
                        "every CP group needs at least one rank"));
}

TEST(CompactScheduleTest, GroupEndingPastTheLargestRankIsAnError) {
  const absl::Status status =
      ExpandSchedule(OneMicrobatch(
                         {{0, 1, {1}},
                          {1, std::numeric_limits<std::int64_t>::max(), {2}}}))
          .status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("ends past the largest rank number"));
}

// Neighbouring ranks with equal lists are one group: two groups holding the
// same list side by side are not a compact form (they would expand to the
// same ranks as one group, and CompactFromRanks would give that one).
TEST(CompactScheduleTest, EqualNeighbouringGroupsAreAnError) {
  const absl::Status status =
      ExpandSchedule(OneMicrobatch({{0, 1, {1}}, {1, 2, {1}}})).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("microbatch 0 group 1 (ranks 1-2) holds the same ids as "
                        "group 0 (rank 0); neighbouring ranks with equal lists "
                        "are one CP group: merge them into one group of 3 ranks"));
  // Equal lists that are not neighbours are two groups.
  EXPECT_TRUE(ExpandSchedule(OneMicrobatch({{0, 1, {1}}, {1, 1, {2}}, {2, 1, {1}}})).ok());
}

TEST(CompactScheduleTest, EachMemberOfAGroupTakesPartInEquality) {
  const CpGroupIds group{.first_rank = 2, .size = 4, .ids = {7, 8}};
  EXPECT_EQ(group, (CpGroupIds{2, 4, {7, 8}}));
  EXPECT_NE(group, (CpGroupIds{3, 4, {7, 8}}));
  EXPECT_NE(group, (CpGroupIds{2, 5, {7, 8}}));
  EXPECT_NE(group, (CpGroupIds{2, 4, {7}}));
}

TEST(CompactScheduleTest, RankRangeNamesOneRankOrSeveral) {
  EXPECT_EQ(RankRange(6, 1), "rank 6");
  EXPECT_EQ(RankRange(0, 4), "ranks 0-3");
}

TEST(CompactScheduleTest, MicrobatchWidthIsWhereTheLastGroupEnds) {
  EXPECT_EQ(MicrobatchWidth(CompactMicrobatch{}, 0).value(), 0);
  // A group may end at the largest rank number itself.
  constexpr std::int64_t kLargest = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(MicrobatchWidth(CompactMicrobatch{{{0, 1, {1}}, {1, kLargest - 1, {2}}}}, 0)
                .value(),
            kLargest);
  EXPECT_EQ(MicrobatchWidth(CompactMicrobatch{{{0, 2, {1}}, {2, 4, {2}}}}, 0)
                .value(),
            6);
  EXPECT_THAT(
      MicrobatchWidth(CompactMicrobatch{{{0, 2, {1}}, {3, 4, {2}}}}, 7)
          .status()
          .message(),
      HasSubstr("microbatch 7 group 1"));
}

TEST(CompactScheduleTest, RankIdsGivesOneRanksListPerMicrobatch) {
  const CompactSchedule schedule{
      {CompactMicrobatch{{{0, 2, {10, 11}}, {2, 2, {12}}}},
       CompactMicrobatch{{{0, 4, {13}}}}}};
  EXPECT_THAT(RankIds(schedule, 0).value(),
              ElementsAre(ElementsAre(10, 11), ElementsAre(13)));
  EXPECT_THAT(RankIds(schedule, 2).value(),
              ElementsAre(ElementsAre(12), ElementsAre(13)));
  EXPECT_THAT(RankIds(schedule, 3).value(),
              ElementsAre(ElementsAre(12), ElementsAre(13)));
}

TEST(CompactScheduleTest, RankIdsOfNoMicrobatchesIsEmpty) {
  absl::StatusOr<std::vector<std::vector<SampleId>>> ids =
      RankIds(CompactSchedule{}, 5);
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_TRUE(ids->empty());
}

TEST(CompactScheduleTest, RankOutsideTheWidthIsAnError) {
  const CompactSchedule schedule = OneMicrobatch({{0, 2, {1}}, {2, 2, {2}}});
  for (const std::int64_t rank : {std::int64_t{-1}, std::int64_t{4}, std::int64_t{9}}) {
    const absl::Status status = RankIds(schedule, rank).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << rank;
    EXPECT_THAT(status.message(),
                HasSubstr("is outside microbatch 0, which has ranks 0-3; a "
                          "rank must be in [0, 4)"));
  }
}

TEST(CompactScheduleTest, RankIdsChecksTheTiling) {
  const absl::Status status =
      RankIds(OneMicrobatch({{0, 1, {1}}, {2, 1, {2}}}), 0).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("(a gap)"));
}

TEST(CompactScheduleTest, CompactFromRanksMergesRunsOfEqualLists) {
  const CompactSchedule compact =
      CompactFromRanks(PerRank({{{0}, {0}, {1}, {2}, {2}, {0}}}));
  EXPECT_EQ(compact, OneMicrobatch({{0, 2, {0}},
                                    {2, 1, {1}},
                                    {3, 2, {2}},
                                    {5, 1, {0}}}));
}

TEST(CompactScheduleTest, CompactFromRanksKeepsEmptyLists) {
  EXPECT_EQ(CompactFromRanks(PerRank({{{}, {}, {3}}})),
            OneMicrobatch({{0, 2, {}}, {2, 1, {3}}}));
}

TEST(CompactScheduleTest, ExpandOfCompactFromRanksIsTheSchedule) {
  for (const Schedule& schedule : Shapes()) {
    absl::StatusOr<Schedule> round_trip =
        ExpandSchedule(CompactFromRanks(schedule));
    ASSERT_TRUE(round_trip.ok()) << round_trip.status();
    EXPECT_EQ(*round_trip, schedule);
  }
}

TEST(CompactScheduleTest, RankIdsIsTheSliceOfEveryRank) {
  for (const Schedule& schedule : Shapes()) {
    const CompactSchedule compact = CompactFromRanks(schedule);
    if (schedule.microbatches.empty()) continue;
    // Every microbatch of a shape has the same width, but for the one that
    // mixes widths, which RankIds rejects past the narrowest.
    std::size_t narrowest = schedule.microbatches.front().rank_ids.size();
    for (const Microbatch& microbatch : schedule.microbatches) {
      narrowest = std::min(narrowest, microbatch.rank_ids.size());
    }
    for (std::size_t rank = 0; rank < narrowest; ++rank) {
      std::vector<std::vector<SampleId>> slice;
      for (const Microbatch& microbatch : schedule.microbatches) {
        slice.push_back(microbatch.rank_ids[rank]);
      }
      EXPECT_EQ(RankIds(compact, static_cast<std::int64_t>(rank)).value(), slice)
          << "rank " << rank;
    }
  }
}

}  // namespace
}  // namespace dcpsched::compact_schedule_test
