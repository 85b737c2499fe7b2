// End-to-end tests of the dcpsched program: runs the built binary
// (DCPSCHED_CLI_PATH) as a child process and checks its output and exit
// status.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/run_cli.h"

namespace dcpsched::cli_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using nlohmann::json;

// Whether this build (and so the dcpsched it runs) has AddressSanitizer.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

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

TEST(CliTest, CostAwareWithoutAProfileSaysToAddOne) {
  const CliResult result = RunCli({"schedule", "--scheduler", "cost_aware"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("add --cost-profile"));
  EXPECT_TRUE(result.out.empty());
}

TEST(CliTest, CostAwareSchedulesWherePackingAwareCannotAndVerifyChecksAllButTheWorkCap) {
  const std::vector<std::string> flags = {"schedule", "--total-gpus", "6", "--vpp", "4",
                                          "--format", "json", "--compact"};
  EXPECT_EQ(RunCli(flags).exit_code, 2);  // packing-aware: no runnable schedule
  std::vector<std::string> cost_aware = flags;
  for (const char* flag : {"--scheduler", "cost_aware", "--cost-profile", "h200-llama3-8b"}) {
    cost_aware.push_back(flag);
  }
  const CliResult scheduled = RunCli(cost_aware);
  ASSERT_EQ(scheduled.exit_code, 0) << scheduled.err;
  EXPECT_THAT(scheduled.out, HasSubstr("\"scheduler\":\"cost_aware\""));
  EXPECT_THAT(scheduled.out, HasSubstr("\"source\":\"planned\""));
  const CliResult verified = RunCliWithInput({"verify", "-"}, scheduled.out);
  EXPECT_EQ(verified.exit_code, 0) << verified.out;
  EXPECT_THAT(verified.out, HasSubstr("invariants 1-4, 6, 8 and 11 hold; 5 (work cap) is not "
                                      "checked: cost_aware promises every invariant but it"));
}

TEST(CliTest, CostAwareJoinsTheComparisonOnlyWithAProfile) {
  EXPECT_THAT(RunCli({"schedule"}).out, Not(HasSubstr("cost_aware")));
  const CliResult with_profile = RunCli({"schedule", "--cost-profile", "h200-llama3-8b"});
  ASSERT_EQ(with_profile.exit_code, 0) << with_profile.err;
  EXPECT_THAT(with_profile.out, HasSubstr("\ncost_aware "));
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
  const std::string path = TestTempPath("lengths.txt");
  WriteFile(path, "# two samples\n1024\n-5\n");

  const CliResult result = RunCli({"schedule", "--lengths", path});

  EXPECT_NE(result.exit_code, 0);
  ExpectOneErrorLine(result, "line 3: length -5 is negative");
  EXPECT_EQ(result.out, "");
  std::remove(path.c_str());
}

TEST(CliTest, LengthsFileIsScheduled) {
  const std::string path = TestTempPath("lengths.txt");
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

TEST(CliTest, ProblemLineIsScheduledAsItIs) {
  // A line as the conformance check prints a shrunk problem.
  const CliResult result = RunCli(
      {"schedule", "--problem", "G=4 mslpr=100 min_cp=1 vpp=2 max_num_seqs=3 "
       "samples=7:150,3:20,9:40", "--format", "json"});

  ASSERT_EQ(result.exit_code, 0) << result.err;
  const json document = json::parse(result.out);
  EXPECT_EQ(document["samples"], json::parse("[[7,150],[3,20],[9,40]]"));
  EXPECT_EQ(document["workload"]["description"], "problem line (--problem)");
  // The same problem by separate flags gives the same schedule.
  const std::string path = TestTempPath("lengths.txt");
  WriteFile(path, "7,150\n3,20\n9,40\n");
  const CliResult by_flags =
      RunCli({"schedule", "--lengths", path, "--total-gpus", "4", "--mslpr", "100",
              "--vpp", "2", "--max-num-seqs", "3", "--format", "json"});
  ASSERT_EQ(by_flags.exit_code, 0) << by_flags.err;
  EXPECT_EQ(json::parse(by_flags.out)["groups"], document["groups"]);
  std::remove(path.c_str());
}

TEST(CliTest, ProblemLineExcludesTheFlagsItSets) {
  const CliResult result =
      RunCli({"schedule", "--problem", "G=2 mslpr=8 samples=0:3", "--mslpr", "16"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("excludes"));
}

TEST(CliTest, MalformedProblemLineNamesTheField) {
  const CliResult result = RunCli({"schedule", "--problem", "G=2 samples=0:3"});
  EXPECT_EQ(result.exit_code, 2);
  ExpectOneErrorLine(result, "--problem: ");
  EXPECT_THAT(result.err, HasSubstr("mslpr"));
}

TEST(CliTest, MissingLengthsFileIsAnError) {
  const CliResult result =
      RunCli({"schedule", "--lengths", "/nonexistent/dcpsched/lengths.txt"});

  EXPECT_EQ(result.exit_code, 2);
  ExpectOneErrorLine(result, "cannot open lengths file");
}

TEST(CliTest, UnschedulableBatchIsASchedulingError) {
  // Lengths up to 8192 need CP 64 with 128-token ranks; G is 8.
  const CliResult result = RunCli({"--mslpr", "128"});

  EXPECT_EQ(result.exit_code, 2);
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
  const std::string path = TestTempPath("golden.jsonl");
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

  EXPECT_EQ(result.exit_code, 2);
  ExpectOneErrorLine(result, "/nonexistent/dcpsched/golden.jsonl");
  EXPECT_EQ(LastLine(result.out), "0 passed, 0 failed");
}

TEST(CliTest, CheckGoldenNeedsAFile) {
  const CliResult result = RunCli({"check-golden"});

  EXPECT_EQ(result.exit_code, 2);
  ExpectOneErrorLine(result, "FILE is required");
}


// ---------------------------------------------------------------------------
// dcpsched verify

// G = 2, mslpr 10, one microbatch: rank 0 holds samples 1 and 2 (6 + 4
// tokens), rank 1 holds 3 and 4 (5 + 5). It keeps every invariant.
json GoodScheduleFile() {
  return json::parse(R"({
    "format": "dcpsched.schedule.v1",
    "total_gpus": 2, "max_seq_len_per_rank": 10,
    "samples": [[1, 6], [2, 4], [3, 5], [4, 5]],
    "groups": [[[1, 2], [3, 4]]]})");
}

CliResult VerifyDocument(const json& document) {
  const std::string path = TestTempPath("schedule.json");
  WriteFile(path, document.dump());
  CliResult result = RunCli({"verify", path});
  std::remove(path.c_str());
  return result;
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

TEST(CliTest, VerifyAcceptsAGoodScheduleFile) {
  const CliResult result = VerifyDocument(GoodScheduleFile());

  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_EQ(result.out,
            "ok: 1 microbatch of G = 2 ranks, 4 samples; invariants 1-6, 8 and "
            "11 hold (docs/specification.md)\n");
  EXPECT_EQ(result.err, "");
}

TEST(CliTest, VerifyReportsARemovedId) {
  json document = GoodScheduleFile();
  document["groups"][0][0] = json::array({1});

  const CliResult result = VerifyDocument(document);

  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out,
            "invariant 2 (each sample once): 1 input sample(s) in no "
            "microbatch: ids 2\n");
  EXPECT_EQ(result.err, "");
}

TEST(CliTest, VerifyReportsAnIdInTwoMicrobatches) {
  json document = GoodScheduleFile();
  document["groups"].push_back(json::parse("[[3], [3]]"));

  const CliResult result = VerifyDocument(document);

  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out,
            "invariant 2 (each sample once): sample 3 is in microbatch 0 and "
            "again in microbatch 1 rank 0\n");
}

TEST(CliTest, VerifyReportsAnIdTwiceOnOneRank) {
  json document = GoodScheduleFile();
  document["groups"][0][1] = json::array({3, 4, 3});

  const CliResult result = VerifyDocument(document);

  EXPECT_EQ(result.exit_code, 1);
  const std::vector<std::string> lines = Lines(result.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0],
            "invariant 2 (each sample once): microbatch 0 rank 1 holds sample "
            "3 twice");
}

