#include "io/problem_text.h"

#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dcpsched {
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

TEST(ProblemTextTest, RejectsMalformedText) {
  const auto expect_invalid = [](const std::string& text, const std::string& mentions) {
    const absl::StatusOr<DynamicCpProblem> problem = ParseProblem(text);
    EXPECT_EQ(problem.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(std::string(problem.status().message()), HasSubstr(mentions)) << text;
  };
  expect_invalid("mslpr=1 samples=", "field 'G' is missing");
  expect_invalid("G=1 samples=", "field 'mslpr' is missing");
  expect_invalid("G=1 mslpr=1", "field 'samples' is missing");
  expect_invalid("G=x mslpr=1 samples=", "G is 'x', not a 64-bit integer");
  expect_invalid("G=1 G=2 mslpr=1 samples=", "'G' is given twice");
  expect_invalid("G=1 mslpr=1 tp=2 samples=", "unknown field 'tp'");
  expect_invalid("G=1 mslpr=1 samples=1:2:3", "not of the form id:len");
  expect_invalid("G=1 mslpr=1 samples=1:99999999999999999999", "sample len");
  expect_invalid("G=1 mslpr", "not of the form key=value");
}

}  // namespace
}  // namespace dcpsched
