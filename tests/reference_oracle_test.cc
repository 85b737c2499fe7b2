// Tests of the reference oracle: every golden vector produced by upstream's
// Python (tests/golden/*.jsonl, the specification's "Golden vectors"), then hand-worked
// cases of each rule. The golden files are parsed here with nlohmann-json,
// not through io/, so the oracle is checked against upstream directly.

#include "oracle/reference_oracle.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/types.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_options.h"
#include <nlohmann/json.hpp>

namespace dcpsched::oracle {
namespace {

using ::testing::ElementsAre;
using ::testing::SizeIs;

// ---------------------------------------------------------------------------
// Golden vectors.
// ---------------------------------------------------------------------------

std::vector<nlohmann::json> ReadGoldenFile(const std::string& file) {
  std::ifstream in(std::string(DCPSCHED_GOLDEN_DIR) + "/" + file);
  std::vector<nlohmann::json> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    nlohmann::json parsed = nlohmann::json::parse(line, nullptr, false);
    if (parsed.is_discarded()) {
      ADD_FAILURE() << file << ": unparsable line " << cases.size() + 1;
      continue;
    }
    cases.push_back(std::move(parsed));
  }
  return cases;
}

std::optional<std::int64_t> OptionalInt(const nlohmann::json& value) {
  if (value.is_null()) return std::nullopt;
  return value.get<std::int64_t>();
}

std::vector<Sample> SamplesOf(const nlohmann::json& golden) {
  std::vector<Sample> samples;
  for (const nlohmann::json& pair : golden["samples"]) {
    samples.push_back({pair[0].get<std::int64_t>(), pair[1].get<std::int64_t>()});
  }
  return samples;
}

DynamicCpOptions DynamicCpOptionsOf(const nlohmann::json& golden) {
  DynamicCpOptions options;
  options.total_gpus = golden["total_gpus"].get<std::int64_t>();
  options.max_seq_len_per_rank = golden["max_seq_len_per_rank"].get<std::int64_t>();
  options.min_cp_size = golden["min_cp_size"].get<std::int64_t>();
  options.vpp_group = OptionalInt(golden["vpp_group"]);
  return options;
}

DpBalancedOptions DpBalancedOptionsOf(const nlohmann::json& golden) {
  DpBalancedOptions options;
  options.dp_size = golden["dp_size"].get<std::int64_t>();
  options.cp_size = golden["cp_size"].get<std::int64_t>();
  options.max_seq_len_per_rank = golden["max_seq_len_per_rank"].get<std::int64_t>();
  options.max_num_seqs = OptionalInt(golden["max_num_seqs"]);
  options.vpp_group = OptionalInt(golden["vpp_group"]);
  return options;
}

// True if some dp_balanced sample is longer than mslpr * cp_size (outside
// the specification's limits, whatever upstream then did with it).
bool HasOverlongDpBalancedSample(const nlohmann::json& golden) {
  const DpBalancedOptions options = DpBalancedOptionsOf(golden);
  const std::int64_t limit = options.max_seq_len_per_rank * options.cp_size;
  for (const Sample& sample : SamplesOf(golden)) {
    if (sample.len > limit) return true;
  }
  return false;
}

// True if min_cp_size > G or some sample needs more than G ranks (longer
// than mslpr times the largest power of two <= G). The legacy scheduler
// never checks this; upstream then fails in its fill ("There should be at
// least one group existing").
bool NeedsMoreRanksThanG(const nlohmann::json& golden) {
  const DynamicCpOptions options = DynamicCpOptionsOf(golden);
  if (options.min_cp_size > options.total_gpus) return true;
  const auto widest = static_cast<std::int64_t>(
      std::bit_floor(static_cast<std::uint64_t>(options.total_gpus)));
  for (const Sample& sample : SamplesOf(golden)) {
    if (sample.len > widest * options.max_seq_len_per_rank) return true;
  }
  return false;
}

// The status code the project gives for an upstream failure: inputs outside
// the specification's limits are InvalidArgument, valid inputs the algorithm cannot
// schedule are FailedPrecondition.
absl::StatusCode ExpectedCode(const nlohmann::json& golden) {
  const std::string error = golden["expect"]["error"].get<std::string>();
  const bool outside_limits =
      error.rfind("ValueError: math domain error", 0) == 0 ||
      error.rfind("AssertionError: Sequence length", 0) == 0 ||
      (golden["scheduler"] == "dp_balanced" &&
       HasOverlongDpBalancedSample(golden)) ||
      (golden["scheduler"] != "dp_balanced" && NeedsMoreRanksThanG(golden));
  return outside_limits ? absl::StatusCode::kInvalidArgument
                        : absl::StatusCode::kFailedPrecondition;
}

// Empty when `status` is the rejection `golden` expects, else what differs.
std::string CheckRejected(const nlohmann::json& golden,
                          const absl::Status& status) {
  if (status.ok()) return "expected an error, got a result";
  if (status.code() != ExpectedCode(golden)) {
    return absl::StrCat("wrong error code: ", status.ToString(), " for upstream ",
                        golden["expect"]["error"].get<std::string>());
  }
  return "";
}

std::string CheckStep(const nlohmann::json& golden) {
  const absl::StatusOr<PackedMicrobatch> step =
      ReferencePackingAwareStep(SamplesOf(golden), DynamicCpOptionsOf(golden));
  const nlohmann::json& expect = golden["expect"];
  if (!expect["ok"].get<bool>()) return CheckRejected(golden, step.status());
  if (!step.ok()) return step.status().ToString();
  if (step->rank_lens != expect["micro_batches"].get<std::vector<std::vector<std::int64_t>>>()) {
    return "micro_batches differ";
  }
  if (step->microbatch.rank_ids != expect["sample_ids"].get<RankLists>()) {
    return "sample_ids differ";
  }
  const auto times = expect["exec_times"].get<std::vector<double>>();
  if (times.size() != step->rank_work.size()) return "exec_times size differs";
  for (std::size_t r = 0; r < times.size(); ++r) {
    if (std::bit_cast<std::uint64_t>(times[r]) !=
        std::bit_cast<std::uint64_t>(step->rank_work[r])) {
      return absl::StrCat("exec_times[", r, "] differs: expected ", times[r],
                          " got ", step->rank_work[r]);
    }
  }
  std::vector<Sample> leftovers;
  for (const nlohmann::json& pair : expect["leftovers"]) {
    leftovers.push_back({pair[0].get<std::int64_t>(), pair[1].get<std::int64_t>()});
  }
  if (step->leftovers != leftovers) return "leftovers differ";
  return "";
}

// Upstream's schedule as upstream returns it: the reference oracle's refusal of
// the ones Megatron-LM's runtime cannot run is a property of its own
// (properties/runtime_groups_properties.cc).
std::string CheckSchedule(const nlohmann::json& golden) {
  absl::StatusOr<Schedule> schedule;
  if (golden["scheduler"] == "dp_balanced") {
    std::vector<std::int64_t> lens;
    for (const Sample& sample : SamplesOf(golden)) lens.push_back(sample.len);
    schedule = ReferenceScheduleDpBalanced(lens, DpBalancedOptionsOf(golden));
  } else if (golden["scheduler"] == "legacy") {
    schedule = ReferenceScheduleLegacyAsUpstream(SamplesOf(golden),
                                                 DynamicCpOptionsOf(golden));
  } else {
    schedule = ReferenceScheduleDynamicCpAsUpstream(SamplesOf(golden),
                                                    DynamicCpOptionsOf(golden));
  }
  const nlohmann::json& expect = golden["expect"];
  if (!expect["ok"].get<bool>()) return CheckRejected(golden, schedule.status());
  if (!schedule.ok()) return schedule.status().ToString();
  const auto groups = expect["groups"].get<std::vector<RankLists>>();
  if (groups.size() != schedule->microbatches.size()) {
    return absl::StrCat("expected ", groups.size(), " microbatches, got ",
                        schedule->microbatches.size());
  }
  for (std::size_t m = 0; m < groups.size(); ++m) {
    if (groups[m] != schedule->microbatches[m].rank_ids) {
      return absl::StrCat("microbatch ", m, " differs");
    }
  }
  return "";
}

// Runs every case of one golden file. Returns the number checked.
int CheckGoldenFile(const std::string& file) {
  int checked = 0;
  for (const nlohmann::json& golden : ReadGoldenFile(file)) {
    const std::string failure = golden["kind"] == "step"
                                    ? CheckStep(golden)
                                    : CheckSchedule(golden);
    EXPECT_EQ(failure, "") << file << " " << golden["name"].get<std::string>();
    ++checked;
  }
  return checked;
}

TEST(ReferenceOracleGoldenTest, PackingAwareStep) {
  EXPECT_EQ(CheckGoldenFile("packing_aware_step.jsonl"), 300);
}

TEST(ReferenceOracleGoldenTest, PackingAwareSchedule) {
  EXPECT_EQ(CheckGoldenFile("packing_aware_schedule.jsonl"), 300);
}

TEST(ReferenceOracleGoldenTest, VppAlign) {
  EXPECT_EQ(CheckGoldenFile("vpp_align.jsonl"), 150);
}

TEST(ReferenceOracleGoldenTest, DpBalanced) {
  EXPECT_EQ(CheckGoldenFile("dp_balanced_schedule.jsonl"), 150);
}

TEST(ReferenceOracleGoldenTest, LegacySchedule) {
  EXPECT_EQ(CheckGoldenFile("legacy_schedule.jsonl"), 150);
}

// ---------------------------------------------------------------------------
// Hand-worked rules.
// ---------------------------------------------------------------------------

// The worked example of docs/specification.md: two samples of 50 on G=14, mslpr=100. The second opens its
// own rank; expand-once doubles both groups up to 8 + 4 ranks, cannot widen
// the 4 to 8, so the full-group fallback puts both on all 14 ranks.
TEST(ReferenceStepTest, FullGroupFallbackOnFourteenRanks) {
  const absl::StatusOr<PackedMicrobatch> step =
      ReferencePackingAwareStep({{7, 50}, {9, 50}}, Options(14, 100));
  ASSERT_TRUE(step.ok()) << step.status();
  const double time = 2500.0 / 14.0 + 2500.0 / 14.0;
  for (int r = 0; r < 14; ++r) {
    EXPECT_THAT(step->microbatch.rank_ids[r], ElementsAre(7, 9));
    EXPECT_THAT(step->rank_lens[r], ElementsAre(50, 50));
    EXPECT_EQ(step->rank_work[r], time);
  }
  EXPECT_TRUE(step->leftovers.empty());
}

DynamicCpOptions CappedOptions(std::int64_t total_gpus, std::int64_t mslpr,
                               std::int64_t max_num_seqs) {
  DynamicCpOptions options = Options(total_gpus, mslpr);
  options.max_num_seqs = max_num_seqs;
  return options;
}

// The same example under max_num_seqs = 1: the 9 may not join the 7's full
// group, so it opens rank 1 as before; the fallback then takes only the 7
// and leaves the 9 over.
TEST(ReferenceStepTest, FullGroupFallbackStopsAtTheCap) {
  const absl::StatusOr<PackedMicrobatch> step =
      ReferencePackingAwareStep({{7, 50}, {9, 50}}, CappedOptions(14, 100, 1));
  ASSERT_TRUE(step.ok()) << step.status();
  for (int r = 0; r < 14; ++r) {
    EXPECT_THAT(step->microbatch.rank_ids[r], ElementsAre(7));
    EXPECT_EQ(step->rank_work[r], 2500.0 / 14.0);
  }
  EXPECT_EQ(step->leftovers, (std::vector<Sample>{{9, 50}}));
}

// G=1, mslpr=100: without a cap the two 40s share rank 0
// (TokenBudgetMakesLeftovers); with max_num_seqs = 1 the group is full after
// the first, and no rank is free for a new one: the second is left over,
// and the schedule takes one microbatch per sample.
TEST(ReferenceStepTest, FullGroupTakesNoMoreSamples) {
  const std::vector<Sample> samples = {{0, 40}, {1, 40}, {2, 40}};
  const absl::StatusOr<PackedMicrobatch> step =
      ReferencePackingAwareStep(samples, CappedOptions(1, 100, 1));
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->microbatch.rank_ids, (RankLists{{0}}));
  EXPECT_EQ(step->leftovers, (std::vector<Sample>{{1, 40}, {2, 40}}));
  const absl::StatusOr<Schedule> schedule =
      ReferenceScheduleDynamicCp(samples, CappedOptions(1, 100, 1));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  EXPECT_THAT(schedule->microbatches, SizeIs(samples.size()));
}