TEST(CliTest, VerifyReportsAnEmptiedRankAndItsMissingIds) {
  json document = GoodScheduleFile();
  document["groups"][0][1] = json::array();

  const CliResult result = VerifyDocument(document);

  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(Lines(result.out),
            (std::vector<std::string>{
                "invariant 1 (no empty rank): microbatch 0 rank 1 holds no "
                "sample",
                "invariant 2 (each sample once): 2 input sample(s) in no "
                "microbatch: ids 3, 4"}));
}

TEST(CliTest, VerifyAcceptsTheJsonOfScheduleAndCatchesItsTampering) {
  for (const char* scheduler : {"packing_aware", "legacy"}) {
    SCOPED_TRACE(scheduler);
    const CliResult scheduled = RunCli(
        {"schedule", "--format", "json", "--scheduler", scheduler, "--vpp", "4"});
    ASSERT_EQ(scheduled.exit_code, 0) << scheduled.err;
    json document = json::parse(scheduled.out);

    const CliResult good = VerifyDocument(document);
    EXPECT_EQ(good.exit_code, 0) << good.out << good.err;
    EXPECT_TRUE(absl::StartsWith(good.out, "ok: ")) << good.out;
    EXPECT_TRUE(absl::StrContains(good.out, " of G = 8 ranks, 256 samples"))
        << good.out;

    document["groups"][0][7] = json::array();
    const CliResult emptied = VerifyDocument(document);
    EXPECT_EQ(emptied.exit_code, 1);
    EXPECT_TRUE(absl::StrContains(
        emptied.out,
        "invariant 1 (no empty rank): microbatch 0 rank 7 holds no sample\n"))
        << emptied.out;
  }
}

TEST(CliTest, VerifyFindsTheVppMultipleBroken) {
  json document = GoodScheduleFile();
  document["vpp_group"] = 2;

  const CliResult result = VerifyDocument(document);

  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out,
            "invariant 8 (VPP multiple): 1 microbatches is not a multiple of "
            "vpp_group=2\n");
}

