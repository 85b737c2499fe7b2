// Runs every golden vector (tests/golden/*.jsonl, produced by the upstream
// Python scheduler) through the core, one test per case, and proves that the
// checker itself can fail: bad lines are rejected, and a tampered expectation
// is reported as a mismatch that says where it is.

#include "io/golden.h"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "core/compact_schedule.h"
#include "core/dp_balanced.h"
#include "core/legacy.h"
#include "core/packing_aware.h"
#include "core/types.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#ifndef DCPSCHED_GOLDEN_DIR
#error "DCPSCHED_GOLDEN_DIR must name the folder that holds the .jsonl files"
#endif

namespace dcpsched {
namespace {

using Json = nlohmann::json;

// One non-blank line of a golden file.
struct GoldenLine {
  std::string file;  // file name inside DCPSCHED_GOLDEN_DIR
  int line_number = 0;
  std::string text;
  std::string test_name;  // unique, alphanumerics and '_' only
};

void PrintTo(const GoldenLine& line, std::ostream* out) {
  *out << line.file << ":" << line.line_number;
}

std::string GoldenPath(absl::string_view file) {
  return absl::StrCat(DCPSCHED_GOLDEN_DIR, "/", file);
}

// The *.jsonl files of the golden folder, sorted by name.
std::vector<std::string> GoldenFiles() {
  std::vector<std::string> files;
  std::error_code error;
  for (std::filesystem::directory_iterator it(DCPSCHED_GOLDEN_DIR, error), end;
       !error && it != end; it.increment(error)) {
    if (it->path().extension() == ".jsonl") {
      files.push_back(it->path().filename().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The "name" of a JSON line, or "" if the line has none.
std::string CaseName(absl::string_view text) {
  const Json json = Json::parse(text.begin(), text.end(), /*cb=*/nullptr,
                                /*allow_exceptions=*/false);
  if (!json.is_object()) return "";
  const auto it = json.find("name");
  return it != json.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string SanitizedTestName(absl::string_view name) {
  std::string sanitized(name);
  for (char& c : sanitized) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return sanitized;
}

// Every non-blank line of every golden file, each with a unique test name
// made from its case name (or from file and line when it has none).
std::vector<GoldenLine> LoadGoldenLines() {
  std::vector<GoldenLine> lines;
  std::set<std::string> used_names;
  for (const std::string& file : GoldenFiles()) {
    std::ifstream in(GoldenPath(file));
    std::string text;
    for (int line_number = 1; std::getline(in, text); ++line_number) {
      if (absl::StripAsciiWhitespace(text).empty()) continue;
      std::string name = CaseName(text);
      if (name.empty()) name = absl::StrCat(file, "_line_", line_number);
      std::string test_name = SanitizedTestName(name);
      if (!used_names.insert(test_name).second) {
        test_name = SanitizedTestName(
            absl::StrCat(name, "_", file, "_line_", line_number));
        used_names.insert(test_name);
      }
      lines.push_back(GoldenLine{file, line_number, text, test_name});
    }
  }
  return lines;
}

// ---------------------------------------------------------------------------
// Every golden case.

class GoldenCaseTest : public testing::TestWithParam<GoldenLine> {};

TEST_P(GoldenCaseTest, MatchesUpstream) {
  const GoldenLine& line = GetParam();
  const absl::StatusOr<GoldenCase> golden_case = ParseGoldenCase(line.text);
  ASSERT_TRUE(golden_case.ok())
      << line.file << ":" << line.line_number << " " << golden_case.status();
  const absl::Status status = CheckGoldenCase(*golden_case);
  EXPECT_TRUE(status.ok()) << line.file << ":" << line.line_number << " "
                           << golden_case->name << ": " << status.message();
}

// The core's schedule of the case as upstream returns it, built in compact
// form by the case's scheduler (runnable or not: CheckGoldenCase checks the
// refusal of unrunnable ones).
absl::StatusOr<CompactSchedule> CompactScheduleOf(const GoldenCase& golden_case) {
  if (golden_case.scheduler == "packing_aware") {
    return ScheduleDynamicCpAsUpstream(golden_case.samples, DynamicCpOptionsOf(golden_case));
  }
  if (golden_case.scheduler == "legacy") {
    return ScheduleLegacyAsUpstream(golden_case.samples, DynamicCpOptionsOf(golden_case));
  }
  std::vector<std::int64_t> lens;
  for (const Sample& sample : golden_case.samples) lens.push_back(sample.len);
  return ScheduleDpBalancedCompact(lens, DpBalancedOptionsOf(golden_case));
}

// On every schedule case upstream accepted: the compact form the scheduler
// builds expands to upstream's schedule, and the per-rank view of every rank
// (RankIds) is upstream's slice for that rank.
TEST_P(GoldenCaseTest, CompactFormAndRankViewMatchUpstream) {
  const GoldenLine& line = GetParam();
  const absl::StatusOr<GoldenCase> golden_case = ParseGoldenCase(line.text);
  ASSERT_TRUE(golden_case.ok()) << golden_case.status();
  if (golden_case->kind != "schedule" || !golden_case->expect_ok) return;
  const Schedule& expected = *golden_case->expect_schedule;
  const absl::StatusOr<CompactSchedule> compact = CompactScheduleOf(*golden_case);
  ASSERT_TRUE(compact.ok()) << compact.status();
  const absl::StatusOr<Schedule> expanded = ExpandSchedule(*compact);
  ASSERT_TRUE(expanded.ok()) << expanded.status();
  EXPECT_EQ(*expanded, expected);
  EXPECT_EQ(*compact, CompactFromRanks(expected));
  if (expected.microbatches.empty()) return;
  const std::size_t width = expected.microbatches.front().rank_ids.size();
  for (std::size_t rank = 0; rank < width; ++rank) {
    std::vector<std::vector<SampleId>> slice;
    for (const Microbatch& microbatch : expected.microbatches) {
      slice.push_back(microbatch.rank_ids[rank]);
    }
    const absl::StatusOr<std::vector<std::vector<SampleId>>> view =
        RankIds(*compact, static_cast<std::int64_t>(rank));
    ASSERT_TRUE(view.ok()) << view.status();
    EXPECT_EQ(*view, slice) << "rank " << rank;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Upstream, GoldenCaseTest, testing::ValuesIn(LoadGoldenLines()),
    [](const testing::TestParamInfo<GoldenLine>& info) {
      return info.param.test_name;
    });

// The parameterized test above passes vacuously if files go missing; this
// one does not.
TEST(GoldenFilesTest, EveryExpectedFileIsThereInFull) {
  struct ExpectedFile {
    const char* name;
    int min_cases;
  };
  constexpr ExpectedFile kExpectedFiles[] = {
      {"dp_balanced_schedule.jsonl", 150},
      {"legacy_schedule.jsonl", 150},
      {"packing_aware_schedule.jsonl", 300},
      {"packing_aware_step.jsonl", 300},
      {"vpp_align.jsonl", 150},
      // Megatron-LM PR #6479's own answers, max_num_seqs set on about half.
      {"packing_aware_schedule_pr6479.jsonl", 200},
      {"packing_aware_step_pr6479.jsonl", 200},
  };
  std::map<std::string, int> cases_per_file;
  for (const GoldenLine& line : LoadGoldenLines()) ++cases_per_file[line.file];

  int total = 0;
  for (const ExpectedFile& expected : kExpectedFiles) {
    EXPECT_GE(cases_per_file[expected.name], expected.min_cases)
        << GoldenPath(expected.name);
    total += cases_per_file[expected.name];
  }
  EXPECT_GE(total, 1450);
}

// The PR #6479 vectors exercise the cap: each file holds cases with and
// without max_num_seqs, and on some capped cases upstream's answer is not
// the uncapped one (the core, run without the cap, fails them).
TEST(GoldenFilesTest, Pr6479VectorsExerciseTheCap) {
  for (const char* file : {"packing_aware_schedule_pr6479.jsonl",
                           "packing_aware_step_pr6479.jsonl"}) {
    int capped = 0;
    int uncapped = 0;
    int cap_matters = 0;
    for (const GoldenLine& line : LoadGoldenLines()) {
      if (line.file != file) continue;
      absl::StatusOr<GoldenCase> golden_case = ParseGoldenCase(line.text);
      ASSERT_TRUE(golden_case.ok()) << golden_case.status();
      if (!golden_case->max_num_seqs.has_value()) {
        ++uncapped;
        continue;
      }
      ++capped;
      GoldenCase without_cap = *std::move(golden_case);
      without_cap.max_num_seqs.reset();
      if (without_cap.expect_ok && !CheckGoldenCase(without_cap).ok()) ++cap_matters;
    }
    EXPECT_GT(capped, 50) << file;
    EXPECT_GT(uncapped, 50) << file;
    EXPECT_GT(cap_matters, 10) << file;
  }
}

// ---------------------------------------------------------------------------
// ParseGoldenCase.

// A valid line: two samples, one with an id near the top of int64 and a
// negative len (allowed in a golden case; the core rejects it).
constexpr absl::string_view kValidLine =
    R"({"name":"t-1","kind":"schedule","scheduler":"legacy",)"
    R"("total_gpus":2,"dp_size":2,"cp_size":1,"max_seq_len_per_rank":8,)"
    R"("min_cp_size":1,"vpp_group":null,"max_num_seqs":3,)"
    R"("samples":[[4609135766238959385,-52],[1,3]],)"
    R"("expect":{"ok":true,"groups":[[[1],[1]]]}})";

// kValidLine with the JSON text `from` replaced by `to` (which must occur).
std::string ValidLineWith(absl::string_view from, absl::string_view to) {
  EXPECT_TRUE(absl::StrContains(kValidLine, from)) << from;
  return absl::StrReplaceAll(kValidLine, {{from, to}});
}

// kValidLine after `edit` changed its JSON.
std::string ValidLineEdited(const std::function<void(Json&)>& edit) {
  Json json = Json::parse(kValidLine.begin(), kValidLine.end());
  edit(json);
  return json.dump();
}

TEST(ParseGoldenCaseTest, ReadsEveryField) {
  const absl::StatusOr<GoldenCase> parsed = ParseGoldenCase(
      std::string(kValidLine));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->name, "t-1");
  EXPECT_EQ(parsed->kind, "schedule");
  EXPECT_EQ(parsed->scheduler, "legacy");
  EXPECT_EQ(parsed->total_gpus, 2);
  EXPECT_EQ(parsed->dp_size, 2);
  EXPECT_EQ(parsed->cp_size, 1);
  EXPECT_EQ(parsed->max_seq_len_per_rank, 8);
  EXPECT_EQ(parsed->min_cp_size, 1);
  EXPECT_EQ(parsed->vpp_group, std::nullopt);
  EXPECT_EQ(parsed->max_num_seqs, std::optional<std::int64_t>(3));
  EXPECT_EQ(parsed->samples,
            (std::vector<Sample>{{4609135766238959385, -52}, {1, 3}}));
  EXPECT_TRUE(parsed->expect_ok);
  ASSERT_TRUE(parsed->expect_schedule.has_value());
  EXPECT_EQ(*parsed->expect_schedule, (Schedule{{Microbatch{{{1}, {1}}}}}));
  EXPECT_FALSE(parsed->expect_step.has_value());
}

TEST(ParseGoldenCaseTest, ReadsTheEndsOfInt64) {
  const absl::StatusOr<GoldenCase> parsed = ParseGoldenCase(ValidLineWith(
      "[[4609135766238959385,-52],[1,3]]",
      "[[9223372036854775807,0],[-9223372036854775808,-1]]"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->samples,
            (std::vector<Sample>{
                {std::numeric_limits<std::int64_t>::max(), 0},
                {std::numeric_limits<std::int64_t>::min(), -1}}));
}

TEST(ParseGoldenCaseTest, ReadsExecTimesCorrectlyRounded) {
  const std::string line = ValidLineEdited([](Json& json) {
    json["kind"] = "step";
    json["scheduler"] = "packing_aware";
    json["expect"] = Json::parse(
        R"({"ok":true,"micro_batches":[[3],[3],[3],[3]],)"
        R"("sample_ids":[[1],[1],[1],[1]],"leftovers":[[4609135766238959385,-52]],)"
        R"("exec_times":[0.1,5e-324,1.7976931348623157e308,2]})");
  });
  const absl::StatusOr<GoldenCase> parsed = ParseGoldenCase(line);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_TRUE(parsed->expect_step.has_value());
  const std::vector<double>& times = parsed->expect_step->rank_work;
  ASSERT_EQ(times.size(), 4u);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(times[0]), 0x3FB999999999999Au);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(times[1]), 1u);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(times[2]), 0x7FEFFFFFFFFFFFFFu);
  EXPECT_EQ(times[3], 2.0);
  EXPECT_EQ(parsed->expect_step->leftovers,
            (std::vector<Sample>{{4609135766238959385, -52}}));
}

TEST(ParseGoldenCaseTest, ReadsAnExpectedError) {
  const absl::StatusOr<GoldenCase> parsed = ParseGoldenCase(ValidLineWith(
      R"({"ok":true,"groups":[[[1],[1]]]})",
      R"({"ok":false,"error":"IndexError: list index out of range"})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_FALSE(parsed->expect_ok);
  EXPECT_EQ(parsed->expect_error, "IndexError: list index out of range");
  EXPECT_FALSE(parsed->expect_schedule.has_value());
}

struct BadLine {
  std::string description;
  std::string line;
  std::string field;  // the message must contain this
};

// Each line is rejected with InvalidArgument naming the field.
TEST(ParseGoldenCaseTest, RejectsBadLinesNamingTheField) {
  const BadLine kBadLines[] = {
      {"not JSON", "{\"name\": oops", "JSON"},
      {"empty", "", "JSON"},
      {"not an object", "[1,2,3]", "object"},
      {"unknown key", ValidLineEdited([](Json& json) { json["vpp"] = 2; }),
       "field \"vpp\": unknown key; a golden case has only name, kind"},
      {"repeated key", "{\"name\": \"a\", \"name\": \"b\"}",
       "key \"name\" appears twice in one object"},
      {"truncated", std::string(kValidLine.substr(0, 80)), "JSON"},
      {"missing samples",
       ValidLineEdited([](Json& json) { json.erase("samples"); }), "samples"},
      {"samples not an array", ValidLineWith("[[4609135766238959385,-52],[1,3]]",
                                             "{}"),
       "samples"},
      {"id a float", ValidLineWith("4609135766238959385,", "1.5,"),
       "samples[0][0]"},
      {"id integral but float", ValidLineWith("4609135766238959385,", "7.0,"),
       "samples[0][0]"},
      {"id a string", ValidLineWith("4609135766238959385,", "\"7\","),
       "samples[0][0]"},
      {"id 2^63", ValidLineWith("4609135766238959385,", "9223372036854775808,"),
       "samples[0][0]"},
      {"id below int64", ValidLineWith("4609135766238959385,",
                                       "-9223372036854775809,"),
       "samples[0][0]"},
      {"id 2^64", ValidLineWith("4609135766238959385,",
                                "18446744073709551616,"),
       "samples[0][0]"},
      {"len a boolean", ValidLineWith("[1,3]", "[1,true]"), "samples[1][1]"},
      {"len null", ValidLineWith("[1,3]", "[1,null]"), "samples[1][1]"},
      {"sample of three", ValidLineWith("[1,3]", "[1,3,4]"), "samples[1]"},
      {"sample not a pair", ValidLineWith("[1,3]", "7"), "samples[1]"},
      {"expect without ok",
       ValidLineEdited([](Json& json) { json["expect"].erase("ok"); }),
       "expect.ok"},
      {"ok not a boolean", ValidLineWith("\"ok\":true", "\"ok\":1"),
       "expect.ok"},
      {"expect not an object",
       ValidLineEdited([](Json& json) { json["expect"] = 1; }), "expect"},
      {"missing expect",
       ValidLineEdited([](Json& json) { json.erase("expect"); }), "expect"},
      {"ok:true without groups",
       ValidLineEdited([](Json& json) { json["expect"].erase("groups"); }),
       "expect.groups"},
      {"group id a float", ValidLineWith("[[[1],[1]]]", "[[[1],[1.5]]]"),
       "expect.groups[0][1][0]"},
      {"ok:false without error",
       ValidLineWith(R"({"ok":true,"groups":[[[1],[1]]]})", R"({"ok":false})"),
       "expect.error"},
      {"missing total_gpus",
       ValidLineEdited([](Json& json) { json.erase("total_gpus"); }),
       "total_gpus"},
      {"mslpr a string", ValidLineWith("\"max_seq_len_per_rank\":8",
                                       "\"max_seq_len_per_rank\":\"8\""),
       "max_seq_len_per_rank"},
      {"missing vpp_group",
       ValidLineEdited([](Json& json) { json.erase("vpp_group"); }),
       "vpp_group"},
      {"vpp_group a float", ValidLineWith("\"vpp_group\":null",
                                          "\"vpp_group\":2.0"),
       "vpp_group"},
      {"name not a string", ValidLineWith("\"t-1\"", "1"), "name"},
      {"unknown kind", ValidLineWith("\"schedule\"", "\"steps\""), "kind"},
      {"unknown scheduler", ValidLineWith("\"legacy\"", "\"fancy\""),
       "scheduler"},
      {"step of another scheduler", ValidLineWith("\"schedule\"", "\"step\""),
       "scheduler"},
      {"exec time a string", ValidLineEdited([](Json& json) {
         json["kind"] = "step";
         json["scheduler"] = "packing_aware";
         json["expect"] = Json::parse(
             R"({"ok":true,"micro_batches":[[3]],"sample_ids":[[1]],)"
             R"("leftovers":[],"exec_times":["9.0"]})");
       }),
       "expect.exec_times[0]"},
      {"step without leftovers", ValidLineEdited([](Json& json) {
         json["kind"] = "step";
         json["scheduler"] = "packing_aware";
         json["expect"] = Json::parse(
             R"({"ok":true,"micro_batches":[[3]],"sample_ids":[[1]],)"
             R"("exec_times":[9.0]})");
       }),
       "expect.leftovers"},
  };
  for (const BadLine& bad : kBadLines) {
    const absl::StatusOr<GoldenCase> parsed = ParseGoldenCase(bad.line);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument)
        << bad.description << ": " << bad.line;
    EXPECT_TRUE(absl::StrContains(parsed.status().message(), bad.field))
        << bad.description << ": \"" << parsed.status().message()
        << "\" does not name " << bad.field;
    EXPECT_FALSE(absl::StrContains(parsed.status().message(), "json.exception"))
        << bad.description << ": the library's text leaks: " << parsed.status().message();
  }
}

// ---------------------------------------------------------------------------
// CheckGoldenCase can fail: real cases with one expected value tampered with.

// The first case of `file` for which `wanted` holds.
std::optional<GoldenCase> FindCase(
    absl::string_view file,
    const std::function<bool(const GoldenCase&)>& wanted) {
  for (const GoldenLine& line : LoadGoldenLines()) {
    if (line.file != file) continue;
    absl::StatusOr<GoldenCase> golden_case = ParseGoldenCase(line.text);
    if (golden_case.ok() && wanted(*golden_case)) return *std::move(golden_case);
  }
  return std::nullopt;
}

bool IsNonEmptyStep(const GoldenCase& golden_case) {
  return golden_case.expect_ok && !golden_case.samples.empty() &&
         golden_case.expect_step->rank_work.size() >= 2;
}

bool HasTwoMicrobatches(const GoldenCase& golden_case) {
  return golden_case.expect_ok &&
         golden_case.expect_schedule->microbatches.size() >= 2;
}

// A message that must mention `text`.
void ExpectMentions(const absl::Status& status, absl::string_view text) {
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(absl::StrContains(status.message(), text))
      << "\"" << status.message() << "\" does not mention \"" << text << "\"";
  EXPECT_FALSE(absl::StrContains(status.message(), "\n")) << status.message();
}

TEST(CheckGoldenCaseTest, ReportsAnExecTimeOneBitOff) {
  std::optional<GoldenCase> golden_case =
      FindCase("packing_aware_step.jsonl", IsNonEmptyStep);
  ASSERT_TRUE(golden_case.has_value());
  ASSERT_TRUE(CheckGoldenCase(*golden_case).ok())
      << golden_case->name << " must pass before it is tampered with: "
      << CheckGoldenCase(*golden_case).message();

  std::vector<double>& times = golden_case->expect_step->rank_work;
  const std::size_t rank = times.size() - 1;
  const double actual = times[rank];
  const double tampered =
      std::bit_cast<double>(std::bit_cast<std::uint64_t>(actual) ^ 1u);
  times[rank] = tampered;

  const absl::Status status = CheckGoldenCase(*golden_case);
  ExpectMentions(status, absl::StrCat("rank ", rank, ":"));
  ExpectMentions(status, absl::StrFormat("%.17g", tampered));
  ExpectMentions(status, absl::StrFormat("%.17g", actual));
}

// +0.0 == -0.0, but their bits differ: the comparison is not ==.
TEST(CheckGoldenCaseTest, ReportsNegativeZeroExecTime) {
  std::optional<GoldenCase> golden_case = FindCase(
      "packing_aware_step.jsonl", [](const GoldenCase& golden_case) {
        return golden_case.expect_ok && golden_case.samples.empty() &&
               !golden_case.expect_step->rank_work.empty();
      });
  ASSERT_TRUE(golden_case.has_value());
  ASSERT_TRUE(CheckGoldenCase(*golden_case).ok())
      << CheckGoldenCase(*golden_case).message();

  golden_case->expect_step->rank_work[0] = -0.0;
  ExpectMentions(CheckGoldenCase(*golden_case), "rank 0:");
}

TEST(CheckGoldenCaseTest, ReportsAStepSampleId) {
  std::optional<GoldenCase> golden_case =
      FindCase("packing_aware_step.jsonl", IsNonEmptyStep);
  ASSERT_TRUE(golden_case.has_value());
  ASSERT_TRUE(CheckGoldenCase(*golden_case).ok())
      << CheckGoldenCase(*golden_case).message();

  golden_case->expect_step->microbatch.rank_ids[1][0] += 1;
  ExpectMentions(CheckGoldenCase(*golden_case), "step rank 1: sample ids");
}

TEST(CheckGoldenCaseTest, ReportsAStepLeftover) {
  std::optional<GoldenCase> golden_case = FindCase(
      "packing_aware_step.jsonl", [](const GoldenCase& golden_case) {
        return golden_case.expect_ok &&
               !golden_case.expect_step->leftovers.empty();
      });
  ASSERT_TRUE(golden_case.has_value());
  ASSERT_TRUE(CheckGoldenCase(*golden_case).ok())
      << CheckGoldenCase(*golden_case).message();

  golden_case->expect_step->leftovers.back().len += 1;
  ExpectMentions(CheckGoldenCase(*golden_case), "leftovers differ");
}

// One changed id in a real schedule of each scheduler.
TEST(CheckGoldenCaseTest, ReportsAScheduleId) {
  for (const char* file :
       {"packing_aware_schedule.jsonl", "legacy_schedule.jsonl",
        "dp_balanced_schedule.jsonl", "vpp_align.jsonl"}) {
    SCOPED_TRACE(file);
    std::optional<GoldenCase> golden_case = FindCase(file, HasTwoMicrobatches);
    ASSERT_TRUE(golden_case.has_value());
    ASSERT_TRUE(CheckGoldenCase(*golden_case).ok())
        << CheckGoldenCase(*golden_case).message();

    std::vector<std::vector<std::int64_t>>& ranks =
        golden_case->expect_schedule->microbatches[1].rank_ids;
    ASSERT_FALSE(ranks.empty());
    ASSERT_FALSE(ranks.back().empty());
    ranks.back().back() += 1;
    ExpectMentions(CheckGoldenCase(*golden_case),
                   absl::StrCat("microbatch 1 rank ", ranks.size() - 1, ":"));
  }
}

TEST(CheckGoldenCaseTest, ReportsAMissingMicrobatch) {
  std::optional<GoldenCase> golden_case =
      FindCase("packing_aware_schedule.jsonl", HasTwoMicrobatches);
  ASSERT_TRUE(golden_case.has_value());
  ASSERT_TRUE(CheckGoldenCase(*golden_case).ok())
      << CheckGoldenCase(*golden_case).message();

  golden_case->expect_schedule->microbatches.pop_back();
  ExpectMentions(CheckGoldenCase(*golden_case), "microbatch count differs");
}

TEST(CheckGoldenCaseTest, ReportsAnAcceptedInputThatUpstreamRejects) {
  std::optional<GoldenCase> golden_case =
      FindCase("packing_aware_schedule.jsonl", HasTwoMicrobatches);
  ASSERT_TRUE(golden_case.has_value());
  golden_case->expect_ok = false;
  golden_case->expect_error = "AssertionError: made up";
  const absl::Status status = CheckGoldenCase(*golden_case);
  ExpectMentions(status, "accepted");
  ExpectMentions(status, "AssertionError: made up");
}

TEST(CheckGoldenCaseTest, ReportsARejectedInputThatUpstreamAccepts) {
  std::optional<GoldenCase> golden_case = FindCase(
      "packing_aware_schedule.jsonl",
      [](const GoldenCase& golden_case) { return !golden_case.expect_ok; });
  ASSERT_TRUE(golden_case.has_value());
  ASSERT_TRUE(CheckGoldenCase(*golden_case).ok())
      << CheckGoldenCase(*golden_case).message();
  golden_case->expect_ok = true;
  golden_case->expect_schedule = Schedule{};
  ExpectMentions(CheckGoldenCase(*golden_case), "core failed");
}

// ---------------------------------------------------------------------------
// CheckGoldenFile.

// The text of the first line of `file` for which `wanted` holds.
std::string FindLine(absl::string_view file,
                     const std::function<bool(const GoldenCase&)>& wanted) {
  for (const GoldenLine& line : LoadGoldenLines()) {
    if (line.file != file) continue;
    const absl::StatusOr<GoldenCase> golden_case = ParseGoldenCase(line.text);
    if (golden_case.ok() && wanted(*golden_case)) return line.text;
  }
  return "";
}

// A file in the test's temporary folder, removed when this goes away.
class TempFile {
 public:
  explicit TempFile(absl::string_view contents)
      : path_(absl::StrCat(testing::TempDir(), "golden_test_", getpid(), "_",
                           testing::UnitTest::GetInstance()
                               ->current_test_info()
                               ->name(),
                           ".jsonl")) {
    std::ofstream(path_) << contents;
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() { std::remove(path_.c_str()); }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(CheckGoldenFileTest, CountsAndLocatesFailures) {
  const std::string good_step =
      FindLine("packing_aware_step.jsonl", IsNonEmptyStep);
  const std::string good_schedule =
      FindLine("packing_aware_schedule.jsonl", HasTwoMicrobatches);
  ASSERT_FALSE(good_step.empty());
  ASSERT_FALSE(good_schedule.empty());

  Json tampered = Json::parse(good_step);
  const double time = tampered["expect"]["exec_times"][0].get<double>();
  tampered["expect"]["exec_times"][0] = time * 2 + 1;
  const std::string tampered_name = tampered["name"].get<std::string>();

  // Line 2 is blank: skipped, but still counted as a line.
  const TempFile file(absl::StrCat(good_step, "\n", "\n", tampered.dump(), "\n",
                                   "this is not a golden case\n",
                                   good_schedule, "\n"));
  const absl::StatusOr<GoldenFileReport> report = CheckGoldenFile(file.path());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->passed, 2);
  EXPECT_EQ(report->failed, 2);
  ASSERT_EQ(report->failures.size(), 2u);
  EXPECT_TRUE(absl::StartsWith(
      report->failures[0],
      absl::StrCat(file.path(), ":3 ", tampered_name, ": step rank 0:")))
      << report->failures[0];
  EXPECT_TRUE(absl::StartsWith(report->failures[1],
                               absl::StrCat(file.path(), ":4 ?: ")))
      << report->failures[1];
}

TEST(CheckGoldenFileTest, NamesAnUnparsableCaseWhenItCan) {
  const TempFile file(ValidLineWith("\"ok\":true", "\"ok\":1"));
  const absl::StatusOr<GoldenFileReport> report = CheckGoldenFile(file.path());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->passed, 0);
  ASSERT_EQ(report->failures.size(), 1u);
  EXPECT_TRUE(absl::StartsWith(report->failures[0],
                               absl::StrCat(file.path(), ":1 t-1: ")))
      << report->failures[0];
  EXPECT_TRUE(absl::StrContains(report->failures[0], "expect.ok"))
      << report->failures[0];
}

TEST(CheckGoldenFileTest, MissingFileIsNotFound) {
  EXPECT_EQ(CheckGoldenFile(GoldenPath("no_such_file.jsonl")).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace dcpsched
