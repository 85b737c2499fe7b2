// The command line's usage messages, as a new user meets them: what
// --version says was checked, the notes where a default decides the problem
// (--dp without --cp, an empty batch), the errors that name the flag to
// change (a core message's parameters, a header line in a lengths file, a
// flag conflict). Runs the built program (DCPSCHED_CLI_PATH) as cli_test
// does; the rest of the program's behaviour is cli_test's.

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

extern char** environ;

namespace dcpsched {
namespace {

using ::testing::HasSubstr;

struct CliResult {
  int exit_code = -1;  // -1: killed by a signal
  std::string out;
  std::string err;
};

std::string TempPath(const std::string& name) {
  const ::testing::TestInfo* test =
      ::testing::UnitTest::GetInstance()->current_test_info();
  return absl::StrCat(::testing::TempDir(), "/dcpsched_cli_usage_test_",
                      getpid(), "_", test->name(), "_", name);
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream(path, std::ios::binary) << contents;
}

// Runs dcpsched with `arguments`, stdin from /dev/null.
CliResult RunCli(std::vector<std::string> arguments) {
  arguments.insert(arguments.begin(), DCPSCHED_CLI_PATH);
  const std::string out_path = TempPath("stdout");
  const std::string err_path = TempPath("stderr");
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                   O_RDONLY, 0);
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
    ADD_FAILURE() << "cannot run " << arguments[0];
    return result;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  result.out = ReadWholeFile(out_path);
  result.err = ReadWholeFile(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  return result;
}

TEST(CliUsageTest, VersionNamesTheUpstreamRevisionsChecked) {
  const CliResult result = RunCli({"--version"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_TRUE(absl::StartsWith(result.out, "dcpsched ")) << result.out;
  EXPECT_THAT(result.out, HasSubstr("checked against Megatron-LM:"));
  EXPECT_THAT(result.out, HasSubstr("dev 66d54b474b: equal"));
  EXPECT_THAT(result.out, HasSubstr("PR #6479 head 986bf45787: equal"));
  EXPECT_THAT(result.out, HasSubstr("main a9381be598"));
}

TEST(CliUsageTest, DpWithoutCpSaysWhichCpRuns) {
  const CliResult dp_alone = RunCli({"--dp", "4", "--samples", "16"});
  EXPECT_EQ(dp_alone.exit_code, 0) << dp_alone.err;
  EXPECT_EQ(dp_alone.err,
            "dcpsched: note: --dp 4 without --cp runs dp 4 x cp 4 (the default "
            "--cp 4), G = 16 ranks; give --cp C to choose\n");
  EXPECT_THAT(dp_alone.out, HasSubstr("G = 16 ranks (dp 4 x cp 4)"));
  const CliResult cp_alone = RunCli({"compare", "--cp", "2", "--samples", "16"});
  EXPECT_EQ(cp_alone.exit_code, 0) << cp_alone.err;
  EXPECT_THAT(cp_alone.err, HasSubstr("note: --cp 2 without --dp runs dp 2 x cp 2 "
                                      "(the default --dp 2), G = 4 ranks; give --dp D"));
  for (const std::vector<std::string>& quiet :
       {std::vector<std::string>{"--dp", "4", "--cp", "2", "--samples", "16"},
        std::vector<std::string>{"--total-gpus", "8", "--samples", "16"},
        std::vector<std::string>{"--samples", "16"}}) {
    const CliResult result = RunCli(quiet);
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.err, "") << quiet[0];
  }
}

TEST(CliUsageTest, CoreErrorsNameTheFlagsToChange) {
  // dp_balanced at --total-gpus 12 runs as dp 12 x cp 1: the core says to
  // raise cp_size, which only --dp D --cp C can.
  const CliResult implied =
      RunCli({"--total-gpus", "12", "--scheduler", "dp_balanced"});
  EXPECT_EQ(implied.exit_code, 2);
  EXPECT_THAT(implied.err, HasSubstr("raise max_seq_len_per_rank or cp_size; on the "
                                     "command line, max_seq_len_per_rank is --mslpr and "
                                     "cp_size is --cp (--total-gpus G runs dp_balanced as "
                                     "dp G x cp 1: give --dp D --cp C instead of "
                                     "--total-gpus)\n"));
  const CliResult explicit_cp =
      RunCli({"--dp", "12", "--cp", "1", "--scheduler", "dp_balanced"});
  EXPECT_EQ(explicit_cp.exit_code, 2);
  EXPECT_THAT(explicit_cp.err, HasSubstr("max_seq_len_per_rank is --mslpr and cp_size "
                                         "is --cp\n"));
  // packing_aware: a sample that needs more ranks than there are.
  const std::string lengths = TempPath("lengths");
  WriteFile(lengths, "9000\n");
  const CliResult too_long = RunCli({"--lengths", lengths, "--total-gpus", "4"});
  EXPECT_EQ(too_long.exit_code, 2);
  EXPECT_THAT(too_long.err, HasSubstr("; on the command line, max_seq_len_per_rank is "
                                      "--mslpr and the number of ranks is --total-gpus G "
                                      "(or --dp D --cp C)\n"));
  // min_cp_size is its own flag, not --cp.
  const CliResult min_cp = RunCli({"--total-gpus", "12", "--min-cp", "16"});
  EXPECT_EQ(min_cp.exit_code, 2);
  EXPECT_THAT(min_cp.err, HasSubstr("min_cp_size is --min-cp")) << min_cp.err;
  EXPECT_THAT(min_cp.err, ::testing::Not(HasSubstr("cp_size is --cp")));
  std::remove(lengths.c_str());
}

TEST(CliUsageTest, AnEmptyLengthsFileIsAnError) {
  const std::string lengths = TempPath("lengths");
  for (const std::string contents : {"", "# no samples yet\n\n"}) {
    WriteFile(lengths, contents);
    for (const std::string command : {"schedule", "compare"}) {
      const CliResult result = RunCli({command, "--lengths", lengths});
      EXPECT_EQ(result.exit_code, 2) << result.out;
      EXPECT_EQ(result.out, "");
      EXPECT_EQ(result.err,
                absl::StrCat("dcpsched: the lengths file ", lengths,
                             " holds no sample (only blank lines and # comments): "
                             "nothing to schedule; write one `len` or `id,len` per "
                             "line\n"));
    }
  }
  std::remove(lengths.c_str());
}

TEST(CliUsageTest, AnEmptyGeneratedBatchIsSaid) {
  const CliResult result = RunCli({"--samples", "0"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err,
            "dcpsched: note: --samples 0: the batch is empty, so the schedule has "
            "no microbatch and the figures are 0\n");
}

TEST(CliUsageTest, AHeaderLineSaysToCommentItOut) {
  const std::string lengths = TempPath("lengths");
  WriteFile(lengths, "id,len\n1,100\n2,300\n");
  const CliResult result = RunCli({"--lengths", lengths});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("line 1: the id \"id\" is not a number"));
  EXPECT_THAT(result.err,
              HasSubstr("if line 1 is a header, comment it out with # (e.g. `# id,len`)"));
  std::remove(lengths.c_str());
}

TEST(CliUsageTest, LegacyWithACapIsAFlagConflict) {
  const CliResult result =
      RunCli({"--scheduler", "legacy", "--max-num-seqs", "2", "--samples", "8"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.out, "");
  EXPECT_TRUE(absl::StartsWith(
      result.err, "dcpsched: --max-num-seqs cannot be used with --scheduler legacy"))
      << result.err;
  EXPECT_THAT(result.err, ::testing::Not(HasSubstr("cannot schedule")));
}

}  // namespace
}  // namespace dcpsched