TEST(CliTest, VerifyChecksTheSequenceCapOfTheFile) {
  json document = GoodScheduleFile();
  document["max_num_seqs"] = 2;
  CliResult result = VerifyDocument(document);
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_EQ(result.out,
            "ok: 1 microbatch of G = 2 ranks, 4 samples; invariants 1-6, 8, "
            "10 (max_num_seqs 2) and 11 hold (docs/specification.md)\n");

  document["max_num_seqs"] = 1;
  result = VerifyDocument(document);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out,
            "invariant 10 (sequence cap): microbatch 0 rank 0 holds 2 samples "
            "> max_num_seqs 1 (ids 1, 2)\n"
            "invariant 10 (sequence cap): microbatch 0 rank 1 holds 2 samples "
            "> max_num_seqs 1 (ids 3, 4)\n");
}

// schedule --format json under a cap writes it in "parameters", so verify
// judges the schedule against it.
TEST(CliTest, ScheduleUnderACapVerifiesUnderIt) {
  const CliResult schedule =
      RunCli({"schedule", "--samples", "64", "--dp", "2", "--cp", "2",
              "--max-num-seqs", "2", "--format", "json"});
  ASSERT_EQ(schedule.exit_code, 0) << schedule.err;
  EXPECT_EQ(json::parse(schedule.out)["parameters"]["max_num_seqs"], 2);
  const CliResult verify = RunCliWithInput({"verify", "-"}, schedule.out);
  EXPECT_EQ(verify.exit_code, 0) << verify.out;
  EXPECT_TRUE(absl::StrContains(verify.out, "invariants 1-6, 8, 10 (max_num_seqs 2) and 11 hold"))
      << verify.out;
}

