// Tests of VPP alignment (core/vpp_align.h). Expected schedules are worked by
// hand from the specification's "VPP alignment" and were cross-checked against upstream's
// align_sample_id_groups.

#include "core/vpp_align.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/compact_schedule.h"
#include "core/packing_aware.h"
#include "core/types.h"
#include "gtest/gtest.h"
#include "oracle/reference_oracle.h"

namespace dcpsched::vpp_align_test {
namespace {

using Ranks = std::vector<std::vector<SampleId>>;

Microbatch Mb(Ranks ranks) { return Microbatch{std::move(ranks)}; }

// A microbatch of CP groups of the given sizes, left to right; group k holds
// the single sample first_id + k on each of its ranks.
Microbatch Groups(std::initializer_list<int> sizes, SampleId first_id = 0) {
  Microbatch microbatch;
  SampleId id = first_id;
  for (const int size : sizes) {
    for (int r = 0; r < size; ++r) microbatch.rank_ids.push_back({id});
    ++id;
  }
  return microbatch;
}

Schedule Sched(std::vector<Microbatch> microbatches) {
  return Schedule{std::move(microbatches)};
}

TEST(VppAlignTest, VppGroupOneLeavesScheduleUnchanged) {
  const Schedule schedule = Sched({Groups({2, 1, 1}), Groups({4}, 3)});
  absl::StatusOr<Schedule> aligned = AlignToVppGroup(schedule, 1);
  ASSERT_TRUE(aligned.ok()) << aligned.status();
  EXPECT_EQ(*aligned, schedule);
}

TEST(VppAlignTest, CountAlreadyMultipleLeavesScheduleUnchanged) {
  const Schedule schedule = Sched({Groups({2, 1, 1}), Groups({1, 1, 1, 1}, 3)});
  absl::StatusOr<Schedule> aligned = AlignToVppGroup(schedule, 2);
  ASSERT_TRUE(aligned.ok()) << aligned.status();
  EXPECT_EQ(*aligned, schedule);
}

TEST(VppAlignTest, EmptyScheduleIsUnchanged) {
  absl::StatusOr<Schedule> aligned = AlignToVppGroup(Schedule{}, 4);
  ASSERT_TRUE(aligned.ok()) << aligned.status();
  EXPECT_TRUE(aligned->microbatches.empty());
}

// Runs 2,1,1,1,1 (boundaries 0,2,3,4,5,6); W // 2 = 3, so the cut is at 3,
// not at boundary 2. The part from the cut replaces the microbatch, the part
// before it is appended.
TEST(VppAlignTest, SplitsAtFirstRunBoundaryAtLeastHalfTheRanks) {
  absl::StatusOr<Schedule> aligned =
      AlignToVppGroup(Sched({Groups({2, 1, 1, 1, 1})}), 2);
  ASSERT_TRUE(aligned.ok()) << aligned.status();
  EXPECT_EQ(*aligned, Sched({Mb({{2}, {2}, {3}, {3}, {4}, {4}}),
                             Mb({{0}, {0}, {0}, {0}, {1}, {1}})}));
}

// Half [1],[1],[2] + 3 empty ranks: run [1] (2 ranks) is larger than its
// right-hand neighbour [2] (1 rank), so [2] doubles first; then no run is
// larger than its neighbour and the leftmost run [1] doubles. Doubling the
// larger run instead would not fit.
TEST(VppAlignTest, ExpandDoublesRightHandNeighbourOfALargerRun) {
  absl::StatusOr<Schedule> aligned =
      AlignToVppGroup(Sched({Groups({3, 2, 1})}), 2);
  ASSERT_TRUE(aligned.ok()) << aligned.status();
  EXPECT_EQ(*aligned, Sched({Mb({{1}, {1}, {1}, {1}, {2}, {2}}),
                             Mb({{0}, {0}, {0}, {0}, {0}, {0}})}));
}

// Half [1],[2],[3],[4] + 4 empty ranks: no run is larger than its neighbour,
// so the leftmost doubles; after that each round doubles the right-hand
// neighbour of the larger run, giving 2,2,2,2 (doubling the leftmost run
// whenever it fits would give 4,2,1,1).
TEST(VppAlignTest, ExpandDoublesLeftmostRunOnlyWhenNoRunIsLarger) {
  absl::StatusOr<Schedule> aligned =
      AlignToVppGroup(Sched({Groups({4, 1, 1, 1, 1})}), 2);
  ASSERT_TRUE(aligned.ok()) << aligned.status();
  EXPECT_EQ(*aligned, Sched({Mb({{1}, {1}, {2}, {2}, {3}, {3}, {4}, {4}}),
                             Mb({{0}, {0}, {0}, {0}, {0}, {0}, {0}, {0}})}));
}

// Left to right, a run is the ranks containing the first id of its first
// rank ([7,8] then [9,7] both contain 7); read from the right while widening,
// a run is the ranks containing the first id of its last rank (9 is not in
// [7,8]), so the half widens as two runs.
// The first round compares the two rightmost runs too. [4 | 3, 1] cut at 4
// leaves the half [3, 1] with 4 empty ranks: its 1-rank run is smaller than
// the 3-rank run to its left, so it doubles to 2 and then 4, and the 3-rank
// run no longer fits the last empty rank. Doubling the 3-rank run first
// would have fitted (6 + 2 ranks), but that is not upstream's order.
TEST(VppAlignTest, ExpandComparesTheRightmostRunsFromTheFirstRound) {
  absl::StatusOr<Schedule> aligned =
      AlignToVppGroup(Sched({Groups({8}), Groups({4, 3, 1}, 1)}), 3);
  EXPECT_EQ(aligned.status().code(), absl::StatusCode::kFailedPrecondition)
      << aligned.status();
  EXPECT_NE(aligned.status().message().find("cannot be widened to 8 ranks"),
            std::string::npos)
      << aligned.status();
}

// Each run is compared with its right-hand neighbour, not with the
// rightmost run. [8 | 4, 3, 1] cut at 8 leaves [4, 3, 1] (runs 1, 3, 4 from
// the right) with 8 empty ranks: the 1-rank run doubles to 2 and 4, then the
// 3-rank run (smaller than the 4 to its left) to 6, and the 4-rank run on
// the right no longer fits the 2 empty ranks.
TEST(VppAlignTest, ExpandComparesEachRunWithItsRightHandNeighbour) {
  absl::StatusOr<Schedule> aligned = AlignToVppGroup(Sched({Groups({8, 4, 3, 1})}), 2);
  EXPECT_EQ(aligned.status().code(), absl::StatusCode::kFailedPrecondition)
      << aligned.status();
  EXPECT_NE(aligned.status().message().find("a CP group of 4 ranks with only 2 empty"),
            std::string::npos)
      << aligned.status();
}

TEST(VppAlignTest, RunsAreReadByTheFirstIdOfTheirStartRank) {
  absl::StatusOr<Schedule> aligned =
      AlignToVppGroup(Sched({Mb({{7, 8}, {9, 7}, {1}, {2}})}), 2);
  ASSERT_TRUE(aligned.ok()) << aligned.status();
  EXPECT_EQ(*aligned, Sched({Mb({{1}, {1}, {2}, {2}}),
                             Mb({{7, 8}, {7, 8}, {9, 7}, {9, 7}})}));
}

// The cursor starts at the last microbatch; a one-group microbatch counts as
// an attempt and the cursor moves on to the left.
TEST(VppAlignTest, CursorSkipsMicrobatchesThatAreOneGroup) {
  absl::StatusOr<Schedule> aligned =
      AlignToVppGroup(Sched({Groups({2, 1, 1}), Groups({4}, 9)}), 3);
  ASSERT_TRUE(aligned.ok()) << aligned.status();
  EXPECT_EQ(*aligned, Sched({Mb({{1}, {1}, {2}, {2}}), Mb({{9}, {9}, {9}, {9}}),
                             Mb({{0}, {0}, {0}, {0}})}));
}

TEST(VppAlignTest, CursorKeepsMovingLeftAfterASplit) {
  absl::StatusOr<Schedule> aligned = AlignToVppGroup(
      Sched({Groups({2, 2}), Groups({1, 1, 1, 1}, 10), Groups({4}, 20)}), 5);
  ASSERT_TRUE(aligned.ok()) << aligned.status();
  EXPECT_EQ(*aligned,
            Sched({Mb({{1}, {1}, {1}, {1}}), Mb({{12}, {12}, {13}, {13}}),
                   Mb({{20}, {20}, {20}, {20}}), Mb({{10}, {10}, {11}, {11}}),
                   Mb({{0}, {0}, {0}, {0}})}));
}

// Below microbatch 0 the cursor restarts at the (new) last microbatch, so
// halves made earlier are split again.
TEST(VppAlignTest, CursorWrapsToTheNewLastMicrobatch) {
  absl::StatusOr<Schedule> aligned =
      AlignToVppGroup(Sched({Groups({1, 1, 1, 1})}), 4);
  ASSERT_TRUE(aligned.ok()) << aligned.status();
  EXPECT_EQ(*aligned,
            Sched({Mb({{3}, {3}, {3}, {3}}), Mb({{1}, {1}, {1}, {1}}),
                   Mb({{0}, {0}, {0}, {0}}), Mb({{2}, {2}, {2}, {2}})}));
}

// Six one-group microbatches fail on every pass, while the halves of the last
// one keep splitting: only a full pass without a split means nothing is left,
// so the failures before a split must not count towards giving up.
TEST(VppAlignTest, FailedAttemptsCountOnlySinceTheLastSplit) {
  std::vector<Microbatch> microbatches;
  for (SampleId id = 0; id < 6; ++id) microbatches.push_back(Groups({8}, id));
  microbatches.push_back(Groups({1, 1, 1, 1, 1, 1, 1, 1}, 6));
  absl::StatusOr<Schedule> aligned = AlignToVppGroup(Sched(microbatches), 14);
  ASSERT_TRUE(aligned.ok()) << aligned.status();
  std::vector<Microbatch> expected(microbatches.begin(), microbatches.begin() + 6);
  for (const SampleId id : {13, 9, 7, 11, 10, 6, 8, 12}) {
    expected.push_back(Groups({8}, id));
  }
  EXPECT_EQ(*aligned, Sched(expected));
}

TEST(VppAlignTest, AlignedCountIsAMultipleOfVppGroup) {
  Schedule schedule;
  for (int m = 0; m < 5; ++m) {
    schedule.microbatches.push_back(Groups({4, 2, 1, 1}, 10 * m));
  }
  for (const std::int64_t vpp_group : {2, 3, 4, 6, 7}) {
    absl::StatusOr<Schedule> aligned = AlignToVppGroup(schedule, vpp_group);
    ASSERT_TRUE(aligned.ok()) << aligned.status();
    EXPECT_EQ(aligned->microbatches.size() % vpp_group, 0u) << vpp_group;
    for (const Microbatch& microbatch : aligned->microbatches) {
      EXPECT_EQ(microbatch.rank_ids.size(), 8u);
    }
  }
}

TEST(VppAlignTest, NoSplittableMicrobatchIsFailedPrecondition) {
  absl::StatusOr<Schedule> aligned =
      AlignToVppGroup(Sched({Groups({2}), Groups({2}, 1)}), 3);
  ASSERT_FALSE(aligned.ok());
  EXPECT_EQ(aligned.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(aligned.status().message().find("no tail microbatch"),
            std::string::npos)
      << aligned.status();
}

TEST(VppAlignTest, SplitsUntilNothingIsLeftThenFails) {
  // [0],[1] splits into [1],[1] and [0],[0]; a third split is impossible.
  absl::StatusOr<Schedule> aligned =
      AlignToVppGroup(Sched({Groups({1, 1})}), 3);
  ASSERT_FALSE(aligned.ok());
  EXPECT_EQ(aligned.status().code(), absl::StatusCode::kFailedPrecondition);
}

// The specification's hang case: G=3, mslpr=1, samples (0,1),(1,1) schedule as one
// microbatch [0],[0],[1]. The half before the cut is [0],[0] + 1 empty rank:
// no run is larger than another and the leftmost (2 ranks) does not fit, so
// upstream loops forever.
TEST(VppAlignTest, HalfThatCannotBeWidenedIsFailedPrecondition) {
  absl::StatusOr<Schedule> aligned =
      AlignToVppGroup(Sched({Mb({{0}, {0}, {1}})}), 2);
  ASSERT_FALSE(aligned.ok());
  EXPECT_EQ(aligned.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(VppAlignTest, SpecHangCaseFailsEndToEnd) {
  DynamicCpOptions options;
  options.total_gpus = 3;
  options.max_seq_len_per_rank = 1;
  options.vpp_group = 2;
  const std::vector<Sample> samples = {{0, 1}, {1, 1}};
  absl::StatusOr<Schedule> schedule = ScheduleDynamicCp(samples, options);
  ASSERT_FALSE(schedule.ok());
  EXPECT_EQ(schedule.status().code(), absl::StatusCode::kFailedPrecondition);
}

// Runs 2,2,2,1 (W=7) cut at 4. The half [0],[0],[1],[1] + 3 empty ranks
// doubles [0] (4 ranks, 1 empty left), then must double [1] (2 ranks):
// upstream's slice assignment returns a microbatch of 8 ranks.
TEST(VppAlignTest, DoublingWiderThanTheEmptyTailIsFailedPrecondition) {
  absl::StatusOr<Schedule> aligned =
      AlignToVppGroup(Sched({Groups({2, 2, 2, 1})}), 2);
  ASSERT_FALSE(aligned.ok());
  EXPECT_EQ(aligned.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(aligned.status().message().find("wider"), std::string::npos)
      << aligned.status();
}

TEST(VppAlignTest, IncreasingRunsInTheInputAreInvalidArgument) {
  absl::StatusOr<Schedule> aligned =
      AlignToVppGroup(Sched({Mb({{0}, {1}, {1}, {1}})}), 2);
  ASSERT_FALSE(aligned.ok());
  EXPECT_EQ(aligned.status().code(), absl::StatusCode::kInvalidArgument);
}

// Like upstream, runs are read only in the microbatches the cursor tries.
TEST(VppAlignTest, IncreasingRunsAreOnlyCheckedWhenTried) {
  absl::StatusOr<Schedule> aligned = AlignToVppGroup(
      Sched({Mb({{0}, {1}, {1}, {1}}), Groups({1, 1, 1, 1}, 5)}), 3);
  ASSERT_TRUE(aligned.ok()) << aligned.status();
  EXPECT_EQ(aligned->microbatches.size(), 3u);
}

// Runs 3,1,1,1,1,1,1,1 (W=10) cut at 5: the half before it widens to 4,6,
// which is split again on the next pass. The input was fine, so this is
// FailedPrecondition, not InvalidArgument.
TEST(VppAlignTest, IncreasingRunsMadeByWideningAreFailedPrecondition) {
  absl::StatusOr<Schedule> aligned =
      AlignToVppGroup(Sched({Groups({3, 1, 1, 1, 1, 1, 1, 1})}), 3);
  ASSERT_FALSE(aligned.ok());
  EXPECT_EQ(aligned.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(VppAlignTest, VppGroupBelowOneIsInvalidArgument) {
  for (const std::int64_t vpp_group : {0, -1, -4}) {
    absl::StatusOr<Schedule> aligned =
        AlignToVppGroup(Sched({Groups({1, 1})}), vpp_group);
    ASSERT_FALSE(aligned.ok()) << vpp_group;
    EXPECT_EQ(aligned.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(VppAlignTest, RaggedWidthsAreInvalidArgument) {
  // Checked even when no split is needed.
  for (const std::int64_t vpp_group : {1, 2, 3}) {
    absl::StatusOr<Schedule> aligned =
        AlignToVppGroup(Sched({Groups({1, 1}), Groups({2, 1}, 2)}), vpp_group);
    ASSERT_FALSE(aligned.ok()) << vpp_group;
    EXPECT_EQ(aligned.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(VppAlignTest, EmptyRankIsInvalidArgument) {
  absl::StatusOr<Schedule> aligned =
      AlignToVppGroup(Sched({Groups({1, 1}), Mb({{2}, {}})}), 3);
  ASSERT_FALSE(aligned.ok());
  EXPECT_EQ(aligned.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(aligned.status().message().find("microbatch 1 rank 1"),
            std::string::npos)
      << aligned.status();
}

TEST(VppAlignTest, MicrobatchWithoutRanksIsInvalidArgument) {
  absl::StatusOr<Schedule> aligned =
      AlignToVppGroup(Sched({Mb({}), Mb({})}), 3);
  ASSERT_FALSE(aligned.ok());
  EXPECT_EQ(aligned.status().code(), absl::StatusCode::kInvalidArgument);
}

// 65536 one-rank groups: each half widens by doubling every group, which
// takes 32768 rounds; each round must not rescan the whole microbatch.
TEST(VppAlignTest, WideMicrobatchAlignsQuickly) {
  constexpr std::size_t kWidth = 65536;
  Microbatch microbatch;
  for (std::size_t r = 0; r < kWidth; ++r) {
    microbatch.rank_ids.push_back({static_cast<SampleId>(r)});
  }
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Schedule> aligned = AlignToVppGroup(Sched({microbatch}), 2);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(aligned.ok()) << aligned.status();
  ASSERT_EQ(aligned->microbatches.size(), 2u);
  for (std::size_t r = 0; r < kWidth; ++r) {
    const SampleId before_cut = static_cast<SampleId>(r / 2);
    ASSERT_EQ(aligned->microbatches[1].rank_ids[r],
              std::vector<SampleId>{before_cut});
    ASSERT_EQ(aligned->microbatches[0].rank_ids[r],
              std::vector<SampleId>{before_cut + SampleId{kWidth / 2}});
  }
  EXPECT_LT(elapsed, std::chrono::seconds(5));
}

// Upstream reads a run by content (the ranks whose lists hold the run
// start's first id), not by equal lists, so on a hand-made schedule a run
// can span neighbouring groups with different lists, left to right and
// right to left differently. The compact alignment reads runs as sequences
// of whole groups and must agree with the reference oracle there too.
TEST(VppAlignTest, RunsSpanningGroupsOfDifferentListsMatchTheOracle) {
  const std::vector<Schedule> schedules = {
      Sched({Mb({{1, 2}, {1}, {3}, {3}})}),
      Sched({Mb({{1}, {2, 1}, {3}, {4}})}),
      Sched({Mb({{1}, {1, 2}, {1, 2}, {2}, {5}, {6}})}),
      Sched({Mb({{1, 9}, {1}, {1, 9}, {1}, {4}, {4}, {5}, {6}})}),
      Sched({Mb({{7}, {7}, {8}, {9}}), Mb({{1}, {2, 1}, {2}, {3}})}),
      // A run whose last group holds its first's list: repeating it puts
      // two equal lists side by side, which become one group.
      Sched({Mb({{5}, {5, 6}, {5}, {7}, {7}, {7}})}),
  };
  for (const Schedule& schedule : schedules) {
    for (const std::int64_t vpp_group : {2, 3, 4}) {
      const absl::StatusOr<Schedule> aligned = AlignToVppGroup(schedule, vpp_group);
      const absl::StatusOr<Schedule> reference =
          oracle::ReferenceAlignToVppGroup(schedule, vpp_group);
      ASSERT_EQ(aligned.ok(), reference.ok())
          << aligned.status() << " vs " << reference.status();
      if (!aligned.ok()) {
        EXPECT_EQ(aligned.status().code(), reference.status().code());
        continue;
      }
      EXPECT_EQ(*aligned, *reference) << "vpp_group " << vpp_group;
      absl::StatusOr<CompactSchedule> compact =
          AlignToVppGroup(CompactFromRanks(schedule), vpp_group);
      ASSERT_TRUE(compact.ok()) << compact.status();
      EXPECT_EQ(*compact, CompactFromRanks(*reference));
    }
  }
}

// The compact input must be a compact form: groups that tile the ranks, with
// no two neighbours holding the same list, in every microbatch.
TEST(VppAlignTest, CompactInputThatIsNotACompactFormIsInvalidArgument) {
  const CompactMicrobatch tiled{.groups = {{.first_rank = 0, .size = 2, .ids = {1}}}};
  const CompactMicrobatch gap{.groups = {{.first_rank = 0, .size = 1, .ids = {2}},
                                         {.first_rank = 2, .size = 1, .ids = {3}}}};
  const CompactMicrobatch split{.groups = {{.first_rank = 0, .size = 1, .ids = {4}},
                                           {.first_rank = 1, .size = 1, .ids = {4}}}};
  for (const CompactSchedule& schedule :
       {CompactSchedule{{gap, tiled}}, CompactSchedule{{tiled, gap}},
        CompactSchedule{{tiled, split}}}) {
    const absl::StatusOr<CompactSchedule> aligned = AlignToVppGroup(schedule, 3);
    EXPECT_EQ(aligned.status().code(), absl::StatusCode::kInvalidArgument)
        << aligned.status();
  }
  EXPECT_NE(AlignToVppGroup(CompactSchedule{{tiled, split}}, 3)
                .status()
                .message()
                .find("microbatch 1 group 1 (rank 1) holds the same ids as group 0"),
            std::string::npos);
}

}  // namespace
}  // namespace dcpsched::vpp_align_test
