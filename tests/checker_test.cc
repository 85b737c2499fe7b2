#include "core/checker.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "core/compact_schedule.h"
#include "core/cost_model.h"
#include "core/packing_aware.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_options.h"
#include "io/golden.h"

namespace dcpsched::checker_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

Schedule MakeSchedule(std::vector<RankLists> microbatches) {
  Schedule schedule;
  for (RankLists& ranks : microbatches) {
    schedule.microbatches.push_back(Microbatch{std::move(ranks)});
  }
  return schedule;
}

// The single violation `schedule` has, which must exist.
Violation OnlyViolation(const std::vector<Sample>& samples, const Schedule& schedule,
                        const DynamicCpOptions& options) {
  const std::vector<Violation> violations = FindViolations(samples, schedule, options);
  EXPECT_EQ(violations.size(), 1u);
  return violations.empty() ? Violation{} : violations.front();
}

// Four samples on four ranks, mslpr 100: a valid two-microbatch schedule.
const std::vector<Sample> kSamples = {{1, 100}, {2, 60}, {3, 40}, {4, 150}};

TEST(CheckScheduleTest, AcceptsAValidSchedule) {
  const Schedule schedule = MakeSchedule({{{4}, {4}, {1}, {2, 3}}});
  EXPECT_TRUE(CheckSchedule(kSamples, schedule, Options(4, 100)).ok());
  EXPECT_THAT(FindViolations(kSamples, schedule, Options(4, 100)), IsEmpty());
}

TEST(CheckScheduleTest, ReportsAnEmptyRank) {
  const Violation violation = OnlyViolation(
      {{1, 10}, {2, 10}}, MakeSchedule({{{1}, {2}, {}}}), Options(3, 100));
  EXPECT_EQ(violation.invariant, Invariant::kNoEmptyRank);
  EXPECT_EQ(violation.microbatch, 0);
  EXPECT_EQ(violation.rank, 2);
  EXPECT_THAT(violation.message, HasSubstr("microbatch 0 rank 2 holds no sample"));
}

TEST(CheckScheduleTest, ReportsAMicrobatchOfTheWrongWidth) {
  const Violation violation = OnlyViolation(
      {{1, 10}, {2, 10}}, MakeSchedule({{{1}, {2}}}), Options(3, 100));
  EXPECT_EQ(violation.invariant, Invariant::kNoEmptyRank);
  EXPECT_THAT(violation.message, HasSubstr("has 2 ranks, expected total_gpus=3"));
}

TEST(CheckScheduleTest, ReportsAMicrobatchWiderThanG) {
  // Five rank lists on G = 4: the width is wrong, and the sample's CP size 5
  // is neither a power of two nor G, nor a size the runtime has.
  const std::vector<Violation> violations = FindViolations(
      {{1, 10}}, MakeSchedule({{{1}, {1}, {1}, {1}, {1}}}), Options(4, 100));
  ASSERT_EQ(violations.size(), 3u);
  EXPECT_EQ(violations[0].invariant, Invariant::kNoEmptyRank);
  EXPECT_THAT(violations[0].message, HasSubstr("has 5 ranks, expected total_gpus=4"));
  EXPECT_EQ(violations[1].invariant, Invariant::kPowerOfTwoCp);
  EXPECT_THAT(violations[1].message, HasSubstr("has CP size 5"));
  EXPECT_EQ(violations[2].invariant, Invariant::kRuntimeGroups);
  EXPECT_THAT(violations[2].message, HasSubstr("on a CP group of size 5 (ranks 0-4)"));
}

TEST(CheckScheduleTest, ReportsARemovedSample) {
  const Violation violation =
      OnlyViolation(kSamples, MakeSchedule({{{4}, {4}, {1}, {2}}}), Options(4, 100));
  EXPECT_EQ(violation.invariant, Invariant::kEachSampleOnce);
  EXPECT_THAT(violation.ids, ElementsAre(3));
  EXPECT_THAT(violation.message, HasSubstr("in no microbatch: ids 3"));
}