TEST(CliTest, ScheduleLegacyRefusesACap) {
  const CliResult result = RunCli({"schedule", "--scheduler", "legacy", "--samples", "8",
                                   "--max-num-seqs", "2"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(result.err, "legacy scheduler takes no cap")) << result.err;
}

// Invariant 11: schedules Megatron-LM's runtime cannot run. At G = 12 it has
// groups of 1, 2, 4 and 12 only; on 8 ranks it has blocks 0-3 and 4-7; and a
// rank splits every sample it holds over its first sample's group.
TEST(CliTest, VerifyReportsGroupsTheRuntimeDoesNotHave) {
  const CliResult eight_of_twelve = VerifyDocument(json::parse(R"({
    "format": "dcpsched.schedule.v1", "total_gpus": 12, "max_seq_len_per_rank": 2048,
    "samples": [[0, 10000], [1, 500], [2, 500], [3, 500], [4, 500], [5, 500]],
    "groups": [[[0], [0], [0], [0], [0], [0], [0], [0], [1, 2], [1, 2], [3, 4], [5]]]})"));
  EXPECT_EQ(eight_of_twelve.exit_code, 1) << eight_of_twelve.err;
  EXPECT_EQ(eight_of_twelve.out,
            "invariant 11 (runtime groups): microbatch 0 ranks 0-7: each runs its first sample 0 "
            "on a CP group of size 8 (ranks 0-7), a size Megatron-LM's runtime does not create "
            "at total_gpus=12: it creates 1, 2, 4 and 12 (all ranks), so the group lookup fails "
            "(KeyError)\n");

  const CliResult misaligned = VerifyDocument(json::parse(R"({
    "format": "dcpsched.schedule.v1", "total_gpus": 8, "max_seq_len_per_rank": 100,
    "samples": [[0, 50], [1, 50], [2, 300], [3, 50], [4, 50]],
    "groups": [[[0], [1], [2], [2], [2], [2], [3], [4]]]})"));
  EXPECT_EQ(misaligned.exit_code, 1);
  EXPECT_THAT(misaligned.out,
              HasSubstr("invariant 11 (runtime groups): microbatch 0 ranks 2-5: each gets the "
                        "runtime's CP group of size 4 (ranks 0-3, from its first sample 2), but "
                        "sample 2 is held by ranks 2-5"));

  const CliResult nested = VerifyDocument(json::parse(R"({
    "format": "dcpsched.schedule.v1", "total_gpus": 4, "max_seq_len_per_rank": 100,
    "samples": [[0, 100], [1, 100], [2, 100]],
    "groups": [[[0, 1], [0, 1], [1, 2], [1, 2]]]})"));
  EXPECT_EQ(nested.exit_code, 1);
  EXPECT_THAT(nested.out, HasSubstr("microbatch 0 ranks 0-1: each gets the runtime's CP group of "
                                    "size 2 (ranks 0-1, from its first sample 0), but sample 1 "
                                    "is held by ranks 0-3"));
  EXPECT_THAT(nested.out, HasSubstr("microbatch 0 ranks 2-3: each gets the runtime's CP group of "
                                    "size 4 (ranks 0-3, from its first sample 1), but sample 2 "
                                    "is held by ranks 2-3"));
}

TEST(CliTest, ScheduleRefusesWhatTheRuntimeCannotRun) {
  const std::string lengths = TestTempPath("lengths.txt");
  WriteFile(lengths, "10000\n500\n500\n500\n500\n500\n");
  for (const std::string scheduler : {"packing_aware", "legacy"}) {
    const CliResult result = RunCli({"schedule", "--lengths", lengths, "--total-gpus", "12",
                                     "--mslpr", "2048", "--scheduler", scheduler});
    EXPECT_EQ(result.exit_code, 2) << scheduler;
    EXPECT_THAT(result.err, HasSubstr("upstream returns a schedule its runtime cannot run: "
                                      "invariant 11 (runtime groups): microbatch 0 ranks 0-7"))
        << scheduler;
  }
  std::remove(lengths.c_str());
}

TEST(CliTest, VerifyReadsStandardInput) {
  const CliResult result =
      RunCliWithInput({"verify", "-"}, GoodScheduleFile().dump());

  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(absl::StartsWith(result.out, "ok: 1 microbatch")) << result.out;
}

TEST(CliTest, VerifyMalformedJsonIsExitTwoWithTheReason) {
  const std::string path = TestTempPath("schedule.json");
  WriteFile(path, "{\"total_gpus\": 2,\n \"groups\": [[[1, 2], [3, 4]]\n");

  const CliResult result = RunCli({"verify", path});

  EXPECT_EQ(result.exit_code, 2);
  ExpectOneErrorLine(result, absl::StrCat(path, ": not valid JSON: the text "
                                                "ends at line 3"));
  EXPECT_EQ(result.out, "");
  std::remove(path.c_str());
}

TEST(CliTest, VerifySchemaErrorsNameTheField) {
  json missing = GoodScheduleFile();
  missing.erase("max_seq_len_per_rank");
  json negative = GoodScheduleFile();
  negative["samples"][2][1] = -5;
  json wrong_type = GoodScheduleFile();
  wrong_type["groups"][0][1] = "3 4";

  const CliResult missing_result = VerifyDocument(missing);
  const CliResult negative_result = VerifyDocument(negative);
  const CliResult wrong_type_result = VerifyDocument(wrong_type);

  EXPECT_EQ(missing_result.exit_code, 2);
  ExpectOneErrorLine(missing_result,
                     "field \"max_seq_len_per_rank\": missing");
  EXPECT_EQ(negative_result.exit_code, 2);
  ExpectOneErrorLine(negative_result,
                     "field \"samples[2][1] (len)\": length -5 of sample 3 "
                     "is not positive");
  EXPECT_EQ(wrong_type_result.exit_code, 2);
  ExpectOneErrorLine(wrong_type_result,
                     "field \"groups[0][1]\": not an array (got string)");
}

TEST(CliTest, VerifyFailedRunIsExitTwo) {
  // A run that failed is written as ok: false with its error and no groups.
  json document = json::parse(RunCli({"--format", "json"}).out);
  document["ok"] = false;
  document["error"] = "sample 3 needs CP size 64";
  document.erase("groups");

  const CliResult result = VerifyDocument(document);

  EXPECT_EQ(result.exit_code, 2);
  ExpectOneErrorLine(result, "failed run");
}

// ---------------------------------------------------------------------------
// --compact: the compact form, dcpsched.schedule_run.v2

// The default run (G = 8, 256 samples) in compact form.
json CompactRunDocument() {
  const CliResult scheduled = RunCli({"schedule", "--compact", "--format", "json"});
  EXPECT_EQ(scheduled.exit_code, 0) << scheduled.err;
  return json::parse(scheduled.out);
}

TEST(CliTest, CompactJsonHoldsTheGroupsOfThePerRankJson) {
  const json compact = CompactRunDocument();
  const json per_rank = json::parse(RunCli({"schedule", "--format", "json"}).out);

  EXPECT_EQ(compact["format"], "dcpsched.schedule_run.v2");
  EXPECT_FALSE(compact.contains("groups"));
  ASSERT_EQ(compact["microbatches"].size(), per_rank["microbatches"].size());
  for (std::size_t m = 0; m < compact["microbatches"].size(); ++m) {
    const json& microbatch = compact["microbatches"][m];
    EXPECT_FALSE(microbatch.contains("rank_work"));
    EXPECT_FALSE(microbatch.contains("rank_tokens"));
    EXPECT_EQ(microbatch["cp_groups"], per_rank["microbatches"][m]["cp_groups"]);
    // The groups expand to exactly the per-rank lists.
    std::vector<json> ranks;
    for (const json& group : microbatch["cp_groups"]) {
      for (int r = 0; r < group["size"].get<int>(); ++r) ranks.push_back(group["ids"]);
    }
    EXPECT_EQ(json(ranks), per_rank["groups"][m]);
  }
  EXPECT_EQ(compact["quality"], per_rank["quality"]);
}

TEST(CliTest, VerifyAcceptsTheCompactJsonOfSchedule) {
  const CliResult result = VerifyDocument(CompactRunDocument());

  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_TRUE(absl::StartsWith(
      result.out, "ok: 16 microbatches of G = 8 ranks, 256 samples"))
      << result.out;
}

TEST(CliTest, VerifyReportsTheViolationOfAWrongCompactSchedule) {
  json document = CompactRunDocument();
  json& groups = document["microbatches"][0]["cp_groups"];
  const std::int64_t moved = groups[0]["ids"][0].get<std::int64_t>();
  // The id is also placed in microbatch 1's first group: there twice.
  document["microbatches"][1]["cp_groups"][0]["ids"].push_back(moved);

  const CliResult result = VerifyDocument(document);

  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_TRUE(absl::StrContains(
      result.out, absl::StrCat("invariant 2 (each sample once): sample ", moved,
                               " is in microbatch 0 and again in microbatch 1")))
      << result.out;
}

TEST(CliTest, VerifyReportsACompactMicrobatchOfTheWrongWidth) {
  json document = CompactRunDocument();
  json& groups = document["microbatches"][0]["cp_groups"];
  groups.back()["size"] = groups.back()["size"].get<int>() + 1;

  const CliResult result = VerifyDocument(document);

  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_TRUE(absl::StrContains(result.out, "invariant 1 (no empty rank)"))
      << result.out;
}

TEST(CliTest, VerifyCompactGapBetweenGroupsIsExitTwo) {
  json document = CompactRunDocument();
  json& groups = document["microbatches"][2]["cp_groups"];
  ASSERT_GE(groups.size(), 2u);
  const int end = groups[0]["size"].get<int>();
  groups[1]["first_rank"] = end + 1;

  const CliResult result = VerifyDocument(document);

  EXPECT_EQ(result.exit_code, 2);
  ExpectOneErrorLine(
      result, absl::StrCat("field \"microbatches[2].cp_groups\": microbatch 2 "
                           "group 1 starts at rank ",
                           end + 1, " but group 0 ends at rank ", end - 1,
                           ": ranks ", end, "-", end, " are in no group (a gap)"));
  EXPECT_EQ(result.out, "");
}

TEST(CliTest, VerifyCompactOverlapOfGroupsIsExitTwo) {
  json document = CompactRunDocument();
  json& groups = document["microbatches"][2]["cp_groups"];
  ASSERT_GE(groups.size(), 2u);
  groups[1]["first_rank"] = 0;

  const CliResult result = VerifyDocument(document);

  EXPECT_EQ(result.exit_code, 2);
  ExpectOneErrorLine(result,
                     "field \"microbatches[2].cp_groups\": microbatch 2 group 1 "
                     "starts at rank 0 but group 0 ends at rank ");
  ExpectOneErrorLine(result, "are in two groups (an overlap)");
}

TEST(CliTest, VerifyUnknownScheduleRunVersionIsExitTwo) {
  json document = CompactRunDocument();
  document["format"] = "dcpsched.schedule_run.v9";

  const CliResult result = VerifyDocument(document);

  EXPECT_EQ(result.exit_code, 2);
  ExpectOneErrorLine(result,
                     "field \"format\": unknown format "
                     "\"dcpsched.schedule_run.v9\"; use \"dcpsched.schedule.v1\", "
                     "\"dcpsched.schedule_run.v1\" or \"dcpsched.schedule_run.v2\"");
}

TEST(CliTest, CompactNeedsJsonFormat) {
  const CliResult result = RunCli({"schedule", "--compact"});

  EXPECT_EQ(result.exit_code, 2);
  ExpectOneErrorLine(result, "add --format json");
}

TEST(CliTest, VerifyMissingFileIsExitTwo) {
  const CliResult result =
      RunCli({"verify", "/nonexistent/dcpsched/schedule.json"});

  EXPECT_EQ(result.exit_code, 2);
  ExpectOneErrorLine(result, "cannot open schedule file");
}

TEST(CliTest, VerifyNeedsAFile) {
  const CliResult result = RunCli({"verify"});

  EXPECT_EQ(result.exit_code, 2);
  ExpectOneErrorLine(result, "FILE is required");
}

// ---------------------------------------------------------------------------
// --svg

TEST(CliTest, ScheduleSvgDrawsTheChosenScheduler) {
  const std::string path = TestTempPath("picture.svg");
  std::remove(path.c_str());

  const CliResult with_svg = RunCli(
      {"schedule", "--scheduler", "legacy", "--format", "json", "--svg", path});
  const CliResult without_svg =
      RunCli({"schedule", "--scheduler", "legacy", "--format", "json"});

  ASSERT_EQ(with_svg.exit_code, 0) << with_svg.err;
  EXPECT_EQ(with_svg.out, without_svg.out);  // the picture is extra
  const std::string svg = ReadWholeFile(path);
  EXPECT_TRUE(absl::StartsWith(svg, "<?xml")) << svg.substr(0, 100);
  EXPECT_TRUE(absl::StrContains(svg, "legacy: 20 microbatches"));
  const json document = json::parse(with_svg.out);
  std::size_t groups = 0;
  for (const json& microbatch : document["microbatches"]) {
    groups += microbatch["cp_groups"].size();
  }
  std::size_t drawn = 0;
  for (std::size_t at = svg.find("<g class=\"cp-group\"");
       at != std::string::npos; at = svg.find("<g class=\"cp-group\"", at + 1)) {
    ++drawn;
  }
  EXPECT_EQ(drawn, groups);
  std::remove(path.c_str());
}

TEST(CliTest, DefaultRunTakesSvg) {
  const std::string path = TestTempPath("picture.svg");

  const CliResult result = RunCli({"--svg", path});

  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(absl::StrContains(ReadWholeFile(path),
                                "packing_aware: 16 microbatches"));
  std::remove(path.c_str());
}

TEST(CliTest, UnwritableSvgIsAnError) {
  const CliResult result =
      RunCli({"schedule", "--svg", "/nonexistent/dcpsched/picture.svg"});

  EXPECT_EQ(result.exit_code, 3);
  ExpectOneErrorLine(result, "cannot write SVG file");
}

// ---------------------------------------------------------------------------
// dcpsched compare

TEST(CliTest, CompareTableHasEveryColumnAndScheduler) {
  const CliResult result = RunCli({"compare"});

  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(absl::StrContains(result.out, "G = 8 ranks (dp 2 x cp 4)"));
  EXPECT_TRUE(absl::StrContains(
      result.out,
      "\nscheduler       efficiency  microbatches  lower bound  max rank "
      "work  critical-path work  time ms\n"))
      << result.out;
  const json packing_aware = json::parse(RunCli({"--format", "json"}).out);
  const std::string row = absl::StrFormat(
      "\npacking_aware       %.4f            16           16      %.4g",
      packing_aware["quality"]["balance_efficiency"].get<double>(),
      packing_aware["quality"]["max_rank_work"].get<double>());
  EXPECT_TRUE(absl::StrContains(result.out, row)) << row << "\n" << result.out;
  EXPECT_TRUE(absl::StrContains(result.out, "\ndp_balanced  "));
  EXPECT_TRUE(absl::StrContains(result.out, "\nlegacy  "));
}

TEST(CliTest, CompareJsonMatchesEachSchedulersOwnRun) {
  const std::vector<std::string> workload = {"--seed", "11", "--samples", "100",
                                             "--vpp", "2"};
  std::vector<std::string> arguments = {"compare", "--format", "json"};
  arguments.insert(arguments.end(), workload.begin(), workload.end());

  const CliResult result = RunCli(arguments);

  ASSERT_EQ(result.exit_code, 0) << result.err;
  ASSERT_EQ(std::count(result.out.begin(), result.out.end(), '\n'), 1);
  const json document = json::parse(result.out);
  EXPECT_EQ(document["format"], "dcpsched.compare.v1");
  EXPECT_EQ(document["workload"]["num_samples"], 100);
  EXPECT_EQ(document["parameters"]["vpp_group"], 2);
  ASSERT_EQ(document["runs"].size(), 3u);
  const std::vector<std::string> schedulers = {"packing_aware", "dp_balanced",
                                               "legacy"};
  for (std::size_t i = 0; i < schedulers.size(); ++i) {
    const json& run = document["runs"][i];
    EXPECT_EQ(run["scheduler"], schedulers[i]);
    EXPECT_EQ(run["ok"], true);
    EXPECT_GE(run["elapsed_ms"].get<double>(), 0.0);
    std::vector<std::string> single = {"schedule", "--format", "json",
                                       "--scheduler", schedulers[i]};
    single.insert(single.end(), workload.begin(), workload.end());
    EXPECT_EQ(run["quality"], json::parse(RunCli(single).out)["quality"])
        << schedulers[i];
  }
}

TEST(CliTest, CompareShowsAFailingSchedulerAndSucceeds) {
  const CliResult result = RunCli({"compare", "--total-gpus", "8"});

  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(absl::StrContains(result.out, "\ndp_balanced     error: "))
      << result.out;
  EXPECT_EQ(result.err, "");
}

TEST(CliTest, CompareWithEverySchedulerFailingIsAnError) {
  const CliResult result = RunCli({"compare", "--mslpr", "128"});

  EXPECT_EQ(result.exit_code, 2);
  ExpectOneErrorLine(result, "no scheduler can schedule this batch");
  EXPECT_TRUE(absl::StrContains(result.out, "\npacking_aware   error: "));
}

// The exit-status contract (cli/exit_codes.h), the same for every
// subcommand: 0 ok, 1 wrong answer, 2 usage or input error, 3 I/O or
// internal error.
TEST(CliTest, EverySubcommandKeepsTheExitStatusContract) {
  const std::string schedule_file = TestTempPath("schedule.json");
  WriteFile(schedule_file, GoodScheduleFile().dump());
  json broken = GoodScheduleFile();
  broken["groups"][0][0] = json::array({1});
  const std::string broken_file = TestTempPath("broken.json");
  WriteFile(broken_file, broken.dump());
  const std::string golden = std::string(DCPSCHED_GOLDEN_DIR) + "/vpp_align.jsonl";
  const std::string empty = TestTempPath("empty.jsonl");
  WriteFile(empty, "");
  const std::string missing = "/nonexistent/dcpsched/file";
  struct Case {
    std::vector<std::string> arguments;
    int exit_code;
  };
  const std::vector<Case> cases = {
      {{"schedule", "--samples", "16"}, 0},
      {{"compare", "--samples", "16"}, 0},
      {{"verify", schedule_file}, 0},
      {{"check-golden", golden}, 0},
      {{"--version"}, 0},
      {{"verify", broken_file}, 1},
      {{"schedule", "--no-such-flag"}, 2},
      {{"compare", "--dp", "abc"}, 2},
      {{"verify"}, 2},
      {{"check-golden"}, 2},
      {{"schedule", "--lengths", missing}, 2},
      {{"compare", "--lengths", missing}, 2},
      {{"verify", missing}, 2},
      {{"check-golden", missing}, 2},
      {{"check-golden", empty}, 2},
      {{"schedule", "--mslpr", "128"}, 2},
      {{"schedule", "--svg", "/nonexistent/dcpsched/picture.svg"}, 3},
  };
  for (const Case& c : cases) {
    const CliResult result = RunCli(c.arguments);
    EXPECT_TRUE(result.exited);
    EXPECT_EQ(result.exit_code, c.exit_code)
        << absl::StrJoin(c.arguments, " ") << "\n" << result.err;
    // A wrong answer is the command's output; any other failure says why.
    const std::string& why = c.exit_code == 1 ? result.out : result.err;
    EXPECT_EQ(why.empty(), c.exit_code == 0) << absl::StrJoin(c.arguments, " ");
  }
  std::remove(schedule_file.c_str());
  std::remove(broken_file.c_str());
  std::remove(empty.c_str());
}

// A failed write of the output is exit 3 with a message, for every
// subcommand that writes one.
TEST(CliTest, AFailedWriteIsExitThreeWithAMessage) {
  const std::string schedule_file = TestTempPath("schedule.json");
  WriteFile(schedule_file, GoodScheduleFile().dump());
  const std::string golden = std::string(DCPSCHED_GOLDEN_DIR) + "/vpp_align.jsonl";
  for (const std::vector<std::string>& arguments :
       std::vector<std::vector<std::string>>{{"schedule", "--samples", "16"},
                                             {"schedule", "--format", "json"},
                                             {"compare"},
                                             {"verify", schedule_file},
                                             {"check-golden", golden}}) {
    const CliResult result = RunCliWithInput(arguments, "", /*stdout_full=*/true);
    EXPECT_EQ(result.exit_code, 3) << absl::StrJoin(arguments, " ");
    EXPECT_TRUE(absl::StrContains(result.err, "cannot write the output"))
        << absl::StrJoin(arguments, " ") << ": " << result.err;
  }
  std::remove(schedule_file.c_str());
}

// 4096 samples of up to 2^26 tokens at G = 65536 need about one microbatch
// each: the per-rank JSON would hold some 4096 x 65536 rank lists. It is
// refused before it is built, with exit 2 and a message naming --compact,
// under a 2 GiB address-space limit (not under AddressSanitizer, whose
// shadow memory needs far more address space than that).
TEST(CliTest, PerRankJsonTooLargeIsRefusedNamingCompact) {
  const std::string path = TestTempPath("huge.txt");
  std::string lengths;
  std::uint64_t state = 5154;
  for (int i = 0; i < 4096; ++i) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    absl::StrAppend(&lengths, 1 + (state >> 38) % (std::uint64_t{1} << 26), "\n");
  }
  WriteFile(path, lengths);
  std::vector<std::string> command = {DCPSCHED_CLI_PATH, "schedule", "--lengths", path,
                                      "--total-gpus", "65536", "--format", "json"};
  if (!kAddressSanitizer) {
    command.insert(command.begin(),
                   {"/bin/sh", "-c", "ulimit -v 2097152 && exec \"$0\" \"$@\""});
  }
  const CliResult result = RunProgram(command, "");
  EXPECT_TRUE(result.exited) << "killed by a signal: " << result.err;
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_EQ(result.out, "");
  ExpectOneErrorLine(result, "add --compact");
  command.push_back("--compact");
  const CliResult compact = RunProgram(command, "");
  EXPECT_EQ(compact.exit_code, 0) << compact.err;
  std::remove(path.c_str());
}