// A full group is no add candidate, but opening a new group is unaffected:
// G=2, mslpr=100, samples 10, 3, 3. The first 3 opens rank 1 (max 100 beats
// 109 on the 10's rank), capped or not. Without a cap the second 3 joins it
// (max 100); under max_num_seqs = 1 both groups are full and no rank is
// free, so it is left over.
TEST(ReferenceStepTest, CapLeavesOpeningNewGroupsAlone) {
  const std::vector<Sample> samples = {{0, 10}, {1, 3}, {2, 3}};
  const absl::StatusOr<PackedMicrobatch> uncapped =
      ReferencePackingAwareStep(samples, Options(2, 100));
  const absl::StatusOr<PackedMicrobatch> capped =
      ReferencePackingAwareStep(samples, CappedOptions(2, 100, 1));
  ASSERT_TRUE(uncapped.ok()) << uncapped.status();
  ASSERT_TRUE(capped.ok()) << capped.status();
  EXPECT_EQ(uncapped->microbatch.rank_ids, (RankLists{{0}, {1, 2}}));
  EXPECT_EQ(capped->microbatch.rank_ids, (RankLists{{0}, {1}}));
  EXPECT_EQ(capped->leftovers, (std::vector<Sample>{{2, 3}}));
}

// Every golden step that succeeds, rerun under a cap: a cap of at least the
// number of samples changes nothing, bit for bit; a cap of 1 leaves at most
// one sample on each rank and places at least one.
TEST(ReferenceStepTest, GoldenStepsUnderACap) {
  int checked = 0;
  for (const nlohmann::json& golden : ReadGoldenFile("packing_aware_step.jsonl")) {
    if (!golden["expect"]["ok"].get<bool>()) continue;
    const std::vector<Sample> samples = SamplesOf(golden);
    const DynamicCpOptions options = DynamicCpOptionsOf(golden);
    const absl::StatusOr<PackedMicrobatch> uncapped =
        ReferencePackingAwareStep(samples, options);
    ASSERT_TRUE(uncapped.ok()) << golden["name"] << ": " << uncapped.status();
    DynamicCpOptions loose = options;
    loose.max_num_seqs = std::max<std::int64_t>(1, samples.size());
    const absl::StatusOr<PackedMicrobatch> loosely_capped =
        ReferencePackingAwareStep(samples, loose);
    ASSERT_TRUE(loosely_capped.ok()) << golden["name"] << ": " << loosely_capped.status();
    EXPECT_EQ(*loosely_capped, *uncapped) << golden["name"];
    DynamicCpOptions one = options;
    one.max_num_seqs = 1;
    const absl::StatusOr<PackedMicrobatch> capped = ReferencePackingAwareStep(samples, one);
    if (!capped.ok()) {
      EXPECT_EQ(capped.status().code(), absl::StatusCode::kFailedPrecondition) << golden["name"];
      continue;
    }
    for (const std::vector<SampleId>& ids : capped->microbatch.rank_ids) {
      EXPECT_LE(ids.size(), 1u) << golden["name"];
    }
    if (!samples.empty()) {
      EXPECT_LT(capped->leftovers.size(), samples.size()) << golden["name"];
    }
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

// G=5, mslpr=1: groups {0,1} and {2,3} after two expansions; widening {0,1}
// to 4 would move rank 3 to rank 5 (upstream: IndexError).
TEST(ReferenceStepTest, ExpandPastLastRankIsFailedPrecondition) {
  const absl::StatusOr<PackedMicrobatch> step =
      ReferencePackingAwareStep({{0, 1}, {1, 1}}, Options(5, 1));
  EXPECT_EQ(step.status().code(), absl::StatusCode::kFailedPrecondition);
}

// Power-of-two G: the lone sample's group is doubled until it covers G.
TEST(ReferenceStepTest, SingleSampleIsWidenedToAllRanks) {
  const absl::StatusOr<PackedMicrobatch> step =
      ReferencePackingAwareStep({{3, 8}}, Options(4, 10));
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->microbatch.rank_ids, (RankLists{{3}, {3}, {3}, {3}}));
  EXPECT_THAT(step->rank_work, ElementsAre(16.0, 16.0, 16.0, 16.0));
}

// Sorting is by length, longest first, stable: equal lengths keep input
// order, and the leftover list keeps that order too. G=1, mslpr=10: the 6
// fills rank 0 with the 4 (cap 6*10*1.05 = 63, work 36+16 = 52); the 5 and
// the 3 do not fit the token budget.
TEST(ReferenceStepTest, LeftoversAreSortedStably) {
  const absl::StatusOr<PackedMicrobatch> step = ReferencePackingAwareStep(
      {{1, 3}, {2, 5}, {3, 6}, {4, 4}, {5, 3}}, Options(1, 10));
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->microbatch.rank_ids, (RankLists{{3, 4}}));
  EXPECT_THAT(step->rank_work, ElementsAre(52.0));
  EXPECT_EQ(step->leftovers, (std::vector<Sample>{{2, 5}, {1, 3}, {5, 3}}));
}

