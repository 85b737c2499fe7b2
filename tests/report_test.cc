#include "io/report.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "core/compact_schedule.h"
#include "core/cost_profile.h"
#include "core/types.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/schedule_run.h"

namespace dcpsched::report_test {
namespace {

// Sample 0 (8 tokens) split over ranks 0-1; samples 1 and 2 (2 tokens)
// alone on ranks 2 and 3. G = 4, max_seq_len_per_rank = 4.
SchedulingProblem TinyProblem() {
  SchedulingProblem problem;
  problem.workload_description = "hand-made batch";
  problem.samples = {{0, 8}, {1, 2}, {2, 2}};
  problem.parameters.dp_size = 1;
  problem.parameters.cp_size = 4;
  problem.parameters.max_seq_len_per_rank = 4;
  return problem;
}

ScheduleRun TinyRun(const SchedulingProblem& problem) {
  const Schedule schedule{
      .microbatches = {Microbatch{.rank_ids = {{0}, {0}, {1}, {2}}}}};
  ScheduleRun run = MeasureRun(SchedulerKind::kPackingAware, problem,
                               CompactFromRanks(schedule));
  run.elapsed_ms = 0.25;
  return run;
}

ScheduleRun FailedRun() {
  ScheduleRun run;
  run.scheduler = SchedulerKind::kLegacy;
  run.status = absl::FailedPreconditionError("no group to widen");
  return run;
}

ReportOptions WithoutTime() {
  ReportOptions options;
  options.show_time = false;
  return options;
}

TEST(ReportTest, TinyScheduleReportHasEveryFigure) {
  const SchedulingProblem problem = TinyProblem();
  const ScheduleRun run = TinyRun(problem);
  const std::vector<ScheduleRun> comparison = {run, FailedRun()};

  const std::string report =
      FormatReport(problem, run, comparison, WithoutTime());

  // Work: 8*8/2 = 32 on ranks 0-1, 2*2/1 = 4 on ranks 2 and 3. Ideal work
  // (64 + 4 + 4) / 4 = 18, so efficiency 18 / 32 = 0.5625. Lower bound
  // ceil(12 / (4 * 4)) = 1.
  EXPECT_EQ(report,
            "dcpsched schedule report\n"
            "workload   3 samples, 12 tokens, len 2..8, mean 4.0\n"
            "           hand-made batch\n"
            "topology   G = 4 ranks (dp 1 x cp 4)\n"
            "limits     max_seq_len_per_rank 4, min_cp 1, vpp none\n"
            "\n"
            "packing_aware schedule: 1 microbatch\n"
            "\n"
            "microbatch 0  (3 CP groups, max work 32, min work 4)\n"
            "  ranks 0-1  cp=2   ids [0]  tokens/rank 4.0  work/rank 32\n"
            "  rank 2     cp=1   ids [1]  tokens/rank 2.0  work/rank 4\n"
            "  rank 3     cp=1   ids [2]  tokens/rank 2.0  work/rank 4\n"
            "  tokens per rank: 4.0 4.0 2.0 2.0\n"
            "  work per rank:   32 32 4 4\n"
            "\n"
            "balance efficiency  0.5625  (ideal work / critical-path work; "
            "1.0 is the bound)\n"
            "microbatches        1  (lower bound 1)\n"
            "critical-path work  32\n"
            "\n"
            "comparison on the same workload\n"
            "scheduler       efficiency  microbatches  lower bound  "
            "critical-path work\n"
            "packing_aware       0.5625             1            1  "
            "                32\n"
            "legacy          error: no group to widen\n");
}

TEST(ReportTest, ComparisonTableShowsTimeInMilliseconds) {
  const SchedulingProblem problem = TinyProblem();
  const std::vector<ScheduleRun> runs = {TinyRun(problem)};

  const std::string table = FormatComparisonTable(runs);

  EXPECT_TRUE(absl::StrContains(table, "time ms")) << table;
  EXPECT_TRUE(absl::StrContains(table, "0.250")) << table;
}

TEST(ReportTest, FailedRunDetailShowsTheError) {
  EXPECT_EQ(FormatRunDetail(TinyProblem(), FailedRun()),
            "\nlegacy failed: no group to widen\n");
}

TEST(ReportTest, HeaderSaysWhenCpSizeIsImplied) {
  SchedulingProblem problem = TinyProblem();
  problem.parameters.dp_size = 4;
  problem.parameters.cp_size = 1;
  problem.parameters.cp_size_implied = true;
  problem.parameters.vpp_group = 2;

  const std::string header = FormatReportHeader(problem);

  EXPECT_TRUE(absl::StrContains(
      header, "G = 4 ranks (only G given: dp_balanced runs as dp 4 x cp 1)"))
      << header;
  EXPECT_TRUE(absl::StrContains(header, "vpp 2")) << header;
}

TEST(ReportTest, LargeTopologiesAreSummarised) {
  // G = 32 > max_listed_ranks: per-rank figures become min / mean / max,
  // and only the first 16 of the 32 one-rank groups are listed.
  SchedulingProblem problem;
  problem.workload_description = "wide";
  problem.parameters.dp_size = 32;
  problem.parameters.cp_size = 1;
  problem.parameters.max_seq_len_per_rank = 64;
  Microbatch microbatch;
  for (SampleId id = 0; id < 32; ++id) {
    problem.samples.push_back({id, id < 16 ? 2 : 4});
    microbatch.rank_ids.push_back({id});
  }
  const ScheduleRun run =
      MeasureRun(SchedulerKind::kPackingAware, problem,
                 CompactFromRanks(Schedule{.microbatches = {microbatch}}));

  ReportOptions options;
  options.max_listed_groups = 16;

  const std::string detail = FormatRunDetail(problem, run, options);

  EXPECT_TRUE(absl::StrContains(detail, "rank 15 ")) << detail;
  EXPECT_FALSE(absl::StrContains(detail, "rank 16 ")) << detail;
  EXPECT_TRUE(absl::StrContains(detail, "  ... 16 more CP groups\n")) << detail;
  EXPECT_TRUE(
      absl::StrContains(detail, "tokens per rank: min 2.0  mean 3.0  max 4.0"))
      << detail;
  EXPECT_TRUE(
      absl::StrContains(detail, "work per rank:   min 4  mean 10  max 16"))
      << detail;
}

TEST(ReportTest, LongSchedulesAndLongIdListsAreCut) {
  SchedulingProblem problem;
  problem.workload_description = "long";
  problem.parameters.dp_size = 1;
  problem.parameters.cp_size = 1;
  problem.parameters.max_seq_len_per_rank = 100;
  Schedule schedule;
  Microbatch crowded;
  crowded.rank_ids.resize(1);
  for (SampleId id = 0; id < 20; ++id) {
    problem.samples.push_back({id, 1});
    crowded.rank_ids[0].push_back(id);
  }
  schedule.microbatches.push_back(crowded);
  for (SampleId id = 20; id < 25; ++id) {
    problem.samples.push_back({id, 1});
    schedule.microbatches.push_back(Microbatch{.rank_ids = {{id}}});
  }
  const ScheduleRun run = MeasureRun(SchedulerKind::kPackingAware, problem,
                                     CompactFromRanks(schedule));
  ReportOptions options;
  options.max_microbatches = 2;
  options.max_listed_ids = 3;

  const std::string detail = FormatRunDetail(problem, run, options);

  EXPECT_TRUE(absl::StrContains(detail, "ids [0 1 2 ... +17 more]")) << detail;
  EXPECT_TRUE(absl::StrContains(detail, "microbatch 1 ")) << detail;
  EXPECT_FALSE(absl::StrContains(detail, "microbatch 2 ")) << detail;
  EXPECT_TRUE(absl::StrContains(detail, "... 4 more microbatches")) << detail;
}

}  // namespace
}  // namespace dcpsched::report_test