// On 8193 samples that need a microbatch each, legacy would rescan the
// batch 8193 times: "auto" skips it and says why; naming it runs it; none
// drops the table.
TEST(CliTest, CompareChoosesTheReportsComparisons) {
  const std::string path = TestTempPath("ones.txt");
  std::string ones;
  for (int i = 0; i < 8193; ++i) ones += "1\n";
  WriteFile(path, ones);
  const CliResult automatic =
      RunCli({"schedule", "--lengths", path, "--total-gpus", "1", "--mslpr", "1"});
  EXPECT_EQ(automatic.exit_code, 0) << automatic.err;
  EXPECT_TRUE(absl::StrContains(
      automatic.out, "\nlegacy          skipped: its step rescans every remaining sample "
                     "once per microbatch, about 8193 samples x 8193 microbatches"))
      << LastLine(automatic.out);
  EXPECT_TRUE(absl::StrContains(automatic.out, "\ndp_balanced         1.0000"));

  const CliResult named = RunCli({"schedule", "--samples", "64", "--compare", "legacy,packing_aware"});
  EXPECT_EQ(named.exit_code, 0) << named.err;
  EXPECT_TRUE(absl::StrContains(named.out, "\nlegacy              0.")) << named.out;
  EXPECT_FALSE(absl::StrContains(named.out, "\ndp_balanced "));

  const CliResult none = RunCli({"schedule", "--samples", "64", "--compare", "none"});
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_FALSE(absl::StrContains(none.out, "comparison on the same workload"));

  const CliResult unknown = RunCli({"schedule", "--compare", "fastest"});
  EXPECT_EQ(unknown.exit_code, 2);
  ExpectOneErrorLine(unknown, "--compare: unknown scheduler");
  const CliResult with_json = RunCli({"schedule", "--compare", "none", "--format", "json"});
  EXPECT_EQ(with_json.exit_code, 2);
  ExpectOneErrorLine(with_json, "--compare chooses the comparison table");
  std::remove(path.c_str());
}