// The token budget: G=1, mslpr=100. Two 40s fit (80 tokens), a third would
// make 120: leftover. (The work cap tall*mslpr*1.05 never binds in this
// step: a rank's work is at most tall * its tokens <= tall * mslpr.)
TEST(ReferenceStepTest, TokenBudgetMakesLeftovers) {
  const absl::StatusOr<PackedMicrobatch> step = ReferencePackingAwareStep(
      {{0, 40}, {1, 40}, {2, 40}}, Options(1, 100));
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->microbatch.rank_ids, (RankLists{{0, 1}}));
  EXPECT_THAT(step->rank_work, ElementsAre(3200.0));
  EXPECT_EQ(step->leftovers, (std::vector<Sample>{{2, 40}}));
}

// A larger CP group wins when it lowers the busiest rank. G=2, mslpr=100,
// samples 80 and 60: cap = 8400. The 80 takes rank 0 (6400). The 60 at c=1:
// add is over the token budget, new on rank 1 gives max 6400; c=2 needs 2
// free ranks: only 1. So rank 1. Then no empty rank.
TEST(ReferenceStepTest, NewGroupOnTheFreeRank) {
  const absl::StatusOr<PackedMicrobatch> step =
      ReferencePackingAwareStep({{0, 80}, {1, 60}}, Options(2, 100));
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->microbatch.rank_ids, (RankLists{{0}, {1}}));
  EXPECT_THAT(step->rank_work, ElementsAre(6400.0, 3600.0));
}

