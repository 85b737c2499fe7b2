#include "io/schedule_run.h"

#include <set>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "core/compact_schedule.h"
#include "core/types.h"
#include "io/cost_profile_file.h"
#include "gtest/gtest.h"

namespace dcpsched::schedule_run_test {
namespace {

SchedulingProblem SmallProblem() {
  SchedulingProblem problem;
  problem.workload_description = "small";
  problem.samples = {{100, 300}, {101, 50}, {102, 120}, {103, 90}, {104, 200}};
  problem.parameters.dp_size = 2;
  problem.parameters.cp_size = 2;
  problem.parameters.max_seq_len_per_rank = 256;
  return problem;
}

std::set<SampleId> IdsIn(const CompactSchedule& schedule) {
  std::set<SampleId> ids;
  for (const CompactMicrobatch& microbatch : schedule.microbatches) {
    for (const CpGroupIds& group : microbatch.groups) {
      ids.insert(group.ids.begin(), group.ids.end());
    }
  }
  return ids;
}

TEST(SchedulerNameTest, NamesRoundTrip) {
  for (const SchedulerKind scheduler : kAllSchedulers) {
    EXPECT_EQ(ParseSchedulerName(SchedulerName(scheduler)).value(), scheduler);
  }
  EXPECT_EQ(SchedulerName(SchedulerKind::kPackingAware), "packing_aware");
  EXPECT_EQ(SchedulerName(SchedulerKind::kDpBalanced), "dp_balanced");
  EXPECT_EQ(SchedulerName(SchedulerKind::kLegacy), "legacy");
  EXPECT_EQ(SchedulerName(SchedulerKind::kCostAware), "cost_aware");
}

TEST(SchedulerNameTest, UnknownNameListsTheKnownOnes) {
  const absl::Status status = ParseSchedulerName("greedy").status();

  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(),
                                "use packing_aware, dp_balanced, legacy or cost_aware"))
      << status.message();
}

TEST(ValidateRunParametersTest, DefaultsAreValid) {
  EXPECT_TRUE(ValidateRunParameters(RunParameters{}).ok());
}

TEST(ValidateRunParametersTest, OutOfRangeValuesAreInvalidArgument) {
  const auto code = [](auto change) {
    RunParameters parameters;
    change(parameters);
    return ValidateRunParameters(parameters).code();
  };
  constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

  EXPECT_EQ(code([](RunParameters& p) { p.dp_size = 0; }), kInvalid);
  EXPECT_EQ(code([](RunParameters& p) { p.cp_size = 65537; }), kInvalid);
  EXPECT_EQ(code([](RunParameters& p) { p.dp_size = p.cp_size = 257; }),
            kInvalid);
  EXPECT_EQ(code([](RunParameters& p) { p.max_num_seqs = 0; }), kInvalid);
  EXPECT_EQ(code([](RunParameters& p) { p.max_seq_len_per_rank = 0; }),
            kInvalid);
  EXPECT_EQ(code([](RunParameters& p) { p.min_cp_size = 3; }), kInvalid);
  EXPECT_EQ(code([](RunParameters& p) { p.vpp_group = 0; }), kInvalid);
}

TEST(ScheduleRunTest, OptionsCarryTheParameters) {
  RunParameters parameters;
  parameters.dp_size = 3;
  parameters.cp_size = 2;
  parameters.max_seq_len_per_rank = 100;
  parameters.min_cp_size = 2;
  parameters.vpp_group = 4;
  parameters.max_num_seqs = 5;

  const DynamicCpOptions dynamic = ToDynamicCpOptions(parameters);
  const DpBalancedOptions balanced = ToDpBalancedOptions(parameters);

  EXPECT_EQ(dynamic.total_gpus, 6);
  EXPECT_EQ(dynamic.max_seq_len_per_rank, 100);
  EXPECT_EQ(dynamic.min_cp_size, 2);
  EXPECT_EQ(dynamic.vpp_group, 4);
  EXPECT_EQ(balanced.dp_size, 3);
  EXPECT_EQ(balanced.cp_size, 2);
  EXPECT_EQ(balanced.max_num_seqs, 5);
  EXPECT_EQ(balanced.vpp_group, 4);
}

TEST(ScheduleRunTest, DpBalancedPositionsBecomeIds) {
  const SchedulingProblem problem = SmallProblem();

  const ScheduleRun run = RunScheduler(SchedulerKind::kDpBalanced, problem);

  ASSERT_TRUE(run.status.ok()) << run.status;
  EXPECT_EQ(IdsIn(run.schedule), (std::set<SampleId>{100, 101, 102, 103, 104}));
  EXPECT_EQ(run.quality.microbatch_count,
            static_cast<std::int64_t>(run.schedule.microbatches.size()));
  EXPECT_GE(run.elapsed_ms, 0.0);
}

TEST(ScheduleRunTest, WithoutAProfileCostAwareIsLeftOut) {
  const std::vector<ScheduleRun> runs = RunAllSchedulers(SmallProblem());

  ASSERT_EQ(runs.size(), kAllSchedulers.size() - 1);
  for (const ScheduleRun& run : runs) EXPECT_NE(run.scheduler, SchedulerKind::kCostAware);
}

TEST(ScheduleRunTest, CostAwareWithoutAProfileSaysToAddOne) {
  const ScheduleRun run = RunScheduler(SchedulerKind::kCostAware, SmallProblem());

  EXPECT_EQ(run.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(run.status.message(), "--cost-profile"))
      << run.status.message();
}

TEST(ScheduleRunTest, CostAwareSaysWhoseScheduleItKept) {
  SchedulingProblem problem = SmallProblem();
  problem.cost_profile = LoadCostProfile("h200-llama3-8b").value();

  const ScheduleRun run = RunScheduler(SchedulerKind::kCostAware, problem);

  ASSERT_TRUE(run.status.ok()) << run.status;
  EXPECT_TRUE(run.source == "planned" || run.source == "packing_aware") << run.source;
  EXPECT_FALSE(run.source_reason.empty());
  ASSERT_TRUE(run.time.has_value());
}

TEST(ScheduleRunTest, EverySchedulerPlacesEverySample) {
  SchedulingProblem problem = SmallProblem();
  problem.cost_profile = LoadCostProfile("h200-llama3-8b").value();

  const std::vector<ScheduleRun> runs = RunAllSchedulers(problem);

  ASSERT_EQ(runs.size(), kAllSchedulers.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    EXPECT_EQ(runs[i].scheduler, kAllSchedulers[i]);
    ASSERT_TRUE(runs[i].status.ok()) << runs[i].status;
    EXPECT_EQ(IdsIn(runs[i].schedule),
              (std::set<SampleId>{100, 101, 102, 103, 104}));
    EXPECT_GT(runs[i].quality.balance_efficiency, 0.0);
    EXPECT_LE(runs[i].quality.balance_efficiency, 1.0);
  }
}

TEST(ScheduleRunTest, SchedulerErrorIsTheRunsStatus) {
  SchedulingProblem problem = SmallProblem();
  problem.samples.push_back({105, 5000});  // needs 32 ranks of 256 tokens

  const ScheduleRun run = RunScheduler(SchedulerKind::kPackingAware, problem);

  EXPECT_FALSE(run.status.ok());
  EXPECT_TRUE(absl::StrContains(run.status.message(), "5000"))
      << run.status.message();
  EXPECT_TRUE(run.schedule.microbatches.empty());
}

}  // namespace
}  // namespace dcpsched::schedule_run_test
