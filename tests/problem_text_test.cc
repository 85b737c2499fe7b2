#include "io/problem_text.h"

#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dcpsched::problem_text_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ProblemTextTest, ParsesTheReviewCase) {
  const absl::StatusOr<DynamicCpProblem> problem =
      ParseProblem("G=14 mslpr=100 min_cp=1 vpp=none samples=0:50,1:50");
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_EQ(problem->options.total_gpus, 14);
  EXPECT_EQ(problem->options.max_seq_len_per_rank, 100);
  EXPECT_EQ(problem->options.min_cp_size, 1);
  EXPECT_FALSE(problem->options.vpp_group.has_value());
  EXPECT_THAT(problem->samples, ElementsAre(Sample{0, 50}, Sample{1, 50}));
}

TEST(ProblemTextTest, OptionalFieldsDefaultAndOrderIsFree) {
  const absl::StatusOr<DynamicCpProblem> problem = ParseProblem("samples= mslpr=7  G=3 vpp=2");
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_EQ(problem->options.min_cp_size, 1);
  EXPECT_EQ(problem->options.vpp_group, 2);
  EXPECT_TRUE(problem->samples.empty());
}

TEST(ProblemTextTest, FormatThenParseRoundTrips) {
  DynamicCpProblem problem;
  problem.options.total_gpus = 6;
  problem.options.max_seq_len_per_rank = 2048;
  problem.options.min_cp_size = 2;
  problem.options.vpp_group = 3;
  problem.samples = {{-9223372036854775807 - 1, 1}, {42, 67108864}, {7, -3}};
  const std::string text = FormatProblem(problem);
  EXPECT_EQ(text,
            "G=6 mslpr=2048 min_cp=2 vpp=3 samples=-9223372036854775808:1,"
            "42:67108864,7:-3");
  const absl::StatusOr<DynamicCpProblem> parsed = ParseProblem(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, problem);
}

TEST(ProblemTextTest, ParsesAndPrintsTheSequenceCap) {
  const std::string line = "G=4 mslpr=8 min_cp=1 vpp=none max_num_seqs=2 samples=0:9,1:3";
  const absl::StatusOr<DynamicCpProblem> problem = ParseProblem(line);
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_EQ(problem->options.max_num_seqs, 2);
  EXPECT_EQ(FormatProblem(*problem), line);
  // Anywhere on the line, and "none" is no cap, like vpp.
  const absl::StatusOr<DynamicCpProblem> moved =
      ParseProblem("max_num_seqs=2 G=4 mslpr=8 samples=0:9,1:3");
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(*moved, *problem);
  const absl::StatusOr<DynamicCpProblem> none =
      ParseProblem("G=4 mslpr=8 max_num_seqs=none samples=0:9,1:3");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->options.max_num_seqs.has_value());
}

// A line without the cap prints back exactly as it did before the cap
// existed: the field appears only when set.
TEST(ProblemTextTest, UncappedLinesPrintAsBefore) {
  for (const std::string line :
       {"G=4 mslpr=8 min_cp=1 vpp=none samples=0:9,1:3",
        "G=32 mslpr=37 min_cp=4 vpp=3 samples=0:128,1:128,2:128,3:1",
        "G=1 mslpr=1 min_cp=1 vpp=none samples="}) {
    const absl::StatusOr<DynamicCpProblem> problem = ParseProblem(line);
    ASSERT_TRUE(problem.ok()) << problem.status();
    EXPECT_FALSE(problem->options.max_num_seqs.has_value()) << line;
    EXPECT_EQ(FormatProblem(*problem), line);
  }
}

// Values outside the scheduler's limits still parse (core/validate.h judges
// them), so invalid problems can be written down too.
TEST(ProblemTextTest, OutOfRangeCapsRoundTrip) {
  for (const std::int64_t cap : {std::int64_t{0}, std::int64_t{-1},
                                 std::numeric_limits<std::int64_t>::min(),
                                 std::numeric_limits<std::int64_t>::max()}) {
    DynamicCpProblem problem;
    problem.options.total_gpus = 2;
    problem.options.max_seq_len_per_rank = 10;
    problem.options.vpp_group = 2;
    problem.options.max_num_seqs = cap;
    problem.samples = {{0, 5}};
    const absl::StatusOr<DynamicCpProblem> parsed = ParseProblem(FormatProblem(problem));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, problem);
  }
}

TEST(ProblemTextTest, RejectsMalformedText) {
  const auto expect_invalid = [](const std::string& text, const std::string& mentions) {
    const absl::StatusOr<DynamicCpProblem> problem = ParseProblem(text);
    EXPECT_EQ(problem.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(std::string(problem.status().message()), HasSubstr(mentions)) << text;
  };
  expect_invalid("mslpr=1 samples=", "field 'G' is missing");
  expect_invalid("G=1 samples=", "field 'mslpr' is missing");
  expect_invalid("G=1 mslpr=1", "field 'samples' is missing");
  expect_invalid("G=x mslpr=1 samples=", "G is \"x\", not a 64-bit integer");
  expect_invalid("G=1 G=2 mslpr=1 samples=", "\"G\" is given twice");
  expect_invalid("G=1 mslpr=1 tp=2 samples=", "unknown field \"tp\"");
  expect_invalid("G=1 mslpr=1 samples=1:2:3", "not of the form id:len");
  expect_invalid("G=1 mslpr=1 samples=1:99999999999999999999", "sample len");
  expect_invalid("G=1 mslpr", "not of the form key=value");
  expect_invalid("G=1 mslpr=1 max_num_seqs= samples=", "max_num_seqs is \"\", not a 64-bit integer");
  expect_invalid("G=1 mslpr=1 max_num_seqs=two samples=", "max_num_seqs is \"two\"");
  expect_invalid("G=1 mslpr=1 max_num_seqs=1.5 samples=", "max_num_seqs is \"1.5\"");
  expect_invalid("G=1 mslpr=1 max_num_seqs=9223372036854775808 samples=", "max_num_seqs");
  expect_invalid("G=1 mslpr=1 max_num_seqs=1 max_num_seqs=2 samples=",
                 "\"max_num_seqs\" is given twice");
}

}  // namespace
}  // namespace dcpsched::problem_text_test
