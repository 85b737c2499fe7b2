// End-to-end tests of the dcpsched program: runs the built binary
// (DCPSCHED_CLI_PATH) as a child process and checks its output and exit
// status.

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

extern char** environ;

namespace dcpsched {
namespace {

using nlohmann::json;

struct CliResult {
  bool exited = false;  // false: killed by a signal (a crash)
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string ReadWholeFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream file(path, std::ios::binary);
  file << contents;
}

// A fresh path in the test's temporary directory.
std::string TempPath(const std::string& name) {
  const ::testing::TestInfo* test =
      ::testing::UnitTest::GetInstance()->current_test_info();
  return absl::StrCat(::testing::TempDir(), "/dcpsched_cli_test_", getpid(),
                      "_", test->name(), "_", name);
}

// Runs dcpsched with `arguments`, capturing stdout and stderr.
CliResult RunCli(const std::vector<std::string>& arguments) {
  const std::string out_path = TempPath("stdout");
  const std::string err_path = TempPath("stderr");
  std::vector<std::string> argv_strings = {DCPSCHED_CLI_PATH};
  argv_strings.insert(argv_strings.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& argument : argv_strings) argv.push_back(argument.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = 0;
  CliResult result;
  const int spawned =
      posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    ADD_FAILURE() << "cannot run " << DCPSCHED_CLI_PATH;
    return result;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  result.exited = WIFEXITED(status);
  result.exit_code = result.exited ? WEXITSTATUS(status) : -1;
  result.out = ReadWholeFile(out_path);
  result.err = ReadWholeFile(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  return result;
}

std::string LastLine(const std::string& text) {
  std::vector<std::string> lines =
      absl::StrSplit(text, '\n', absl::SkipEmpty());
  return lines.empty() ? "" : lines.back();
}

// One line of stderr, naming what is wrong.
void ExpectOneErrorLine(const CliResult& result, const std::string& fragment) {
  EXPECT_TRUE(result.exited) << "crashed";
  EXPECT_TRUE(absl::StrContains(result.err, fragment)) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1)
      << result.err;
}

std::vector<std::string> GoldenLines(const std::string& file) {
  return absl::StrSplit(
      ReadWholeFile(absl::StrCat(DCPSCHED_GOLDEN_DIR, "/", file)), '\n',
      absl::SkipEmpty());
}

TEST(CliTest, DefaultRunPrintsReportAndComparison) {
  const CliResult result = RunCli({});

  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_TRUE(absl::StrContains(result.out, "balance efficiency"))
      << result.out;
  EXPECT_TRUE(absl::StrContains(result.out, "G = 8 ranks (dp 2 x cp 4)"));
  EXPECT_TRUE(absl::StrContains(result.out, "256 samples"));
  EXPECT_TRUE(absl::StrContains(result.out, "seed 5154"));
  for (const char* scheduler : {"packing_aware", "dp_balanced", "legacy"}) {
    EXPECT_TRUE(absl::StrContains(result.out, absl::StrCat("\n", scheduler)))
        << scheduler << " missing from the comparison:\n"
        << result.out;
  }
}

TEST(CliTest, ScheduleSubcommandWithDefaultsIsTheDefaultRun) {
  const CliResult bare = RunCli({"--format", "json"});
  const CliResult explicit_run = RunCli({"schedule", "--format", "json"});

  EXPECT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_EQ(bare.out, explicit_run.out);
}

TEST(CliTest, JsonFormatParsesAndHasGroups) {
  const CliResult result = RunCli({"schedule", "--format", "json"});

  ASSERT_EQ(result.exit_code, 0) << result.err;
  ASSERT_TRUE(json::accept(result.out)) << result.out;
  const json document = json::parse(result.out);
  EXPECT_EQ(document["ok"], true);
  EXPECT_EQ(document["scheduler"], "packing_aware");
  ASSERT_TRUE(document.contains("groups"));
  ASSERT_FALSE(document["groups"].empty());
  EXPECT_EQ(document["groups"][0].size(), 8u);  // G ranks per microbatch
  EXPECT_EQ(document["samples"].size(), 256u);
}

TEST(CliTest, SameFlagsGiveTheSameSchedule) {
  const std::vector<std::string> flags = {"--format", "json",   "--scheduler",
                                          "legacy",   "--seed", "7"};

  EXPECT_EQ(RunCli(flags).out, RunCli(flags).out);
}

TEST(CliTest, UnknownFlagIsAUsageError) {
  const CliResult result = RunCli({"schedule", "--bogus"});

  EXPECT_EQ(result.exit_code, 2);
  ExpectOneErrorLine(result, "--bogus");
}

TEST(CliTest, ZeroTokenBudgetIsAUsageError) {
  const CliResult result = RunCli({"schedule", "--mslpr", "0"});

  EXPECT_EQ(result.exit_code, 2);
  ExpectOneErrorLine(result, "--mslpr");
  EXPECT_EQ(result.out, "");
}

TEST(CliTest, InvalidMinCpIsAUsageError) {
  const CliResult result = RunCli({"schedule", "--min-cp", "3"});

  EXPECT_EQ(result.exit_code, 2);
  ExpectOneErrorLine(result, "min_cp_size is 3");
}

TEST(CliTest, TotalGpusExcludesDp) {
  const CliResult result = RunCli({"--total-gpus", "8", "--dp", "2"});

  EXPECT_EQ(result.exit_code, 2);
  ExpectOneErrorLine(result, "--total-gpus excludes --dp");
}

TEST(CliTest, NegativeLengthInFileIsRejectedWithItsLine) {
  const std::string path = TempPath("lengths.txt");
  WriteFile(path, "# two samples\n1024\n-5\n");

  const CliResult result = RunCli({"schedule", "--lengths", path});

  EXPECT_NE(result.exit_code, 0);
  ExpectOneErrorLine(result, "line 3: length -5 is negative");
  EXPECT_EQ(result.out, "");
  std::remove(path.c_str());
}

TEST(CliTest, LengthsFileIsScheduled) {
  const std::string path = TempPath("lengths.txt");
  WriteFile(path, "5,4096\n6,1000\n7,1000\n8,100\n");

  const CliResult result = RunCli({"--lengths", path, "--format", "json"});

  ASSERT_EQ(result.exit_code, 0) << result.err;
  const json document = json::parse(result.out);
  EXPECT_EQ(document["samples"],
            json::parse("[[5,4096],[6,1000],[7,1000],[8,100]]"));
  EXPECT_EQ(document["workload"]["description"],
            absl::StrCat("lengths file ", path));
  std::remove(path.c_str());
}

TEST(CliTest, MissingLengthsFileIsAnError) {
  const CliResult result =
      RunCli({"schedule", "--lengths", "/nonexistent/dcpsched/lengths.txt"});

  EXPECT_EQ(result.exit_code, 1);
  ExpectOneErrorLine(result, "cannot open lengths file");
}

TEST(CliTest, UnschedulableBatchIsASchedulingError) {
  // Lengths up to 8192 need CP 64 with 128-token ranks; G is 8.
  const CliResult result = RunCli({"--mslpr", "128"});

  EXPECT_EQ(result.exit_code, 1);
  ExpectOneErrorLine(result, "packing_aware cannot schedule this batch");
}

TEST(CliTest, TotalGpusAloneRunsDpBalancedWithCpOne) {
  const CliResult result = RunCli({"--total-gpus", "8"});

  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(absl::StrContains(
      result.out, "only G given: dp_balanced runs as dp 8 x cp 1"))
      << result.out;
  // Samples of 8192 tokens do not fit one 2048-token rank: dp_balanced
  // fails, and the report shows it rather than aborting.
  EXPECT_TRUE(absl::StrContains(result.out, "\ndp_balanced     error: "))
      << result.out;
  EXPECT_TRUE(absl::StrContains(result.out, "\nlegacy "));
}

TEST(CliTest, HelpExitsZero) {
  const CliResult result = RunCli({"schedule", "--help"});

  EXPECT_EQ(result.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(result.out, "--mslpr")) << result.out;
}

TEST(CliTest, CheckGoldenCountsGoodAndTamperedLines) {
  const std::vector<std::string> lines =
      GoldenLines("packing_aware_step.jsonl");
  ASSERT_GE(lines.size(), 2u);
  json tampered = json::parse(lines[0]);
  ASSERT_EQ(tampered["expect"]["ok"], true);
  tampered["expect"]["exec_times"][0] =
      tampered["expect"]["exec_times"][0].get<double>() + 1.0;
  const std::string path = TempPath("golden.jsonl");
  WriteFile(path, lines[0] + "\n" + tampered.dump() + "\n");

  const CliResult result = RunCli({"check-golden", path});

  EXPECT_TRUE(result.exited);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_EQ(LastLine(result.out), "1 passed, 1 failed") << result.out;
  // One line for the failing case, then the totals.
  EXPECT_EQ(std::count(result.out.begin(), result.out.end(), '\n'), 2)
      << result.out;
  std::remove(path.c_str());
}

TEST(CliTest, CheckGoldenPassesEveryGoldenFile) {
  const std::vector<std::string> files = {
      "packing_aware_step.jsonl", "packing_aware_schedule.jsonl",
      "legacy_schedule.jsonl", "dp_balanced_schedule.jsonl", "vpp_align.jsonl"};
  std::vector<std::string> arguments = {"check-golden"};
  std::size_t cases = 0;
  for (const std::string& file : files) {
    arguments.push_back(absl::StrCat(DCPSCHED_GOLDEN_DIR, "/", file));
    cases += GoldenLines(file).size();
  }

  const CliResult result = RunCli(arguments);

  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_EQ(LastLine(result.out), absl::StrCat(cases, " passed, 0 failed"));
}

TEST(CliTest, CheckGoldenReportsUnreadableFile) {
  const CliResult result =
      RunCli({"check-golden", "/nonexistent/dcpsched/golden.jsonl"});

  EXPECT_EQ(result.exit_code, 1);
  ExpectOneErrorLine(result, "/nonexistent/dcpsched/golden.jsonl");
  EXPECT_EQ(LastLine(result.out), "0 passed, 0 failed");
}

TEST(CliTest, CheckGoldenNeedsAFile) {
  const CliResult result = RunCli({"check-golden"});

  EXPECT_EQ(result.exit_code, 2);
  ExpectOneErrorLine(result, "FILE is required");
}

}  // namespace
}  // namespace dcpsched