TEST(CheckScheduleTest, ReportsASampleTwiceOnOneRank) {
  const Violation violation = OnlyViolation(
      kSamples, MakeSchedule({{{4}, {4}, {1}, {2, 3, 3}}}), Options(4, 1000));
  EXPECT_EQ(violation.invariant, Invariant::kEachSampleOnce);
  EXPECT_EQ(violation.rank, 3);
  EXPECT_THAT(violation.message, HasSubstr("holds sample 3 twice"));
}

TEST(CheckScheduleTest, ReportsASampleDuplicatedIntoAnotherMicrobatch) {
  const Schedule schedule = MakeSchedule({{{4}, {4}, {1}, {2, 3}}, {{1}, {1}, {1}, {1}}});
  const Violation violation = OnlyViolation(kSamples, schedule, Options(4, 100));
  EXPECT_EQ(violation.invariant, Invariant::kEachSampleOnce);
  EXPECT_EQ(violation.microbatch, 1);
  EXPECT_THAT(violation.message, HasSubstr("sample 1 is in microbatch 0 and again in microbatch 1"));
}

TEST(CheckScheduleTest, ReportsASampleMovedOffItsRun) {
  // Sample 4 on ranks 0 and 2: not contiguous.
  const Schedule schedule = MakeSchedule({{{4}, {1}, {4}, {2, 3}}});
  const std::vector<Violation> violations = FindViolations(kSamples, schedule, Options(4, 100));
  ASSERT_FALSE(violations.empty());
  EXPECT_EQ(violations.front().invariant, Invariant::kEachSampleOnce);
  EXPECT_THAT(violations.front().message, HasSubstr("not one contiguous run"));
}

// A sample may span neighbouring groups that hold different lists: ranks 0-1
// hold {5}, ranks 2 and 3 hold 5 with another sample each. Its run is
// ranks 0-3, contiguous, and CP size 4.
// One contiguous run for invariant 2, but samples 6 and 7 share ranks with a
// sample on all four: the runtime splits them over all four ranks too
// (invariant 11, nested groups), once per group.
TEST(CheckScheduleTest, ASampleAcrossNeighbouringGroupsIsOneContiguousRun) {
  const std::vector<Sample> samples = {{5, 396}, {6, 1}, {7, 1}};
  const Schedule schedule = MakeSchedule({{{5}, {5}, {5, 6}, {5, 7}}});
  const std::vector<Violation> violations = FindViolations(samples, schedule, Options(4, 100));
  ASSERT_EQ(violations.size(), 2u);
  EXPECT_EQ(violations[0].invariant, Invariant::kRuntimeGroups);
  EXPECT_EQ(violations[0].rank, 2);
  EXPECT_THAT(violations[0].ids, ElementsAre(6));
  EXPECT_THAT(violations[0].message,
              HasSubstr("microbatch 0 rank 2 gets the runtime's CP group of size 4 (ranks 0-3, "
                        "from its first sample 5), but sample 6 is held by rank 2"));
  EXPECT_EQ(violations[1].rank, 3);
  EXPECT_THAT(violations[1].ids, ElementsAre(7));
}

// Twice in the list of the second group it spans: reported as twice on that
// rank (not as a break in its run).
TEST(CheckScheduleTest, ASampleTwiceInTheSecondGroupItSpansIsReportedTwiceThere) {
  const std::vector<Sample> samples = {{5, 396}, {6, 1}, {7, 1}};
  const Schedule schedule = MakeSchedule({{{5}, {5}, {5, 6, 5}, {5, 7}}});
  const std::vector<Violation> violations = FindViolations(samples, schedule, Options(4, 100));
  ASSERT_FALSE(violations.empty());
  EXPECT_EQ(violations.front().invariant, Invariant::kEachSampleOnce);
  EXPECT_THAT(violations.front().message, HasSubstr("microbatch 0 rank 2 holds sample 5 twice"));
}

// A sample found again in a later microbatch is reported once for that
// microbatch, however many of its groups hold it.
TEST(CheckScheduleTest, ASampleAgainInTwoGroupsOfALaterMicrobatchIsReportedOnce) {
  const Schedule schedule =
      MakeSchedule({{{4}, {4}, {1}, {2, 3}}, {{1}, {1}, {1, 3}, {1, 3}}});
  int reports = 0;
  for (const Violation& violation : FindViolations(kSamples, schedule, Options(4, 100))) {
    if (absl::StrContains(violation.message, "sample 1 is in microbatch 0 and again")) ++reports;
  }
  EXPECT_EQ(reports, 1);
}

