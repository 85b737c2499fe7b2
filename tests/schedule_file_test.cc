#include "io/schedule_file.h"

#include <cstddef>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/compact_schedule.h"
#include "core/types.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/schedule_json.h"
#include "io/schedule_run.h"
#include "nlohmann/json.hpp"
#include "tests/test_problems.h"

namespace dcpsched::schedule_file_test {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

// G = 4, mslpr 4: sample 7 (8 tokens) on ranks 0-1, 8 and 9 alone.
constexpr char kGoodFile[] = R"({
  "format": "dcpsched.schedule.v1",
  "scheduler": "packing_aware",
  "description": "hand-made",
  "total_gpus": 4,
  "max_seq_len_per_rank": 4,
  "min_cp_size": 2,
  "vpp_group": 1,
  "samples": [[7, 8], [8, 2], [9, 2]],
  "groups": [[[7], [7], [8], [9]]]
})";

// kGoodFile with `key` set to `value` (JSON text), or removed when `value`
// is empty.
std::string GoodFileWith(const std::string& key, const std::string& value) {
  json document = json::parse(kGoodFile);
  if (value.empty()) {
    document.erase(key);
  } else {
    document[key] = json::parse(value);
  }
  return document.dump();
}

absl::Status ParseError(const std::string& contents) {
  return ParseScheduleFile(contents).status();
}

TEST(ScheduleFileTest, ReadsEveryKeyOfTheScheduleForm) {
  const absl::StatusOr<ScheduleFile> file = ParseScheduleFile(kGoodFile);

  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->format, "dcpsched.schedule.v1");
  EXPECT_EQ(file->scheduler, "packing_aware");
  EXPECT_EQ(file->description, "hand-made");
  EXPECT_EQ(file->options, (DynamicCpOptions{.total_gpus = 4,
                                             .max_seq_len_per_rank = 4,
                                             .min_cp_size = 2,
                                             .vpp_group = 1,
                                             .max_num_seqs = std::nullopt}));
  EXPECT_EQ(file->samples, (std::vector<Sample>{{7, 8}, {8, 2}, {9, 2}}));
  EXPECT_EQ(ExpandSchedule(file->schedule).value().microbatches,
            (std::vector<Microbatch>{{.rank_ids = {{7}, {7}, {8}, {9}}}}));
}

TEST(ScheduleFileTest, OptionalKeysHaveDefaults) {
  const absl::StatusOr<ScheduleFile> file = ParseScheduleFile(
      R"({"total_gpus": 2, "max_seq_len_per_rank": 10,
          "samples": [[0, 5]], "groups": [[[0], [0]]]})");

  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->options.min_cp_size, 1);
  EXPECT_EQ(file->options.vpp_group, std::nullopt);
  EXPECT_EQ(file->scheduler, "");
  EXPECT_EQ(file->format, "dcpsched.schedule.v1");
}

TEST(ScheduleFileTest, NullVppGroupMeansNone) {
  const absl::StatusOr<ScheduleFile> file =
      ParseScheduleFile(GoodFileWith("vpp_group", "null"));

  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->options.vpp_group, std::nullopt);
}

TEST(ScheduleFileTest, FormattedFileReadsBackEqual) {
  const ScheduleFile file = ParseScheduleFile(kGoodFile).value();

  const std::string text = FormatScheduleFile(file);

  EXPECT_EQ(text.find('\n'), text.size() - 1);
  EXPECT_EQ(ParseScheduleFile(text).value(), file);
}

TEST(ScheduleFileTest, ReadsTheJsonOfAScheduleRun) {
  SchedulingProblem problem = FiveSamplesOnFourRanks();
  problem.parameters.vpp_group = 2;
  const ScheduleRun run = RunScheduler(SchedulerKind::kPackingAware, problem);
  ASSERT_TRUE(run.status.ok()) << run.status;

  const absl::StatusOr<ScheduleFile> file =
      ParseScheduleFile(FormatScheduleRunJson(problem, run));

  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->format, "dcpsched.schedule_run.v1");
  EXPECT_EQ(file->scheduler, "packing_aware");
  EXPECT_EQ(file->description, "real");
  EXPECT_EQ(file->samples, problem.samples);
  EXPECT_EQ(file->options, ToDynamicCpOptions(problem.parameters));
  EXPECT_EQ(file->schedule, run.schedule);
}

TEST(ScheduleFileTest, ReadsTheCompactJsonOfAScheduleRun) {
  const SchedulingProblem problem = FiveSamplesOnFourRanks();
  const ScheduleRun run = RunScheduler(SchedulerKind::kPackingAware, problem);
  ASSERT_TRUE(run.status.ok()) << run.status;

  const absl::StatusOr<ScheduleFile> file = ParseScheduleFile(
      FormatScheduleRunJson(problem, run, ScheduleForm::kCompact));

  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->format, "dcpsched.schedule_run.v2");
  EXPECT_EQ(file->samples, problem.samples);
  EXPECT_EQ(file->options, ToDynamicCpOptions(problem.parameters));
  EXPECT_EQ(file->schedule, run.schedule);
}

