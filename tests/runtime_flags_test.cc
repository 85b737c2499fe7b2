// End-to-end tests of the runtime flags (cli/runtime_flags.h: --pp,
// --virtual-stages, --ep, --runtime, --layers-per-stage, --forward-share
// and Megatron-LM's long names) on `dcpsched schedule`, `compare` and
// `verify`: runs the built binary (tests/run_cli.h) and checks its output
// and exit status.

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/run_cli.h"

namespace dcpsched::runtime_flags_test {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kProfile = {"--cost-profile", "h200-llama3-8b"};

std::vector<std::string> With(std::vector<std::string> args,
                              const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// The `runtime` object of a compact JSON run of the default job.
nlohmann::json RuntimeOf(const std::vector<std::string>& flags) {
  const CliResult result = RunCli(With({"--format", "json", "--compact"}, With(kProfile, flags)));
  EXPECT_EQ(result.exit_code, 0) << result.err;
  return nlohmann::json::parse(result.out)["quality"]["runtime"];
}

TEST(RuntimeFlagsTest, JsonCarriesTheRuntimeAndItsStep) {
  const nlohmann::json plain = RuntimeOf({});
  EXPECT_EQ(plain["path"], "dev");
  EXPECT_EQ(plain["pipeline_stages"], 1);
  EXPECT_TRUE(plain["expert_parallel_size"].is_null());
  EXPECT_GE(plain["step_seconds"].get<double>(), plain["busiest_rank_seconds"].get<double>());
  const nlohmann::json piped = RuntimeOf({"--pp", "4", "--ep", "8", "--layers-per-stage", "2"});
  EXPECT_EQ(piped["pipeline_stages"], 4);
  EXPECT_EQ(piped["expert_parallel_size"], 8);
  EXPECT_EQ(piped["layers_per_stage"], 2);
  EXPECT_GT(piped["bubble_seconds"].get<double>(), 0.0);
}

TEST(RuntimeFlagsTest, MegatronsLongNamesAreAliases) {
  EXPECT_EQ(RuntimeOf({"--pp", "2", "--virtual-stages", "2", "--vpp", "2", "--ep", "4"}),
            RuntimeOf({"--pipeline-model-parallel-size", "2",
                       "--virtual-pipeline-model-parallel-size", "2", "--vpp", "2",
                       "--expert-model-parallel-size", "4"}));
}

TEST(RuntimeFlagsTest, TheLegacyRuntimeIsTheBarrierStep) {
  const CliResult result = RunCli(With({"--format", "json", "--compact", "--runtime", "legacy"},
                                       kProfile));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const nlohmann::json quality = nlohmann::json::parse(result.out)["quality"];
  EXPECT_EQ(quality["runtime"]["step_seconds"], quality["gpu_time"]["step_seconds"]);
}

void ExpectUsageError(const std::vector<std::string>& args, const std::string& says) {
  const CliResult result = RunCli(args);
  EXPECT_EQ(result.exit_code, 2) << result.out;
  EXPECT_THAT(result.err, HasSubstr(says));
}

TEST(RuntimeFlagsTest, ARuntimeNoScheduleRunsOnIsExitTwo) {
  ExpectUsageError({"--pp", "2"}, "add --cost-profile");
  ExpectUsageError(With({"--runtime", "legacy", "--pp", "2"}, kProfile), "give --runtime dev");
  ExpectUsageError(With({"--virtual-stages", "2"}, kProfile), "needs a pipeline");
  ExpectUsageError(With({"--ep", "3"}, kProfile), "give a divisor of 8");
  ExpectUsageError(With({"--forward-share", "1"}, kProfile), "strictly between 0 and 1");
  ExpectUsageError(With({"compare", "--pp", "0"}, kProfile), "--pp");
}

TEST(RuntimeFlagsTest, AMicrobatchCountInterleavingRefusesIsExitTwo) {
  // The default job's 16 microbatches in groups of P = 3 leave 1, fewer
  // than P.
  ExpectUsageError(With({"--pp", "3", "--virtual-stages", "2"}, kProfile),
                   "Megatron-LM refuses this step");
}

// G = 4 in two blocks of 2; the long sample (2 s or so) moves from block to
// block, the short ones stay beside it.
std::string RotatingSchedule() {
  return R"({"format": "dcpsched.schedule.v1", "total_gpus": 4,
             "max_seq_len_per_rank": 65536,
             "samples": [[0, 65536], [1, 1024], [2, 1024], [3, 65536],
                         [4, 65536], [5, 1024], [6, 1024], [7, 65536]],
             "groups": [[[0], [0], [1], [1]], [[2], [2], [3], [3]],
                        [[4], [4], [5], [5]], [[6], [6], [7], [7]]]})";
}

// The number after `label` in `text`.
double NumberAfter(const std::string& text, const std::string& label) {
  const std::size_t at = text.find(label);
  EXPECT_NE(at, std::string::npos) << label << " in " << text;
  return std::stod(text.substr(at + label.size()));
}

TEST(RuntimeFlagsTest, VerifyReportsTheStepOfAScheduleFile) {
  const std::string path = TestTempPath("rotating.json");
  WriteFile(path, RotatingSchedule());
  const CliResult dev = RunCli(With({"verify", path}, kProfile));
  ASSERT_EQ(dev.exit_code, 0) << dev.err;
  // Each block's chain is two long and two short microbatches; the barrier
  // waits for a long one four times.
  const double barrier = NumberAfter(dev.out, "barrier step ");
  const double step = NumberAfter(dev.out, "1 layer per stage): ");
  EXPECT_LT(step, 0.6 * barrier) << dev.out;
  const CliResult piped = RunCli(With({"verify", path, "--pp", "2"}, kProfile));
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_THAT(piped.out, HasSubstr("step (dev runtime, 1F1B over P = 2 stages, forward 0.3333"));
  const CliResult interleaved =
      RunCli(With({"verify", path, "--pp", "3", "--virtual-stages", "2"}, kProfile));
  EXPECT_EQ(interleaved.exit_code, 2);
  EXPECT_THAT(interleaved.err, HasSubstr("cannot run this schedule of 4 microbatches"));
  const CliResult bare = RunCli({"verify", path, "--ep", "2"});
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_THAT(bare.err, HasSubstr("add --cost-profile"));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace dcpsched::runtime_flags_test
