// Tests of the fixed-CP dp_balanced scheduler (core/dp_balanced.h): hand-
// worked cases from the specification's "DP-balanced schedule" and every case of
// golden/dp_balanced_schedule.jsonl.

#include "core/dp_balanced.h"

#include <cstdint>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/types.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace dcpsched::dp_balanced_test {
namespace {

using Ranks = std::vector<std::vector<SampleId>>;

DpBalancedOptions Options(std::int64_t dp_size, std::int64_t cp_size,
                          std::int64_t max_seq_len_per_rank,
                          std::optional<std::int64_t> max_num_seqs = {},
                          std::optional<std::int64_t> vpp_group = {}) {
  DpBalancedOptions options;
  options.dp_size = dp_size;
  options.cp_size = cp_size;
  options.max_seq_len_per_rank = max_seq_len_per_rank;
  options.max_num_seqs = max_num_seqs;
  options.vpp_group = vpp_group;
  return options;
}

Schedule Sched(std::vector<Ranks> microbatches) {
  Schedule schedule;
  for (Ranks& ranks : microbatches) {
    schedule.microbatches.push_back(Microbatch{std::move(ranks)});
  }
  return schedule;
}

// Capacity 10: [4,5] (9), then 3 does not fit, [3], then 8 does not fit,
// [8,2] (exactly 10). Three sequences, dp_size 2: the last one gives up its
// last sample.
TEST(DpBalancedTest, PacksInOrderAndMovesTheLastSample) {
  const std::vector<std::int64_t> lens = {4, 5, 3, 8, 2};
  absl::StatusOr<Schedule> schedule =
      ScheduleDpBalanced(lens, Options(2, 1, 10));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  EXPECT_EQ(*schedule, Sched({{{0, 1}, {2}}, {{3}, {4}}}));
}

// Same packing with cp_size 2 (capacity 5 * 2): each DP replica's sequence is
// held by both of its CP ranks.
TEST(DpBalancedTest, EveryCpRankOfAReplicaHoldsItsSequence) {
  const std::vector<std::int64_t> lens = {4, 5, 3, 8, 2};
  absl::StatusOr<Schedule> schedule =
      ScheduleDpBalanced(lens, Options(2, 2, 5));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  EXPECT_EQ(*schedule,
            Sched({{{0, 1}, {0, 1}, {2}, {2}}, {{3}, {3}, {4}, {4}}}));
}

TEST(DpBalancedTest, MaxNumSeqsLimitsSamplesPerSequence) {
  const std::vector<std::int64_t> lens = {1, 1, 1, 1, 1};
  absl::StatusOr<Schedule> schedule =
      ScheduleDpBalanced(lens, Options(1, 1, 100, /*max_num_seqs=*/2));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  EXPECT_EQ(*schedule, Sched({{{0, 1}}, {{2, 3}}, {{4}}}));
}

TEST(DpBalancedTest, WithoutMaxNumSeqsOnlyTokensLimitPacking) {
  const std::vector<std::int64_t> lens = {1, 1, 1, 1, 1};
  absl::StatusOr<Schedule> schedule =
      ScheduleDpBalanced(lens, Options(1, 1, 100));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  EXPECT_EQ(*schedule, Sched({{{0, 1, 2, 3, 4}}}));
}

// dp_size 2 * vpp_group 2 = 4 sequences: [0,1,2],[3,4,5] gives up 5, then 4,
// each appended as its own sequence in that order.
TEST(DpBalancedTest, VppGroupMultipliesTheRequiredMultiple) {
  const std::vector<std::int64_t> lens = {1, 1, 1, 1, 1, 1};
  absl::StatusOr<Schedule> schedule = ScheduleDpBalanced(
      lens, Options(2, 1, 3, /*max_num_seqs=*/std::nullopt, /*vpp_group=*/2));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  EXPECT_EQ(*schedule, Sched({{{0, 1, 2}, {3}}, {{5}, {4}}}));
}

// The cursor steps left past the single-sample last sequence and splits
// sequence 0, as on upstream's dev branch (an older upstream asserted i > 0
// and failed here).
TEST(DpBalancedTest, MovesSamplesOutOfSequenceZero) {
  const std::vector<std::int64_t> lens = {1, 1, 2};
  absl::StatusOr<Schedule> schedule =
      ScheduleDpBalanced(lens, Options(3, 1, 2));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  EXPECT_EQ(*schedule, Sched({{{0}, {2}, {1}}}));
}

// Capacity 3: [0,1,2],[3],[4,5] -> 3 sequences; dp_size 6 needs 3 more. The
// cursor takes 5 from [4,5], steps left past [4] and [3], then takes 2 and 1
// from sequence 0; appended single-sample sequences are never revisited.
TEST(DpBalancedTest, CursorStepsLeftPastSingleSampleSequences) {
  const std::vector<std::int64_t> lens = {1, 1, 1, 3, 1, 1};
  absl::StatusOr<Schedule> schedule =
      ScheduleDpBalanced(lens, Options(6, 1, 3));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  EXPECT_EQ(*schedule, Sched({{{0}, {3}, {4}, {5}, {2}, {1}}}));
}

TEST(DpBalancedTest, EmptyInputGivesEmptySchedule) {
  absl::StatusOr<Schedule> schedule =
      ScheduleDpBalanced({}, Options(4, 2, 8, std::nullopt, 3));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  EXPECT_TRUE(schedule->microbatches.empty());
}

TEST(DpBalancedTest, NotEnoughSamplesToMoveIsFailedPrecondition) {
  const std::vector<std::int64_t> lens = {2, 2};
  absl::StatusOr<Schedule> schedule =
      ScheduleDpBalanced(lens, Options(3, 1, 2));
  ASSERT_FALSE(schedule.ok());
  EXPECT_EQ(schedule.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(schedule.status().message().find("smaller dp_size or vpp_group"),
            std::string::npos)
      << schedule.status();
}

TEST(DpBalancedTest, HugeVppGroupIsFailedPreconditionNotOverflow) {
  const std::vector<std::int64_t> lens = {1, 1, 1};
  for (const std::int64_t vpp_group :
       {std::numeric_limits<std::int64_t>::max(), std::int64_t{1} << 48}) {
    absl::StatusOr<Schedule> schedule =
        ScheduleDpBalanced(lens, Options(65536, 1, 1, std::nullopt, vpp_group));
    ASSERT_FALSE(schedule.ok()) << vpp_group;
    EXPECT_EQ(schedule.status().code(), absl::StatusCode::kFailedPrecondition);
  }
}

// dp_size 2 and vpp_group 2^63 - 1 make 2^64 - 2: the largest multiple that
// still fits 64 bits is computed and named, not reported as over 2^64.
TEST(DpBalancedTest, LargestMultipleThatFitsIsNamedExactly) {
  const std::vector<std::int64_t> lens = {1, 1, 1};
  absl::StatusOr<Schedule> schedule = ScheduleDpBalanced(
      lens, Options(2, 1, 1, std::nullopt, std::numeric_limits<std::int64_t>::max()));
  ASSERT_EQ(schedule.status().code(), absl::StatusCode::kFailedPrecondition)
      << schedule.status();
  EXPECT_NE(schedule.status().message().find("vpp_group (18446744073709551614)"),
            std::string::npos)
      << schedule.status();
}

TEST(DpBalancedTest, LargestCapacityDoesNotOverflow) {
  const std::int64_t max_len = std::int64_t{1} << 26;
  const std::vector<std::int64_t> lens(4, max_len);
  absl::StatusOr<Schedule> schedule =
      ScheduleDpBalanced(lens, Options(1, 65536, (std::int64_t{1} << 31) - 1));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_EQ(schedule->microbatches.size(), 1u);
  ASSERT_EQ(schedule->microbatches[0].rank_ids.size(), 65536u);
  EXPECT_EQ(schedule->microbatches[0].rank_ids[65535],
            (std::vector<SampleId>{0, 1, 2, 3}));
}

TEST(DpBalancedTest, SampleLongerThanASequenceIsInvalidArgument) {
  const std::vector<std::int64_t> lens = {3, 11, 2};
  absl::StatusOr<Schedule> schedule =
      ScheduleDpBalanced(lens, Options(1, 2, 5));
  ASSERT_FALSE(schedule.ok());
  EXPECT_EQ(schedule.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(DpBalancedTest, OptionsOutOfRangeAreInvalidArgument) {
  const std::vector<std::int64_t> lens = {1, 2, 3};
  for (const DpBalancedOptions& options : {
           Options(0, 1, 8),
           Options(1, 0, 8),
           Options(1, 1, 0),
           Options(256, 512, 8),
           Options(1, 1, 8, /*max_num_seqs=*/0),
           Options(1, 1, 8, std::nullopt, /*vpp_group=*/0),
       }) {
    absl::StatusOr<Schedule> schedule = ScheduleDpBalanced(lens, options);
    ASSERT_FALSE(schedule.ok());
    EXPECT_EQ(schedule.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(DpBalancedTest, NonPositiveLengthIsInvalidArgument) {
  const std::vector<std::int64_t> lens = {1, 0, 3};
  absl::StatusOr<Schedule> schedule =
      ScheduleDpBalanced(lens, Options(1, 1, 8));
  ASSERT_FALSE(schedule.ok());
  EXPECT_EQ(schedule.status().code(), absl::StatusCode::kInvalidArgument);
}

std::optional<std::int64_t> OptionalInt(const nlohmann::json& value) {
  if (value.is_null()) return std::nullopt;
  return value.get<std::int64_t>();
}

// Every case of golden/dp_balanced_schedule.jsonl: the samples' lengths in
// order, the expected groups as positions, or an error for ok:false.
TEST(DpBalancedTest, MatchesEveryGoldenCase) {
  const std::string path =
      std::string(DCPSCHED_GOLDEN_DIR) + "/dp_balanced_schedule.jsonl";
  std::ifstream file(path);
  ASSERT_TRUE(file.is_open()) << path;
  int cases = 0;
  int passed = 0;
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty()) continue;
    const nlohmann::json golden = nlohmann::json::parse(line);
    const std::string name = golden.at("name").get<std::string>();
    ++cases;
    std::vector<std::int64_t> lens;
    for (const nlohmann::json& sample : golden.at("samples")) {
      lens.push_back(sample.at(1).get<std::int64_t>());
    }
    const DpBalancedOptions options =
        Options(golden.at("dp_size").get<std::int64_t>(),
                golden.at("cp_size").get<std::int64_t>(),
                golden.at("max_seq_len_per_rank").get<std::int64_t>(),
                OptionalInt(golden.at("max_num_seqs")),
                OptionalInt(golden.at("vpp_group")));
    const absl::StatusOr<Schedule> schedule = ScheduleDpBalanced(lens, options);
    const nlohmann::json& expect = golden.at("expect");
    if (!expect.at("ok").get<bool>()) {
      EXPECT_FALSE(schedule.ok())
          << name << " should fail: " << expect.at("error").get<std::string>();
      if (!schedule.ok()) ++passed;
      continue;
    }
    if (!schedule.ok()) {
      ADD_FAILURE() << name << ": " << schedule.status();
      continue;
    }
    Schedule expected;
    for (const nlohmann::json& microbatch : expect.at("groups")) {
      expected.microbatches.push_back(
          Microbatch{microbatch.get<std::vector<std::vector<SampleId>>>()});
    }
    EXPECT_EQ(*schedule, expected) << name;
    if (*schedule == expected) ++passed;
  }
  EXPECT_EQ(cases, 150);
  EXPECT_EQ(passed, cases);
}

}  // namespace
}  // namespace dcpsched::dp_balanced_test