TEST(CheckScheduleTest, ReportsAnUnknownId) {
  const Violation violation = OnlyViolation(
      kSamples, MakeSchedule({{{4}, {4}, {1, 99}, {2, 3}}}), Options(4, 1000));
  EXPECT_EQ(violation.invariant, Invariant::kEachSampleOnce);
  EXPECT_THAT(violation.ids, ElementsAre(99));
}

TEST(CheckScheduleTest, ReportsACpSizeThatIsNotAPowerOfTwo) {
  const std::vector<Sample> samples = {{1, 30}, {2, 10}};
  const std::vector<Violation> violations =
      FindViolations(samples, MakeSchedule({{{1}, {1}, {1}, {2}}}), Options(4, 100));
  ASSERT_EQ(violations.size(), 2u);
  EXPECT_EQ(violations[0].invariant, Invariant::kPowerOfTwoCp);
  EXPECT_THAT(violations[0].message, HasSubstr("sample 1 in microbatch 0 has CP size 3"));
  // Nor does the runtime have a group of 3 ranks at G = 4.
  EXPECT_EQ(violations[1].invariant, Invariant::kRuntimeGroups);
  EXPECT_THAT(violations[1].message, HasSubstr("it creates 1, 2 and 4 (all ranks)"));
  // CP size G is allowed even when G is not a power of two.
  EXPECT_THAT(FindViolations(samples, MakeSchedule({{{1, 2}, {1, 2}, {1, 2}}}), Options(3, 100)),
              IsEmpty());
}

TEST(CheckScheduleTest, ReportsARankOverItsTokenBudget) {
  const std::vector<Sample> samples = {{1, 60}, {2, 50}, {3, 10}};
  const Violation violation =
      OnlyViolation(samples, MakeSchedule({{{1, 2}, {3}}}), Options(2, 100));
  EXPECT_EQ(violation.invariant, Invariant::kTokenBudget);
  EXPECT_EQ(violation.rank, 0);
  EXPECT_THAT(violation.message, HasSubstr("microbatch 0 rank 0 holds 110 tokens"));
  EXPECT_THAT(violation.ids, ElementsAre(1, 2));
}

TEST(CheckScheduleTest, WorkEqualToTheCapIsNoViolation) {
  // Work 20^2 + 4^2 + 2^2 = 420 on one rank, exactly the cap 20 * 20 * 1.05:
  // only the token budget (26 > 20) is broken.
  ASSERT_EQ(WorkCap(20, 20), 420.0);
  const Violation violation = OnlyViolation(
      {{1, 20}, {2, 4}, {3, 2}}, MakeSchedule({{{1, 2, 3}}}), Options(1, 20));
  EXPECT_EQ(violation.invariant, Invariant::kTokenBudget);
}

TEST(CheckScheduleTest, ADuplicateCountsOnlyInTheLoadOfItsFirstMicrobatch) {
  // Sample 1 again in microbatch 1: reported as a duplicate, and microbatch
  // 1's rank load counts only sample 2 (8 tokens, within 10).
  const Violation violation = OnlyViolation(
      {{1, 8}, {2, 8}}, MakeSchedule({{{1}}, {{2, 1}}}), Options(1, 10));
  EXPECT_EQ(violation.invariant, Invariant::kEachSampleOnce);
  EXPECT_EQ(violation.microbatch, 1);
}