TEST(ReferenceStepTest, NoSamplesGivesEmptyRanks) {
  const absl::StatusOr<PackedMicrobatch> step =
      ReferencePackingAwareStep({}, Options(3, 10));
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->microbatch.rank_ids, (RankLists{{}, {}, {}}));
  EXPECT_THAT(step->rank_work, ElementsAre(0.0, 0.0, 0.0));
  const absl::StatusOr<Schedule> schedule =
      ReferenceScheduleDynamicCp({}, Options(3, 10));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  EXPECT_TRUE(schedule->microbatches.empty());
}

TEST(ReferenceStepTest, RejectsInputOutsideTheLimits) {
  const auto code = [](std::vector<Sample> samples, DynamicCpOptions options) {
    return ReferencePackingAwareStep(samples, options).status().code();
  };
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  EXPECT_EQ(code({{0, 5}, {0, 6}}, Options(2, 10)), kInvalid);  // duplicate id
  EXPECT_EQ(code({{0, 0}}, Options(2, 10)), kInvalid);           // len 0
  EXPECT_EQ(code({{0, -3}}, Options(2, 10)), kInvalid);          // negative
  EXPECT_EQ(code({{0, (std::int64_t{1} << 26) + 1}}, Options(2, 1 << 30)),
            kInvalid);                                           // len > 2^26
  EXPECT_EQ(code({{0, 21}}, Options(2, 10)), kInvalid);  // needs 4 > G = 2
  EXPECT_EQ(code({{0, 5}}, Options(0, 10)), kInvalid);
  EXPECT_EQ(code({{0, 5}}, Options(65537, 10)), kInvalid);
  EXPECT_EQ(code({{0, 5}}, Options(2, 0)), kInvalid);
  EXPECT_EQ(code({{0, 5}}, Options(2, std::int64_t{1} << 31)), kInvalid);
  EXPECT_EQ(code({{0, 5}}, Options(4, 10, 3)), kInvalid);  // not a power of 2
  EXPECT_EQ(code({{0, 5}}, Options(2, 10, 4)), kInvalid);  // min_cp > G
  DynamicCpOptions zero_vpp = Options(2, 10);
  zero_vpp.vpp_group = 0;
  EXPECT_EQ(code({{0, 5}}, zero_vpp), kInvalid);
  EXPECT_EQ(code({{0, 5}}, CappedOptions(2, 10, 0)), kInvalid);
  EXPECT_EQ(code({{0, 5}}, CappedOptions(2, 10, -1)), kInvalid);
  EXPECT_EQ(code({{0, 5}}, CappedOptions(2, 10, std::numeric_limits<std::int64_t>::min())),
            kInvalid);
  EXPECT_EQ(code({{0, 5}}, CappedOptions(2, 10, 1)), absl::StatusCode::kOk);
  EXPECT_EQ(ReferencePackingAwarePlacement({{0, 5}}, CappedOptions(2, 10, 0)).status().code(),
            kInvalid);
  EXPECT_EQ(ReferenceScheduleDynamicCp({{0, 5}}, CappedOptions(2, 10, 0)).status().code(),
            kInvalid);
  // min_cp_size raises cp_min: a sample of 1 needing 4 ranks on G = 4 is fine.
  EXPECT_EQ(code({{0, 1}}, Options(4, 10, 4)), absl::StatusCode::kOk);
}