TEST(CliTest, VersionNamesTheProgram) {
  const CliResult result = RunCli({"--version"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_TRUE(absl::StartsWith(result.out, "dcpsched ")) << result.out;
}

TEST(CliTest, IntegerFlagsSayNotAnIntegerOrOutOfRange) {
  struct Case {
    std::string flag, value, says;
  };
  for (const Case& c : std::vector<Case>{{"--total-gpus", "abc", "not an integer"},
                                         {"--total-gpus", "70000", "out of range"},
                                         {"--total-gpus", "+8", "not an integer"},
                                         {"--total-gpus", "8.0", "not an integer"},
                                         {"--seed", "-1", "out of range"},
                                         {"--seed", "18446744073709551616", "out of range"},
                                         {"--max-num-seqs", "9223372036854775808", "out of range"},
                                         {"--max-num-seqs", "0", "out of range"},
                                         {"--samples", "1e3", "not an integer"}}) {
    const CliResult result = RunCli({"schedule", c.flag, c.value});
    EXPECT_EQ(result.exit_code, 2) << c.flag << " " << c.value;
    EXPECT_TRUE(absl::StrContains(result.err, c.flag)) << result.err;
    EXPECT_TRUE(absl::StrContains(result.err, c.says)) << c.flag << " " << c.value << ": " << result.err;
  }
  // 2^64 - 1 is a seed, and a different one from 0.
  EXPECT_EQ(RunCli({"schedule", "--seed", "18446744073709551615", "--samples", "4"}).exit_code, 0);
}

TEST(CliTest, CheckGoldenDashReadsStandardInput) {
  const std::string lines =
      ReadWholeFile(std::string(DCPSCHED_GOLDEN_DIR) + "/vpp_align.jsonl");
  const CliResult result = RunCliWithInput({"check-golden", "-"}, lines);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(absl::StrContains(result.out, " passed, 0 failed")) << result.out;
  EXPECT_EQ(RunCliWithInput({"check-golden", "-"}, "").exit_code, 2);
}

TEST(CliTest, LengthsDashReadsStandardInput) {
  const CliResult result =
      RunCliWithInput({"schedule", "--lengths", "-", "--format", "json"}, "4096\n100\n");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(json::parse(result.out)["samples"], json::parse("[[0, 4096], [1, 100]]"));
}

TEST(CliTest, CompareTakesTheWorkloadFlags) {
  const std::string path = TestTempPath("lengths.txt");
  WriteFile(path, "5,4096\n6,1000\n7,1000\n8,100\n");

  const CliResult from_file = RunCli({"compare", "--lengths", path});
  const CliResult bad_flag = RunCli({"compare", "--mslpr", "0"});
  const CliResult conflicting =
      RunCli({"compare", "--lengths", path, "--seed", "3"});

  EXPECT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_TRUE(absl::StrContains(from_file.out, "workload   4 samples"))
      << from_file.out;
  EXPECT_EQ(bad_flag.exit_code, 2);
  ExpectOneErrorLine(bad_flag, "--mslpr");
  EXPECT_EQ(conflicting.exit_code, 2);
  ExpectOneErrorLine(conflicting, "--lengths excludes --seed");
  std::remove(path.c_str());
}

TEST(CliTest, CompareSvgDrawsEachSchedulerThatSucceeded) {
  const std::string prefix = TestTempPath("compare.svg");
  const std::string stem = prefix.substr(0, prefix.size() - 4);

  const CliResult result =
      RunCli({"compare", "--total-gpus", "8", "--svg", prefix});

  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(absl::StrContains(ReadWholeFile(stem + "-packing_aware.svg"),
                                "packing_aware: "));
  EXPECT_TRUE(
      absl::StrContains(ReadWholeFile(stem + "-legacy.svg"), "legacy: "));
  // dp_balanced failed on dp 8 x cp 1: no picture.
  EXPECT_FALSE(std::ifstream(stem + "-dp_balanced.svg").good());
  std::remove((stem + "-packing_aware.svg").c_str());
  std::remove((stem + "-legacy.svg").c_str());
}

TEST(CliTest, HelpListsEverySubcommand) {
  const CliResult result = RunCli({"--help"});

  EXPECT_EQ(result.exit_code, 0);
  for (const char* subcommand :
       {"schedule", "compare", "verify", "check-golden"}) {
    EXPECT_TRUE(absl::StrContains(result.out, subcommand))
        << subcommand << "\n"
        << result.out;
  }
}

}  // namespace
}  // namespace dcpsched::cli_test