TEST(ScheduleFileTest, CompactGroupsThatAreNotACompactFormAreAnError) {
  const std::string head =
      R"({"format": "dcpsched.schedule_run.v2", "samples": [[0, 1], [1, 1]],
          "parameters": {"total_gpus": 2, "max_seq_len_per_rank": 4},
          "microbatches": [{"cp_groups": [{"first_rank": 0, "size": 1, "ids": [0]}, )";
  const absl::Status gap = ParseError(
      head + R"({"first_rank": 2, "size": 1, "ids": [1]}]}]})");
  const absl::Status empty = ParseError(
      head + R"({"first_rank": 1, "size": 0, "ids": [1]}]}]})");
  const absl::Status wide = ParseError(
      head + R"({"first_rank": 1, "size": 65536, "ids": [1]}]}]})");
  const absl::Status split = ParseError(
      head + R"({"first_rank": 1, "size": 1, "ids": [0]}]}]})");

  EXPECT_THAT(gap.message(),
              HasSubstr("field \"microbatches[0].cp_groups\": microbatch 0 "
                        "group 1 starts at rank 2"));
  EXPECT_THAT(empty.message(), HasSubstr("has size 0"));
  EXPECT_THAT(wide.message(), HasSubstr("the groups cover 65537 ranks"));
  EXPECT_THAT(split.message(), HasSubstr("holds the same ids as group 0"));
}

TEST(ScheduleFileTest, FailedRunHoldsNoSchedule) {
  SchedulingProblem problem;
  problem.samples = {{0, 5}};
  ScheduleRun run;
  run.status = absl::FailedPreconditionError("upstream would hang");

  const absl::Status status =
      ParseError(FormatScheduleRunJson(problem, run));

  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("failed run"));
  EXPECT_THAT(status.message(), HasSubstr("upstream would hang"));
}

TEST(ScheduleFileTest, ScheduleIsReadAsWrittenHoweverBroken) {
  // Wrong width, an empty rank, an unknown id and a duplicate: the
  // checker's business, not the parser's.
  const absl::StatusOr<ScheduleFile> file = ParseScheduleFile(
      GoodFileWith("groups", "[[[7], [7], [], [99, 99]], [[8]]]"));

  ASSERT_TRUE(file.ok()) << file.status();
  const Schedule schedule = ExpandSchedule(file->schedule).value();
  EXPECT_EQ(schedule.microbatches.size(), 2u);
  EXPECT_EQ(schedule.microbatches[0].rank_ids[2], (std::vector<SampleId>{}));
  EXPECT_EQ(schedule.microbatches[0].rank_ids[3],
            (std::vector<SampleId>{99, 99}));
}

struct BadFile {
  std::string name;
  std::string contents;
  std::string message;  // a fragment the error must contain
};

class BadScheduleFileTest : public ::testing::TestWithParam<BadFile> {};

TEST_P(BadScheduleFileTest, IsRejectedWithAMessageNamingTheFix) {
  const absl::Status status = ParseError(GetParam().contents);

  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Errors, BadScheduleFileTest,
    ::testing::Values(
        BadFile{"Empty", "  \n", "empty input"},
        BadFile{"NotJson", "{\"total_gpus\": 4,", "not valid JSON"},
        BadFile{"TrailingGarbage", std::string(kGoodFile) + " x",
                "not valid JSON"},
        BadFile{"NotAnObject", "[1, 2]", "not a JSON object (got array)"},
        BadFile{"RepeatedKey",
                "{\"total_gpus\": 4, \"max_seq_len_per_rank\": 4, \"total_gpus\": 8}",
                "key \"total_gpus\" appears twice in one object"},
        BadFile{"RepeatedNestedKey",
                "{\"format\": \"dcpsched.schedule_run.v1\", \"parameters\": "
                "{\"vpp_group\": 2, \"vpp_group\": null}}",
                "key \"vpp_group\" appears twice in one object"},
        BadFile{"MissingTotalGpus", GoodFileWith("total_gpus", ""),
                "field \"total_gpus\": missing"},
        BadFile{"MissingSamples", GoodFileWith("samples", ""),
                "field \"samples\": missing"},
        BadFile{"MissingGroups", GoodFileWith("groups", ""),
                "field \"groups\": missing"},
        BadFile{"StringTotalGpus", GoodFileWith("total_gpus", "\"4\""),
                "field \"total_gpus\": not an integer in int64 range (got "
                "string)"},
        BadFile{"FloatBudget", GoodFileWith("max_seq_len_per_rank", "4.5"),
                "not an integer in int64 range (got 4.5)"},
        BadFile{"HugeBudget",
                GoodFileWith("max_seq_len_per_rank", "18446744073709551615"),
                "field \"max_seq_len_per_rank\": not an integer"},
        BadFile{"StringVpp", GoodFileWith("vpp_group", "\"2\""),
                "field \"vpp_group\": neither null nor an integer"},
        BadFile{"NumberScheduler", GoodFileWith("scheduler", "3"),
                "field \"scheduler\": not a string"},
        BadFile{"MisspeltKey", GoodFileWith("min_cp", "2"),
                "field \"min_cp\": unknown key"},
        BadFile{"UnknownFormat", GoodFileWith("format", "\"v2\""),
                "unknown format \"v2\""},
        BadFile{"SamplesNotAList", GoodFileWith("samples", "{}"),
                "field \"samples\": not an array (got object)"},
        BadFile{"SampleNotAPair", GoodFileWith("samples", "[[7, 8, 1]]"),
                "field \"samples[0]\": not an [id, len] pair (got an array "
                "of 3)"},
        BadFile{"NegativeLength", GoodFileWith("samples", "[[7, 8], [8, -5]]"),
                "field \"samples[1][1] (len)\": length -5 of sample 8 is not "
                "positive"},
        BadFile{"ZeroLength", GoodFileWith("samples", "[[7, 0]]"),
                "is not positive; a sample has 1 to 67108864 tokens"},
        BadFile{"TooLong", GoodFileWith("samples", "[[7, 67108865]]"),
                "is too long"},
        BadFile{"FloatId", GoodFileWith("samples", "[[7.5, 8]]"),
                "field \"samples[0][0] (id)\": not an integer"},
        BadFile{"GroupsNotAList", GoodFileWith("groups", "7"),
                "field \"groups\": not an array (got 7)"},
        BadFile{"MicrobatchNotAList", GoodFileWith("groups", "[7]"),
                "field \"groups[0]\": not an array"},
        BadFile{"RankNotAList", GoodFileWith("groups", "[[[7], 7]]"),
                "field \"groups[0][1]\": not an array (got 7); it must be "
                "the list of sample ids this rank holds"},
        BadFile{"StringId", GoodFileWith("groups", "[[[7], [\"8\"]]]"),
                "field \"groups[0][1][0] (id)\": not an integer"},
        BadFile{"DuplicateSampleIds",
                GoodFileWith("samples", "[[7, 8], [7, 2]]"),
                "the problem is not valid"},
        BadFile{"MinCpNotAPowerOfTwo", GoodFileWith("min_cp_size", "3"),
                "the problem is not valid: min_cp_size is 3"},
        BadFile{"ZeroGpus", GoodFileWith("total_gpus", "0"),
                "the problem is not valid"},
        BadFile{"RunWithoutParameters",
                R"({"format": "dcpsched.schedule_run.v1", "ok": true,
                    "samples": [], "groups": []})",
                "field \"parameters\": missing"},
        BadFile{"RunWithBadParameter",
                R"({"format": "dcpsched.schedule_run.v1", "ok": true,
                    "parameters": {"total_gpus": 2,
                                   "max_seq_len_per_rank": "x"},
                    "samples": [], "groups": []})",
                "field \"parameters.max_seq_len_per_rank\": not an "
                "integer"}),
    [](const ::testing::TestParamInfo<BadFile>& info) {
      return info.param.name;
    });