TEST(CheckScheduleTest, ReportsACpSizeBelowTheMinimum) {
  const std::vector<Sample> samples = {{1, 150}, {2, 10}};
  // 150 tokens need 2 ranks at mslpr 100: on one rank it is also over budget.
  const std::vector<Violation> violations =
      FindViolations(samples, MakeSchedule({{{1}, {2}}}), Options(2, 100));
  ASSERT_EQ(violations.size(), 3u);
  EXPECT_EQ(violations[0].invariant, Invariant::kTokenBudget);
  EXPECT_EQ(violations[1].invariant, Invariant::kWorkCap);
  EXPECT_EQ(violations[2].invariant, Invariant::kMinimumCp);
  EXPECT_THAT(violations[2].message, HasSubstr("has CP size 1, below its minimum 2"));
  // min_cp_size raises the minimum even where tokens fit.
  const std::vector<Violation> min_cp = FindViolations(
      {{1, 10}, {2, 10}}, MakeSchedule({{{1}, {2}}}), Options(2, 100, 2));
  ASSERT_EQ(min_cp.size(), 4u);
  EXPECT_EQ(min_cp[0].invariant, Invariant::kMinimumCp);
  EXPECT_EQ(min_cp[1].invariant, Invariant::kMinimumCp);
  EXPECT_THAT(min_cp[1].ids, ElementsAre(2));
  // Nor does the runtime create groups of one rank under min_cp_size 2.
  EXPECT_EQ(min_cp[2].invariant, Invariant::kRuntimeGroups);
  EXPECT_THAT(min_cp[2].message,
              HasSubstr("at total_gpus=2 and min_cp_size=2: it creates only 2 (all ranks)"));
  EXPECT_EQ(min_cp[3].invariant, Invariant::kRuntimeGroups);
}

// A compact schedule whose groups are not a compact form is reported once for
// that microbatch, which is not read further; the others still are.
TEST(CheckScheduleTest, ReportsACompactMicrobatchThatIsNotACompactForm) {
  const std::vector<Sample> samples = {{1, 10}, {2, 10}};
  const CompactSchedule schedule{.microbatches = {
      CompactMicrobatch{.groups = {{.first_rank = 0, .size = 1, .ids = {1}},
                                   {.first_rank = 2, .size = 1, .ids = {1}}}},
      CompactMicrobatch{.groups = {{.first_rank = 0, .size = 1, .ids = {1}},
                                   {.first_rank = 1, .size = 1, .ids = {2}}}}}};

  // Sample 1 is not counted twice: microbatch 0's groups are not read.
  const std::vector<Violation> violations = FindViolations(samples, schedule, Options(2, 100));

  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].invariant, Invariant::kNoEmptyRank);
  EXPECT_EQ(violations[0].microbatch, 0);
  EXPECT_THAT(violations[0].message, HasSubstr("microbatch 0 group 1 starts at rank 2"));
}

TEST(CheckScheduleTest, ReportsACountThatIsNotAVppMultiple) {
  DynamicCpOptions options = Options(1, 100);
  options.vpp_group = 2;
  const Violation violation =
      OnlyViolation({{1, 10}}, MakeSchedule({{{1}}}), options);
  EXPECT_EQ(violation.invariant, Invariant::kVppMultiple);
  EXPECT_THAT(violation.message, HasSubstr("1 microbatches is not a multiple of vpp_group=2"));
}

// Invariant 10: under max_num_seqs no rank holds more samples than that. The
// group on ranks 2-3 holds three; reported once, at its first rank.
TEST(CheckScheduleTest, ReportsARankOverTheSequenceCap) {
  const std::vector<Sample> samples = {{0, 50}, {1, 10}, {2, 10}, {3, 10}};
  const Schedule schedule = MakeSchedule({{{0}, {0}, {1, 2, 3}, {1, 2, 3}}});
  DynamicCpOptions options = Options(4, 100);
  EXPECT_THAT(FindViolations(samples, schedule, options), IsEmpty());
  options.max_num_seqs = 3;
  EXPECT_THAT(FindViolations(samples, schedule, options), IsEmpty());
  options.max_num_seqs = 2;
  const Violation violation = OnlyViolation(samples, schedule, options);
  EXPECT_EQ(violation.invariant, Invariant::kSequenceCap);
  EXPECT_EQ(violation.microbatch, 0);
  EXPECT_EQ(violation.rank, 2);
  EXPECT_THAT(violation.ids, ElementsAre(1, 2, 3));
  EXPECT_THAT(violation.message,
              HasSubstr("microbatch 0 ranks 2-3: each holds 3 samples > max_num_seqs 2"));
  const absl::Status status = CheckSchedule(samples, schedule, options);
  EXPECT_THAT(std::string(status.message()), HasSubstr("invariant 10 (sequence cap)"));
}

