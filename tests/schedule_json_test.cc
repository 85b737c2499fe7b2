#include "io/schedule_json.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/compact_schedule.h"
#include "core/cost_profile.h"
#include "core/types.h"
#include "gtest/gtest.h"
#include "io/schedule_run.h"
#include "nlohmann/json.hpp"
#include "tests/test_problems.h"

namespace dcpsched::schedule_json_test {
namespace {

using nlohmann::json;

// Sample 7 (8 tokens) on ranks 0-1, samples 8 and 9 alone on ranks 2 and 3.
SchedulingProblem TinyProblem() {
  SchedulingProblem problem;
  problem.workload_description = "hand-made batch";
  problem.samples = {{7, 8}, {8, 2}, {9, 2}};
  problem.parameters.dp_size = 2;
  problem.parameters.cp_size = 2;
  problem.parameters.max_seq_len_per_rank = 4;
  problem.parameters.vpp_group = 3;
  return problem;
}

ScheduleRun TinyRun(const SchedulingProblem& problem) {
  const Schedule schedule{
      .microbatches = {Microbatch{.rank_ids = {{7}, {7}, {8}, {9}}}}};
  return MeasureRun(SchedulerKind::kLegacy, problem,
                    CompactFromRanks(schedule));
}

TEST(ScheduleJsonTest, DescribesParametersWorkloadAndSamples) {
  const SchedulingProblem problem = TinyProblem();

  const json document = ScheduleRunToJson(problem, TinyRun(problem));

  EXPECT_EQ(document["format"], "dcpsched.schedule_run.v1");
  EXPECT_EQ(document["scheduler"], "legacy");
  EXPECT_EQ(document["ok"], true);
  EXPECT_FALSE(document.contains("error"));
  EXPECT_EQ(document["parameters"],
            json::parse(R"({"total_gpus": 4, "dp_size": 2, "cp_size": 2,
                            "cp_size_implied": false,
                            "max_seq_len_per_rank": 4, "min_cp_size": 1,
                            "vpp_group": 3, "max_num_seqs": null})"));
  EXPECT_EQ(document["workload"],
            json::parse(R"({"description": "hand-made batch",
                            "num_samples": 3, "total_tokens": 12,
                            "min_len": 2, "max_len": 8})"));
  EXPECT_EQ(document["samples"], json::parse("[[7, 8], [8, 2], [9, 2]]"));
}

// The count the CLI refuses large documents by is the per-rank form's own:
// every rank list, every id in it, and every rank's two load figures.
TEST(ScheduleJsonTest, PerRankJsonValuesCountsThePerRankForm) {
  const SchedulingProblem problem = TinyProblem();
  const json document = ScheduleRunToJson(problem, TinyRun(problem));
  std::int64_t values = 0;
  for (const json& microbatch : document["groups"]) {
    for (const json& rank : microbatch) values += 1 + static_cast<std::int64_t>(rank.size());
  }
  for (const json& microbatch : document["microbatches"]) {
    values += static_cast<std::int64_t>(microbatch["rank_tokens"].size() +
                                        microbatch["rank_work"].size());
  }
  EXPECT_EQ(PerRankJsonValues(TinyRun(problem).schedule), values);
  EXPECT_EQ(values, 4 * 3 + 4);
}

TEST(ScheduleJsonTest, GroupsHaveUpstreamsShape) {
  const SchedulingProblem problem = TinyProblem();

  const json document = ScheduleRunToJson(problem, TinyRun(problem));

  // microbatches -> ranks -> ids.
  EXPECT_EQ(document["groups"], json::parse("[[[7], [7], [8], [9]]]"));
}

TEST(ScheduleJsonTest, HasCpGroupsPerRankLoadAndQuality) {
  const SchedulingProblem problem = TinyProblem();

  const json document = ScheduleRunToJson(problem, TinyRun(problem));

  ASSERT_EQ(document["microbatches"].size(), 1u);
  const json& microbatch = document["microbatches"][0];
  EXPECT_EQ(microbatch["cp_groups"], json::parse(R"([
              {"first_rank": 0, "size": 2, "ids": [7],
               "tokens_per_rank": 4.0, "work_per_rank": 32.0},
              {"first_rank": 2, "size": 1, "ids": [8],
               "tokens_per_rank": 2.0, "work_per_rank": 4.0},
              {"first_rank": 3, "size": 1, "ids": [9],
               "tokens_per_rank": 2.0, "work_per_rank": 4.0}])"));
  EXPECT_EQ(microbatch["rank_tokens"], json::parse("[4.0, 4.0, 2.0, 2.0]"));
  EXPECT_EQ(microbatch["rank_work"], json::parse("[32.0, 32.0, 4.0, 4.0]"));
  EXPECT_EQ(microbatch["max_work"], 32.0);
  EXPECT_EQ(microbatch["min_work"], 4.0);
  EXPECT_EQ(document["quality"], json::parse(R"({"balance_efficiency": 0.5625,
                            "microbatch_count": 1,
                            "microbatch_lower_bound": 1,
                            "critical_path_work": 32.0,
                            "max_rank_work": 32.0})"));
}

TEST(ScheduleJsonTest, FailedRunHasErrorAndNoSchedule) {
  ScheduleRun run;
  run.scheduler = SchedulerKind::kDpBalanced;
  run.status = absl::InvalidArgumentError("sample too long");

  const json document = ScheduleRunToJson(TinyProblem(), run);

  EXPECT_EQ(document["ok"], false);
  EXPECT_EQ(document["error"], "sample too long");
  EXPECT_FALSE(document.contains("groups"));
  EXPECT_FALSE(document.contains("quality"));
  EXPECT_TRUE(document.contains("samples"));
}

TEST(ScheduleJsonTest, FormattedJsonIsOneStableLineThatReadsBack) {
  const SchedulingProblem problem = TinyProblem();
  const ScheduleRun run = TinyRun(problem);

  const std::string text = FormatScheduleRunJson(problem, run);

  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find('\n'), text.size() - 1);
  EXPECT_EQ(json::parse(text), ScheduleRunToJson(problem, run));
  EXPECT_EQ(text, FormatScheduleRunJson(problem, TinyRun(problem)));
}

TEST(ScheduleJsonTest, MaxRankWorkIsTheBusiestRankOfAnyMicrobatch) {
  const SchedulingProblem problem = TinyProblem();
  // Microbatch 0: 7 on all four ranks (64/4 = 16 each); microbatch 1: 8
  // and 9 together on every rank (4/4 + 4/4 = 2 each).
  const Schedule schedule{.microbatches = {
      Microbatch{.rank_ids = {{7}, {7}, {7}, {7}}},
      Microbatch{.rank_ids = {{8, 9}, {8, 9}, {8, 9}, {8, 9}}}}};
  const ScheduleRun run = MeasureRun(SchedulerKind::kLegacy, problem,
                                     CompactFromRanks(schedule));

  EXPECT_EQ(ScheduleRunToJson(problem, run)["quality"]["max_rank_work"], 16.0);
}

TEST(ScheduleJsonTest, ComparisonHasOneEntryPerRunWithTimeAndQuality) {
  const SchedulingProblem problem = TinyProblem();
  ScheduleRun failed;
  failed.scheduler = SchedulerKind::kDpBalanced;
  failed.status = absl::InvalidArgumentError("sample too long");
  failed.elapsed_ms = 0.25;
  const std::vector<ScheduleRun> runs = {TinyRun(problem), failed};

  const json document = ComparisonToJson(problem, runs);

  EXPECT_EQ(document["format"], "dcpsched.compare.v1");
  EXPECT_EQ(document["parameters"]["total_gpus"], 4);
  EXPECT_EQ(document["workload"]["num_samples"], 3);
  ASSERT_EQ(document["runs"].size(), 2u);
  EXPECT_EQ(document["runs"][0]["scheduler"], "legacy");
  EXPECT_EQ(document["runs"][0]["ok"], true);
  EXPECT_EQ(document["runs"][0]["quality"],
            ScheduleRunToJson(problem, runs[0])["quality"]);
  EXPECT_FALSE(document["runs"][0].contains("error"));
  EXPECT_EQ(document["runs"][1],
            json::parse(R"({"scheduler": "dp_balanced", "ok": false,
                            "error": "sample too long", "elapsed_ms": 0.25})"));
  EXPECT_FALSE(document.contains("samples"));
}

TEST(ScheduleJsonTest, DoublesReadBackBitForBit) {
  // Sample 0 (10 tokens) over 3 ranks: 10/3 tokens and 100/3 work each.
  SchedulingProblem problem = TinyProblem();
  problem.samples = {{0, 10}, {1, 1}};
  const Schedule schedule{
      .microbatches = {Microbatch{.rank_ids = {{0}, {0}, {0}, {1}}}}};
  const ScheduleRun run = MeasureRun(SchedulerKind::kPackingAware, problem,
                                     CompactFromRanks(schedule));

  const json document = json::parse(FormatScheduleRunJson(problem, run));

  EXPECT_EQ(document["microbatches"][0]["rank_tokens"][0].get<double>(),
            10.0 / 3.0);
  EXPECT_EQ(document["microbatches"][0]["rank_work"][0].get<double>(),
            100.0 / 3.0);
  EXPECT_EQ(document["quality"]["balance_efficiency"].get<double>(),
            (101.0 / 4.0) / (100.0 / 3.0));
}

TEST(ScheduleJsonTest, CompactFormHasTheGroupsAndNoPerRankLists) {
  const SchedulingProblem problem = TinyProblem();
  const ScheduleRun run = TinyRun(problem);

  const json compact = ScheduleRunToJson(problem, run, ScheduleForm::kCompact);
  const json per_rank = ScheduleRunToJson(problem, run);

  EXPECT_EQ(compact["format"], "dcpsched.schedule_run.v2");
  EXPECT_FALSE(compact.contains("groups"));
  EXPECT_EQ(compact["microbatches"][0],
            json::parse(R"({"cp_groups": [
                {"first_rank": 0, "size": 2, "ids": [7],
                 "tokens_per_rank": 4.0, "work_per_rank": 32.0},
                {"first_rank": 2, "size": 1, "ids": [8],
                 "tokens_per_rank": 2.0, "work_per_rank": 4.0},
                {"first_rank": 3, "size": 1, "ids": [9],
                 "tokens_per_rank": 2.0, "work_per_rank": 4.0}],
              "max_work": 32.0, "min_work": 4.0})"));
  EXPECT_EQ(compact["quality"], per_rank["quality"]);
  EXPECT_EQ(compact["samples"], per_rank["samples"]);
  EXPECT_EQ(compact["parameters"], per_rank["parameters"]);
}

