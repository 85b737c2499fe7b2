// The command line's usage messages, as a new user meets them: what
// --version says was checked, the notes where a default decides the problem
// (--dp without --cp, an empty batch), the errors that name the flag to
// change (a core message's parameters, a header line in a lengths file, a
// flag conflict). Runs the built program (DCPSCHED_CLI_PATH) as cli_test
// does; the rest of the program's behaviour is cli_test's.

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/run_cli.h"

namespace dcpsched::cli_usage_test {
namespace {

using ::testing::HasSubstr;

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
  const std::string lengths = TestTempPath("lengths");
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
  const std::string lengths = TestTempPath("lengths");
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
  const std::string lengths = TestTempPath("lengths");
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
}  // namespace dcpsched::cli_usage_test