// The cap counts every id a rank holds, a stranger or a repeat too.
TEST(CheckScheduleTest, SequenceCapCountsEveryIdOnTheRank) {
  DynamicCpOptions options = Options(1, 100);
  options.max_num_seqs = 1;
  const std::vector<Violation> violations =
      FindViolations({{1, 10}}, MakeSchedule({{{1, 99}}}), options);
  ASSERT_EQ(violations.size(), 2u);
  EXPECT_EQ(violations[0].invariant, Invariant::kEachSampleOnce);
  EXPECT_EQ(violations[1].invariant, Invariant::kSequenceCap);
  EXPECT_THAT(violations[1].message, HasSubstr("rank 0 holds 2 samples > max_num_seqs 1"));
}

TEST(CheckScheduleTest, StatusNamesTheLowestNumberedInvariant) {
  // Empty rank (1) and token overload (4) at once: invariant 1 is reported.
  const absl::Status status =
      CheckSchedule({{1, 60}, {2, 50}}, MakeSchedule({{{1, 2}, {}}}), Options(2, 100));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("invariant 1 (no empty rank)"));
}

TEST(CheckScheduleTest, RejectsAnInvalidProblem) {
  const absl::Status status =
      CheckSchedule({{1, 10}, {1, 20}}, MakeSchedule({{{1}}}), Options(1, 100));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("the problem is not valid"));
}

// FindViolations judges schedules of valid problems only; for an invalid one
// it reports nothing, and CheckSchedule (above) says why.
TEST(FindViolationsTest, InvalidProblemHasNoViolations) {
  const Schedule broken = MakeSchedule({{{1}, {}}});
  EXPECT_THAT(FindViolations({{1, 10}, {1, 20}}, broken, Options(2, 100)), IsEmpty());
  EXPECT_THAT(FindViolations({{1, 10}, {2, 20}}, broken, Options(2, 100)),
              Not(IsEmpty()));
}

TEST(InvariantNameTest, NamesEachCheckedInvariantAndNoOtherNumber) {
  EXPECT_STREQ(InvariantName(Invariant::kNoEmptyRank), "no empty rank");
  EXPECT_STREQ(InvariantName(Invariant::kEachSampleOnce), "each sample once");
  EXPECT_STREQ(InvariantName(Invariant::kPowerOfTwoCp), "power-of-two CP size");
  EXPECT_STREQ(InvariantName(Invariant::kTokenBudget), "token budget");
  EXPECT_STREQ(InvariantName(Invariant::kWorkCap), "work cap");
  EXPECT_STREQ(InvariantName(Invariant::kMinimumCp), "minimum CP size");
  EXPECT_STREQ(InvariantName(Invariant::kVppMultiple), "VPP multiple");
  EXPECT_STREQ(InvariantName(Invariant::kSequenceCap), "sequence cap");
  // The specification's invariant 7 holds for the placement before the fill, which the
  // checker cannot see, so 7 is no Invariant; nor are 0 and 9.
  for (const int number : {0, 7, 9}) {
    EXPECT_STREQ(InvariantName(static_cast<Invariant>(number)), "unknown invariant")
        << number;
  }
}