// The schedule runs the step on the leftovers until every sample is placed.
TEST(ReferenceScheduleTest, StepsUntilEverySampleIsPlaced) {
  const absl::StatusOr<Schedule> schedule = ReferenceScheduleDynamicCp(
      {{0, 40}, {1, 40}, {2, 40}}, Options(1, 100));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_THAT(schedule->microbatches, SizeIs(2));
  EXPECT_EQ(schedule->microbatches[0].rank_ids, (RankLists{{0, 1}}));
  EXPECT_EQ(schedule->microbatches[1].rank_ids, (RankLists{{2}}));
}

// Upstream hangs here: the one microbatch [0],[0],[1] splits into [0],[0],_
// whose only run (2 ranks) cannot be doubled into 1 empty rank.
TEST(ReferenceScheduleTest, VppHangIsFailedPrecondition) {
  DynamicCpOptions options = Options(3, 1);
  options.vpp_group = 2;
  const absl::StatusOr<Schedule> schedule =
      ReferenceScheduleDynamicCp({{0, 1}, {1, 1}}, options);
  EXPECT_EQ(schedule.status().code(), absl::StatusCode::kFailedPrecondition);
}

// ---------------------------------------------------------------------------
// VPP alignment.
// ---------------------------------------------------------------------------

Schedule OneMicrobatch(RankLists ranks) {
  return Schedule{{Microbatch{std::move(ranks)}}};
}

// Runs 2,1,1 on G=4: cut at 2. [a a _ _] doubles its leftmost run; [b c _ _]
// doubles [b] (the leftmost run, no larger run to its left), then [c] (the
// run right of a larger one).
TEST(ReferenceAlignTest, SplitsAtTheMiddleAndWidensBothHalves) {
  const absl::StatusOr<Schedule> aligned =
      ReferenceAlignToVppGroup(OneMicrobatch({{1}, {1}, {2}, {3}}), 2);
  ASSERT_TRUE(aligned.ok()) << aligned.status();
  ASSERT_THAT(aligned->microbatches, SizeIs(2));
  EXPECT_EQ(aligned->microbatches[0].rank_ids, (RankLists{{2}, {2}, {3}, {3}}));
  EXPECT_EQ(aligned->microbatches[1].rank_ids, (RankLists{{1}, {1}, {1}, {1}}));
}

TEST(ReferenceAlignTest, AlreadyAMultipleIsUnchanged) {
  const Schedule schedule = OneMicrobatch({{1}, {2}});
  const absl::StatusOr<Schedule> aligned = ReferenceAlignToVppGroup(schedule, 1);
  ASSERT_TRUE(aligned.ok()) << aligned.status();
  EXPECT_EQ(*aligned, schedule);
}

TEST(ReferenceAlignTest, NothingToSplitIsFailedPrecondition) {
  const absl::StatusOr<Schedule> aligned =
      ReferenceAlignToVppGroup(OneMicrobatch({{1, 2}, {1, 2}}), 2);
  EXPECT_EQ(aligned.status().code(), absl::StatusCode::kFailedPrecondition);
}