TEST(ScheduleJsonTest, InvalidUtf8InDescriptionDoesNotThrow) {
  SchedulingProblem problem = TinyProblem();
  problem.workload_description = "lengths file \xff\xfe.txt";

  const std::string text = FormatScheduleRunJson(problem, TinyRun(problem));

  EXPECT_TRUE(json::accept(text));
}

TEST(ScheduleJsonTest, RealRunGroupsMatchItsSchedule) {
  const SchedulingProblem problem = FiveSamplesOnFourRanks();
  const ScheduleRun run = RunScheduler(SchedulerKind::kPackingAware, problem);
  ASSERT_TRUE(run.status.ok()) << run.status;

  const json document = ScheduleRunToJson(problem, run);

  const Schedule expanded = ExpandSchedule(run.schedule).value();
  ASSERT_EQ(document["groups"].size(), expanded.microbatches.size());
  for (std::size_t i = 0; i < expanded.microbatches.size(); ++i) {
    EXPECT_EQ(document["groups"][i].get<std::vector<std::vector<SampleId>>>(),
              expanded.microbatches[i].rank_ids);
  }
}

}  // namespace
}  // namespace dcpsched::schedule_json_test

namespace dcpsched::schedule_json_test {
namespace {

TEST(ScheduleJsonTest, WithACostProfileCarriesGpuTime) {
  SchedulingProblem problem = TinyProblem();
  problem.cost_profile = CostProfile{.name = "millisecond",
                                     .description = "a test profile",
                                     .causal_attention = {{1}, {1e-3}},
                                     .full_attention = {{1}, {2e-3}},
                                     .non_attention = {{1}, {1e-3}}};
  const ScheduleRun run = TinyRun(problem);
  const nlohmann::json document = ScheduleRunToJson(problem, run);
  EXPECT_EQ(document["cost_profile"]["name"], "millisecond");
  EXPECT_TRUE(document["cost_profile"]["communication"].is_null());
  EXPECT_EQ(document["cost_profile"]["communication_modelled"], false);
  const nlohmann::json& gpu_time = document["quality"]["gpu_time"];
  EXPECT_DOUBLE_EQ(gpu_time["step_seconds"].get<double>(), 36e-3);
  EXPECT_DOUBLE_EQ(gpu_time["bound_seconds"].get<double>(), 21e-3);
  EXPECT_DOUBLE_EQ(gpu_time["gpu_efficiency"].get<double>(), 21.0 / 36.0);
  const nlohmann::json& microbatch = document["microbatches"][0];
  EXPECT_DOUBLE_EQ(microbatch["max_seconds"].get<double>(), 36e-3);
  EXPECT_DOUBLE_EQ(microbatch["cp_groups"][1]["seconds_per_rank"].get<double>(), 6e-3);
  EXPECT_EQ(microbatch["rank_seconds"].size(), 4u);
  const nlohmann::json compact = ScheduleRunToJson(problem, run, ScheduleForm::kCompact);
  EXPECT_FALSE(compact["microbatches"][0].contains("rank_seconds"));
  EXPECT_TRUE(compact["microbatches"][0].contains("max_seconds"));
  const nlohmann::json compared = ComparisonToJson(problem, {run});
  EXPECT_EQ(compared["cost_profile"]["name"], "millisecond");
  EXPECT_TRUE(compared["runs"][0]["quality"].contains("gpu_time"));
}

TEST(ScheduleJsonTest, WithoutACostProfileHasNoTimeKeys) {
  const SchedulingProblem problem = TinyProblem();
  const std::string text = FormatScheduleRunJson(problem, TinyRun(problem));
  EXPECT_EQ(text.find("seconds"), std::string::npos);
  EXPECT_EQ(text.find("cost_profile"), std::string::npos);
  EXPECT_EQ(text.find("gpu_time"), std::string::npos);
}

}  // namespace
}  // namespace dcpsched::schedule_json_test