// Every schedule upstream produced in the golden files keeps every invariant
// (dp_balanced uses fixed CP groups and other rules, so it is left out), and
// so does every golden step result for the samples it placed.
TEST(CheckScheduleGoldenTest, EveryGoldenScheduleKeepsTheInvariants) {
  std::int64_t checked = 0;
  std::int64_t unrunnable_cases = 0;
  for (const auto& entry : std::filesystem::directory_iterator(DCPSCHED_GOLDEN_DIR)) {
    if (entry.path().extension() != ".jsonl") continue;
    std::ifstream file(entry.path());
    std::string line;
    while (std::getline(file, line)) {
      if (line.empty()) continue;
      const absl::StatusOr<GoldenCase> golden = ParseGoldenCase(line);
      ASSERT_TRUE(golden.ok()) << golden.status();
      // dp_balanced uses other rules; a step on no samples is G empty ranks,
      // which is no microbatch of a schedule.
      if (!golden->expect_ok || golden->scheduler == "dp_balanced" ||
          golden->samples.empty()) {
        continue;
      }
      DynamicCpOptions options = Options(golden->total_gpus, golden->max_seq_len_per_rank,
                                         golden->min_cp_size);
      options.vpp_group = golden->vpp_group;
      std::vector<Sample> placed = golden->samples;
      Schedule schedule;
      if (golden->expect_step) {
        const std::vector<Sample>& leftovers = golden->expect_step->leftovers;
        std::erase_if(placed, [&](const Sample& sample) {
          return std::find(leftovers.begin(), leftovers.end(), sample) != leftovers.end();
        });
        schedule.microbatches.push_back(golden->expect_step->microbatch);
        options.vpp_group.reset();
      } else {
        schedule = *golden->expect_schedule;
      }
      // An upstream step is a building block, not a schedule the runtime runs,
      // and an unrunnable schedule case is upstream's schedule that breaks
      // invariant 11: in both, every other invariant holds.
      const bool unrunnable = ExpectsUnrunnableSchedule(*golden);
      const bool runtime_groups_may_break = golden->expect_step.has_value() || unrunnable;
      bool breaks_runtime_groups = false;
      for (const Violation& violation : FindViolations(placed, schedule, options)) {
        if (violation.invariant == Invariant::kRuntimeGroups) breaks_runtime_groups = true;
        if (runtime_groups_may_break && violation.invariant == Invariant::kRuntimeGroups) {
          continue;
        }
        ADD_FAILURE() << golden->name << ": invariant " << static_cast<int>(violation.invariant)
                      << ": " << violation.message;
      }
      EXPECT_EQ(breaks_runtime_groups && !golden->expect_step.has_value(), unrunnable)
          << golden->name;
      unrunnable_cases += unrunnable ? 1 : 0;
      ++checked;
    }
  }
  EXPECT_GT(checked, 800);
  EXPECT_GT(unrunnable_cases, 0);
}

// The checker sees a damaged golden schedule: one id removed, duplicated or
// moved.
TEST(CheckScheduleGoldenTest, ReportsDamageToARealSchedule) {
  const std::vector<Sample> samples = {{0, 8000}, {1, 7000}, {2, 900}, {3, 700}, {4, 500},
                                       {5, 200}};
  const DynamicCpOptions options = Options(4, 2048);
  const absl::StatusOr<Schedule> schedule = ScheduleDynamicCp(samples, options);
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_TRUE(CheckSchedule(samples, *schedule, options).ok());
  ASSERT_GE(schedule->microbatches.size(), 2u);

  // The victim shares its ranks with another sample, so removing it leaves
  // no rank empty.
  std::size_t home = 0;
  SampleId victim = -1;
  for (std::size_t m = 0; m < schedule->microbatches.size() && victim < 0; ++m) {
    for (const std::vector<SampleId>& rank : schedule->microbatches[m].rank_ids) {
      if (rank.size() >= 2) {
        home = m;
        victim = rank.back();
        break;
      }
    }
  }
  ASSERT_GE(victim, 0);
  Schedule removed = *schedule;
  for (auto& rank : removed.microbatches[home].rank_ids) std::erase(rank, victim);
  EXPECT_THAT(std::string(CheckSchedule(samples, removed, options).message()),
              HasSubstr("in no microbatch: ids " + std::to_string(victim)));

  Schedule duplicated = *schedule;
  duplicated.microbatches.front().rank_ids.front().push_back(victim);
  EXPECT_THAT(std::string(CheckSchedule(samples, duplicated, options).message()),
              HasSubstr("invariant 2 (each sample once)"));

  Schedule moved = *schedule;
  for (auto& rank : moved.microbatches[home].rank_ids) std::erase(rank, victim);
  const std::size_t elsewhere = home == 0 ? 1 : 0;
  moved.microbatches[elsewhere].rank_ids.front().push_back(victim);
  EXPECT_THAT(std::string(CheckSchedule(samples, moved, options).message()),
              HasSubstr("invariant"));
  EXPECT_FALSE(CheckSchedule(samples, moved, options).ok());
}

}  // namespace
}  // namespace dcpsched::checker_test