namespace dcpsched::report_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Attention 1 ms x L^2 (causal) and 2 ms x L^2 (full), the rest 1 ms per
// token. On TinyProblem: ranks 0-1 take 4 tokens (4 ms) + 3 full(2) + 2
// causal(2) (24 + 8 ms) = 36 ms, ranks 2 and 3 take 2 + 4 = 6 ms; the bound
// is (12 tokens + 64 + 4 + 4 ms) / 4 ranks = 21 ms.
CostProfile MillisecondProfile() {
  CostProfile profile;
  profile.name = "millisecond";
  profile.description = "a test profile";
  profile.causal_attention = {{1}, {1e-3}};
  profile.full_attention = {{1}, {2e-3}};
  profile.non_attention = {{1}, {1e-3}};
  return profile;
}

TEST(ReportTest, WithACostProfileReportsGpuTime) {
  SchedulingProblem problem = TinyProblem();
  problem.cost_profile = MillisecondProfile();
  const ScheduleRun run = TinyRun(problem);
  ASSERT_TRUE(run.time.has_value());
  const std::string report = FormatReport(problem, run, {run}, WithoutTime());
  EXPECT_THAT(report, HasSubstr("cost model millisecond: a test profile\n"));
  EXPECT_THAT(report, HasSubstr("compute only: the measured layer times; "
                                "communication is not modelled"));
  EXPECT_THAT(report, HasSubstr("  ms per rank:     36.000 36.000 6.000 6.000\n"));
  EXPECT_THAT(report, HasSubstr("runtime    dev runtime, no pipelining, 1 layer per stage"));
  // One microbatch: the dev step is the barrier step.
  EXPECT_THAT(report, HasSubstr("step time           36.000 ms"));
  EXPECT_THAT(report, HasSubstr("busiest rank        36.000 ms  (bubble 0.000 ms"));
  EXPECT_THAT(report, HasSubstr("barrier step time   36.000 ms"));
  EXPECT_THAT(report, HasSubstr("time lower bound    21.000 ms"));
  EXPECT_THAT(report, HasSubstr("GPU efficiency      0.5833"));
  EXPECT_THAT(report, HasSubstr("step ms   barrier ms     bound ms  GPU eff\n"));
  EXPECT_THAT(report, HasSubstr("     36.000       36.000       21.000   0.5833\n"));
}

TEST(ReportTest, SaysWhenCommunicationIsModelled) {
  SchedulingProblem problem = TinyProblem();
  problem.cost_profile = MillisecondProfile();
  problem.cost_profile->communication = CommunicationModel{
      .gpus_per_node = 8, .intra_node_gb_per_s = 400.0,
      .inter_node_gb_per_s = 50.0, .kv_bytes_per_token = 2048.0};
  EXPECT_THAT(FormatReportHeader(problem),
              HasSubstr("KV exchange MODELLED (not measured) at 400 GB/s within "
                        "a node of 8 GPUs, 50 GB/s across nodes, 2048 bytes per token"));
}

TEST(ReportTest, WithoutACostProfileSaysNothingOfTime) {
  const SchedulingProblem problem = TinyProblem();
  const ScheduleRun run = TinyRun(problem);
  EXPECT_FALSE(run.time.has_value());
  const std::string report = FormatReport(problem, run, {run}, WithoutTime());
  EXPECT_THAT(report, Not(HasSubstr("cost model")));
  EXPECT_THAT(report, Not(HasSubstr(" ms")));
  EXPECT_THAT(report, Not(HasSubstr("GPU")));
}

}  // namespace
}  // namespace dcpsched::report_test
