// End-to-end tests of --cost-profile (cli/cost_profile_flag.h) on
// `dcpsched schedule`, `compare` and `verify`: runs the built binary
// (DCPSCHED_CLI_PATH, tests/run_cli.h) and checks its output and exit
// status.

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/run_cli.h"

namespace dcpsched::cost_profile_flag_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A copy of the shipped h200-llama3-8b profile with `edit` applied, in a file.
template <typename Edit>
std::string EditedProfile(const Edit& edit) {
  std::ifstream shipped(std::string(DCPSCHED_GOLDEN_DIR) + "/../../profiles/h200-llama3-8b.json");
  nlohmann::json document = nlohmann::json::parse(shipped);
  edit(document);
  const std::string path = TestTempPath("profile.json");
  std::ofstream(path) << document.dump();
  return path;
}

TEST(CostProfileFlagTest, ScheduleShowsStepTimeAndGpuEfficiencyForEveryScheduler) {
  const CliResult result = RunCli({"--cost-profile", "h200-llama3-8b"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("cost model h200-llama3-8b"));
  EXPECT_THAT(result.out, HasSubstr("communication is not modelled"));
  EXPECT_THAT(result.out, HasSubstr("\nruntime    dev runtime, no pipelining"));
  EXPECT_THAT(result.out, HasSubstr("\nstep time "));
  EXPECT_THAT(result.out, HasSubstr("\nbarrier step time "));
  EXPECT_THAT(result.out, HasSubstr("\nGPU efficiency "));
  EXPECT_THAT(result.out, HasSubstr("step ms   barrier ms     bound ms  GPU eff"));
  for (const char* scheduler : {"packing_aware", "dp_balanced", "legacy"}) {
    const std::size_t row = result.out.rfind(absl::StrCat("\n", scheduler, " "));
    ASSERT_NE(row, std::string::npos) << scheduler;
    const std::string line = result.out.substr(row + 1, result.out.find('\n', row + 1) - row - 1);
    EXPECT_THAT(line, Not(HasSubstr(" - "))) << line;  // every row has a time
  }
}

TEST(CostProfileFlagTest, WithoutTheFlagTheReportIsUnchanged) {
  const CliResult plain = RunCli({"--compare", "none"});
  ASSERT_EQ(plain.exit_code, 0);
  EXPECT_THAT(plain.out, Not(HasSubstr("cost model")));
  EXPECT_THAT(plain.out, Not(HasSubstr("step time")));
}

TEST(CostProfileFlagTest, CompareAndJsonCarryTheTime) {
  const CliResult compare = RunCli({"compare", "--cost-profile", "h200-llama3-70b-tp8-graphs"});
  ASSERT_EQ(compare.exit_code, 0) << compare.err;
  EXPECT_THAT(compare.out, HasSubstr("cost model h200-llama3-70b-tp8-graphs"));
  EXPECT_THAT(compare.out, HasSubstr("GPU eff"));
  const CliResult json = RunCli({"--format", "json", "--compact", "--cost-profile", "h200-llama3-8b"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json document = nlohmann::json::parse(json.out);
  EXPECT_EQ(document["cost_profile"]["name"], "h200-llama3-8b");
  EXPECT_GT(document["quality"]["gpu_time"]["step_seconds"].get<double>(),
            document["quality"]["gpu_time"]["bound_seconds"].get<double>());
}

TEST(CostProfileFlagTest, AProfileFileIsReadByPath) {
  const std::string path = EditedProfile([](nlohmann::json& document) {
    document["name"] = "my-gpu";
    document["communication"] = {{"gpus_per_node", 4}, {"intra_node_gb_per_s", 100.0},
                                 {"inter_node_gb_per_s", 10.0}, {"kv_bytes_per_token", 4096}};
  });
  const CliResult result = RunCli({"--compare", "none", "--cost-profile", path});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("cost model my-gpu"));
  EXPECT_THAT(result.out, HasSubstr("MODELLED (not measured)"));
  std::remove(path.c_str());
}

TEST(CostProfileFlagTest, AMalformedProfileExitsTwoNamingTheField) {
  const std::string path = EditedProfile(
      [](nlohmann::json& document) { document["attention"]["causal"]["seconds"][3] = -1; });
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"--cost-profile", path},
        std::vector<std::string>{"compare", "--cost-profile", path},
        std::vector<std::string>{"verify", "-", "--cost-profile", path}}) {
    const CliResult result = RunCli(command);
    EXPECT_EQ(result.exit_code, 2) << command[0];
    EXPECT_THAT(result.err, HasSubstr("attention.causal.seconds[3] is -1; every time must be a "
                                      "finite number > 0"));
  }
  std::remove(path.c_str());
  const CliResult unknown = RunCli({"--cost-profile", "no-such-gpu"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("no shipped cost profile is named \"no-such-gpu\""));
}

TEST(CostProfileFlagTest, VerifyPrintsTheStepTime) {
  const std::string schedule = TestTempPath("schedule.json");
  {
    const CliResult written = RunCli({"--format", "json", "--compact"});
    ASSERT_EQ(written.exit_code, 0);
    std::ofstream(schedule) << written.out;
  }
  const CliResult result = RunCli({"verify", schedule, "--cost-profile", "h200-llama3-8b"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("\ntime (h200-llama3-8b): barrier step "));
  EXPECT_THAT(result.out, HasSubstr("GPU efficiency"));
  EXPECT_THAT(result.out, HasSubstr("compute only, communication not modelled"));
  EXPECT_THAT(result.out, HasSubstr("\nstep (dev runtime, no pipelining, 1 layer per stage): "));
  std::remove(schedule.c_str());
}

}  // namespace
}  // namespace dcpsched::cost_profile_flag_test