// Runs 1,2,1: the scheduler never builds this, so it is a malformed input --
// but only when alignment actually splits that microbatch, like upstream.
TEST(ReferenceAlignTest, IncreasingRunsAreInvalidWhenSplit) {
  const Schedule schedule = OneMicrobatch({{1}, {2}, {2}, {3}});
  EXPECT_EQ(ReferenceAlignToVppGroup(schedule, 2).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ReferenceAlignToVppGroup(schedule, 1).ok());
  Schedule two = schedule;
  two.microbatches.push_back(Microbatch{{{4}, {4}, {5}, {6}}});
  const absl::StatusOr<Schedule> aligned = ReferenceAlignToVppGroup(two, 3);
  ASSERT_TRUE(aligned.ok()) << aligned.status();  // only the last is split
  EXPECT_THAT(aligned->microbatches, SizeIs(3));
}

// Golden case vpp-0071's microbatch, G=7: runs 2,2,2,1, cut at 4. The left
// half [a a b b _ _ _] doubles its leftmost run (2 <= 3 empty ranks) to
// [a a a a b b _]; then the run [b b] right of the larger [a a a a] must
// double into 1 empty rank (upstream makes the microbatch 8 ranks wide).
TEST(ReferenceAlignTest, WideningPastGIsFailedPrecondition) {
  const absl::StatusOr<Schedule> aligned = ReferenceAlignToVppGroup(
      OneMicrobatch({{1, 3}, {1, 3}, {2}, {2}, {4}, {4}, {0}}), 2);
  EXPECT_EQ(aligned.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(ReferenceAlignTest, RejectsMalformedSchedules) {
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  EXPECT_EQ(ReferenceAlignToVppGroup(OneMicrobatch({{1}, {}}), 2).status().code(),
            kInvalid);
  EXPECT_EQ(ReferenceAlignToVppGroup(OneMicrobatch({}), 2).status().code(),
            kInvalid);
  Schedule ragged = OneMicrobatch({{1}, {2}});
  ragged.microbatches.push_back(Microbatch{{{3}}});
  EXPECT_EQ(ReferenceAlignToVppGroup(ragged, 2).status().code(), kInvalid);
  EXPECT_EQ(ReferenceAlignToVppGroup(OneMicrobatch({{1}}), 0).status().code(),
            kInvalid);
}

// ---------------------------------------------------------------------------
// dp_balanced.
// ---------------------------------------------------------------------------

DpBalancedOptions DpOptions(std::int64_t dp, std::int64_t cp,
                            std::int64_t mslpr) {
  DpBalancedOptions options;
  options.dp_size = dp;
  options.cp_size = cp;
  options.max_seq_len_per_rank = mslpr;
  return options;
}

TEST(ReferenceDpBalancedTest, PacksInOrderAndSpreadsOverReplicas) {
  // mslpr * cp = 20: [0 1] (15), [2 3] (20), [4] -> 3 sequences; dp = 2 needs
  // 4: the last with more than one, [2 3], gives up position 3.
  const absl::StatusOr<Schedule> schedule =
      ReferenceScheduleDpBalanced({5, 10, 12, 8, 20}, DpOptions(2, 2, 10));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_THAT(schedule->microbatches, SizeIs(2));
  EXPECT_EQ(schedule->microbatches[0].rank_ids,
            (RankLists{{0, 1}, {0, 1}, {2}, {2}}));
  EXPECT_EQ(schedule->microbatches[1].rank_ids, (RankLists{{4}, {4}, {3}, {3}}));
}

TEST(ReferenceDpBalancedTest, MaxNumSeqsClosesASequence) {
  DpBalancedOptions options = DpOptions(1, 1, 100);
  options.max_num_seqs = 2;
  const absl::StatusOr<Schedule> schedule =
      ReferenceScheduleDpBalanced({1, 1, 1}, options);
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_THAT(schedule->microbatches, SizeIs(2));
  EXPECT_EQ(schedule->microbatches[0].rank_ids, (RankLists{{0, 1}}));
  EXPECT_EQ(schedule->microbatches[1].rank_ids, (RankLists{{2}}));
}

// The cursor may split sequence 0, and pops from it repeatedly.
TEST(ReferenceDpBalancedTest, MovesFromTheFirstSequence) {
  const absl::StatusOr<Schedule> schedule =
      ReferenceScheduleDpBalanced({1, 1, 1}, DpOptions(3, 1, 10));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_THAT(schedule->microbatches, SizeIs(1));
  EXPECT_EQ(schedule->microbatches[0].rank_ids, (RankLists{{0}, {2}, {1}}));
}

TEST(ReferenceDpBalancedTest, Errors) {
  EXPECT_EQ(ReferenceScheduleDpBalanced({5}, DpOptions(2, 1, 10)).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReferenceScheduleDpBalanced({11}, DpOptions(1, 1, 10)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReferenceScheduleDpBalanced({0}, DpOptions(1, 1, 10)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReferenceScheduleDpBalanced({1}, DpOptions(0, 1, 10)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      ReferenceScheduleDpBalanced({1}, DpOptions(256, 512, 10)).status().code(),
      absl::StatusCode::kInvalidArgument);
  DpBalancedOptions huge_vpp = DpOptions(3, 1, 10);
  huge_vpp.vpp_group = std::int64_t{1} << 62;
  EXPECT_EQ(ReferenceScheduleDpBalanced({1, 1}, huge_vpp).status().code(),
            absl::StatusCode::kFailedPrecondition);
  const absl::StatusOr<Schedule> empty =
      ReferenceScheduleDpBalanced({}, huge_vpp);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->microbatches.empty());
}

// ---------------------------------------------------------------------------
// Legacy bucket scheduler. Sample ids are positions in the sorted order.
// ---------------------------------------------------------------------------

// Upstream's schedules (AsUpstream): these rules are pinned at G that are not
// powers of two, where upstream's groups are not all the runtime's.
// G=5, mslpr=100; cp_min 4, 2, 1, 1, 1; works 40000, 20000, 100 x 3, total
// 60300 over k=3 sizes: target 20100, slack bound 22110. Buckets: [0] (the
// 200 would pass the bound: 60000), then [1 2 3] until the count rule
// closes at i=4 (n-i = 1 <= k - 2*closed = 3-2), so 4 gets its own bucket.
// 0 takes ranks 0-3; 1 needs 2 ranks, has no group of its size and 1 free
// rank: its whole bucket waits, and 4's bucket goes to rank 4. That emptied
// bucket stays behind the waiting front one (only front buckets are
// dropped) and is skipped. Next microbatch: 1 on ranks 0-1, 2 and 3 one rank
// each; the fill doubles the first one-rank group (2) and moves 3 to rank 4.
TEST(ReferenceLegacyTest, CountRuleGivesTheLastSampleItsOwnBucket) {
  const absl::StatusOr<Schedule> schedule = ReferenceScheduleLegacyAsUpstream(
      {{0, 400}, {1, 200}, {2, 10}, {3, 10}, {4, 10}}, Options(5, 100));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_THAT(schedule->microbatches, SizeIs(2));
  EXPECT_EQ(schedule->microbatches[0].rank_ids,
            (RankLists{{0}, {0}, {0}, {0}, {4}}));
  EXPECT_EQ(schedule->microbatches[1].rank_ids,
            (RankLists{{1}, {1}, {2}, {2}, {3}}));
}

// G=5, mslpr=10; lengths 32, 20, 16, 10, 6 (cp_min 4, 2, 2, 1, 1; works 256,
// 200, 128, 100, 36; total 720, k=3, target 240). The third bucket reaches
// 128 + 100 + 36 = 264, exactly 240 * 1.1 in double: it stays open (a
// bucket closes only when it would pass the bound), so 4 waits behind 2,
// which, like 1, finds no group of 2 ranks and one free rank. The first
// microbatch is 0 widened to all five ranks.
TEST(ReferenceLegacyTest, BucketAtExactlyTheSlackBoundStaysOpen) {
  const absl::StatusOr<Schedule> schedule = ReferenceScheduleLegacy(
      {{0, 32}, {1, 20}, {2, 16}, {3, 10}, {4, 6}}, Options(5, 10));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_THAT(schedule->microbatches, SizeIs(3));
  EXPECT_EQ(schedule->microbatches[0].rank_ids,
            (RankLists{{0}, {0}, {0}, {0}, {0}}));
  EXPECT_EQ(schedule->microbatches[1].rank_ids,
            (RankLists{{1}, {1}, {2}, {2}, {3}}));
  EXPECT_EQ(schedule->microbatches[2].rank_ids,
            (RankLists{{4}, {4}, {4}, {4}, {4}}));
}

// G=3, mslpr=100: 0 (101 tokens, 2 ranks, 5100.5 each), then 1 (72, one
// rank, 5184): a smaller CP size than the first, samples remain, and
// 5184 - 5100.5 <= 0.05 * 5184, so the step stops; 2 would have fit on
// rank 2's token budget.
TEST(ReferenceLegacyTest, BalancedRanksStopTheStep) {
  const absl::StatusOr<Schedule> schedule =
      ReferenceScheduleLegacyAsUpstream({{0, 101}, {1, 72}, {2, 5}}, Options(3, 100));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_THAT(schedule->microbatches, SizeIs(2));
  EXPECT_EQ(schedule->microbatches[0].rank_ids, (RankLists{{0}, {0}, {1}}));
  EXPECT_EQ(schedule->microbatches[1].rank_ids, (RankLists{{2}, {2}, {2}}));
}

// k counts only the CP sizes the samples need. G=10, mslpr=10, min_cp 2:
// lengths 60, 40, 36, 18, 15 need 8, 4, 4, 2, 2 ranks (k = 3), works 450,
// 400, 324, 162, 112.5: bound 1448.5 / 3 * 1.1 = 531.1, buckets [0] [1]
// [2 3] [4]. After 0, 1 and 2 need 4 of the 2 free ranks; 4 takes them.
TEST(ReferenceLegacyTest, BucketsCountOnlyTheCpSizesTheSamplesNeed) {
  const absl::StatusOr<Schedule> schedule = ReferenceScheduleLegacyAsUpstream(
      {{0, 60}, {1, 40}, {2, 36}, {3, 18}, {4, 15}}, Options(10, 10, 2));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_THAT(schedule->microbatches, SizeIs(2));
  EXPECT_EQ(schedule->microbatches[0].rank_ids,
            (RankLists{{0}, {0}, {0}, {0}, {0}, {0}, {0}, {0}, {4}, {4}}));
  EXPECT_EQ(schedule->microbatches[1].rank_ids,
            (RankLists{{1}, {1}, {1}, {1}, {2}, {2}, {2}, {2}, {3}, {3}}));
}

// G=3, mslpr=363: 0 (380) on ranks 0-1 at 72200; 1, 2, 3 on rank 2 at
// 50625 + 17956 + 9 = 68590; 72200 - 68590 = 3610 = 0.05 * 72200 exactly,
// which counts as balanced: 4 waits though it would fit.
TEST(ReferenceLegacyTest, RanksExactlyAtTheBalanceToleranceStopTheStep) {
  const absl::StatusOr<Schedule> schedule = ReferenceScheduleLegacyAsUpstream(
      {{0, 380}, {1, 225}, {2, 134}, {3, 3}, {4, 1}}, Options(3, 363));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_THAT(schedule->microbatches, SizeIs(2));
  EXPECT_EQ(schedule->microbatches[0].rank_ids, (RankLists{{0}, {0}, {1, 2, 3}}));
  EXPECT_EQ(schedule->microbatches[1].rank_ids, (RankLists{{4}, {4}, {4}}));
}

// G=2, mslpr=100, one CP size: buckets [0 1 2] and [3] (the count rule).
// 0 and 1 take a rank each; 2 (50 tokens) fits neither (100 and 60 packed)
// and no rank is free, so the whole step stops, although 3 (10 tokens) in
// the next bucket would fit on rank 1.
TEST(ReferenceLegacyTest, HeadThatFitsNoGroupStopsTheWholeStep) {
  const absl::StatusOr<Schedule> schedule = ReferenceScheduleLegacy(
      {{0, 100}, {1, 60}, {2, 50}, {3, 10}}, Options(2, 100));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_THAT(schedule->microbatches, SizeIs(2));
  EXPECT_EQ(schedule->microbatches[0].rank_ids, (RankLists{{0}, {1}}));
  EXPECT_EQ(schedule->microbatches[1].rank_ids, (RankLists{{2}, {3}}));
}

// G=5, mslpr=100: 0 on ranks 0-1, 1 and 2 one rank each, rank 4 empty. The
// fill doubles the first group of the smallest size (1's), not the last,
// and moves 2 to rank 4.
TEST(ReferenceLegacyTest, FillDoublesTheFirstSmallestGroup) {
  const absl::StatusOr<Schedule> schedule =
      ReferenceScheduleLegacy({{0, 150}, {1, 50}, {2, 40}}, Options(5, 100));
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ASSERT_THAT(schedule->microbatches, SizeIs(1));
  EXPECT_EQ(schedule->microbatches[0].rank_ids,
            (RankLists{{0}, {0}, {1}, {1}, {2}}));
}

// G=7: three groups of 2 leave rank 6 empty; doubling the first would move
// rank 5 to rank 7 (upstream: IndexError).
TEST(ReferenceLegacyTest, FillPastLastRankIsFailedPrecondition) {
  const absl::StatusOr<Schedule> schedule =
      ReferenceScheduleLegacy({{0, 2}, {1, 2}, {2, 2}}, Options(7, 1));
  EXPECT_EQ(schedule.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(ReferenceLegacyTest, NoSamplesAndInvalidInput) {
  const absl::StatusOr<Schedule> empty = ReferenceScheduleLegacy({}, Options(4, 10));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->microbatches.empty());
  // 401 tokens need 8 ranks of 100 > G = 2.
  EXPECT_EQ(ReferenceScheduleLegacy({{0, 10}, {1, 401}}, Options(2, 100))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

// Upstream's legacy step has no cap: any max_num_seqs is refused, even one
// that would change nothing.
TEST(ReferenceLegacyTest, RefusesASequenceCap) {
  EXPECT_TRUE(ReferenceScheduleLegacy({{0, 2}, {1, 2}}, Options(2, 10)).ok());
  DynamicCpOptions capped = Options(2, 10);
  capped.max_num_seqs = 100;
  EXPECT_EQ(ReferenceScheduleLegacy({{0, 2}, {1, 2}}, capped).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------------------
// Scale: the oracle is slow by design but must handle the sizes docs/specification.md names.
// ---------------------------------------------------------------------------

TEST(ReferenceScaleTest, WideAndLong) {
  const absl::StatusOr<Schedule> wide = ReferenceScheduleDynamicCp(
      {{0, 100000}, {1, 70000}, {2, 3000}, {3, 5}}, Options(65536, 8));
  ASSERT_TRUE(wide.ok()) << wide.status();
  std::vector<Sample> samples;
  for (std::int64_t i = 0; i < 3000; ++i) {
    samples.push_back({i, 128 + (i * 7919) % 16000});
  }
  const absl::StatusOr<Schedule> long_batch =
      ReferenceScheduleDynamicCp(samples, Options(512, 4096));
  ASSERT_TRUE(long_batch.ok()) << long_batch.status();
}

}  // namespace
}  // namespace dcpsched::oracle