TEST(ScheduleFileTest, DeepNestingIsAnErrorNotACrash) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');

  EXPECT_EQ(ParseError(deep).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseError("{\"groups\": " + deep + "}").code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ScheduleFileTest, EveryTruncationAndByteFlipIsHandled) {
  const std::string good = kGoodFile;
  for (std::size_t size = 0; size < good.size(); ++size) {
    // A prefix never parses (the closing brace is last), and never crashes.
    EXPECT_FALSE(ParseScheduleFile(good.substr(0, size)).ok()) << size;
  }
  for (std::size_t i = 0; i < good.size(); ++i) {
    for (const char replacement : {'0', '-', '"', ']', '{', '\xff', '\0'}) {
      std::string mutated = good;
      mutated[i] = replacement;
      const absl::StatusOr<ScheduleFile> file = ParseScheduleFile(mutated);
      if (!file.ok()) {
        EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
      }
    }
  }
}

TEST(ScheduleFileTest, MissingFileIsNotFound) {
  const absl::Status status =
      ReadScheduleFile("/nonexistent/dcpsched/schedule.json").status();

  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(),
              HasSubstr("cannot open schedule file "
                        "\"/nonexistent/dcpsched/schedule.json\""));
}

TEST(ScheduleFileTest, DirectoryIsRejected) {
  EXPECT_THAT(ReadScheduleFile(::testing::TempDir()).status().message(),
              HasSubstr("is a directory"));
}

TEST(ScheduleFileTest, ParseErrorsNameTheFile) {
  const std::string path =
      absl::StrCat(::testing::TempDir(), "/schedule_file_test_bad.json");
  std::ofstream(path) << GoodFileWith("total_gpus", "");

  const absl::Status status = ReadScheduleFile(path).status();

  EXPECT_THAT(status.message(),
              HasSubstr(absl::StrCat(path, ": field \"total_gpus\": missing")));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace dcpsched::schedule_file_test
