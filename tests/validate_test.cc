#include "core/validate.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_options.h"

namespace dcpsched::validate_test {
namespace {

using ::testing::HasSubstr;

void ExpectInvalid(const absl::Status& status, const std::string& mentions) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(mentions));
}

TEST(ValidateDynamicCpTest, AcceptsTheLimits) {
  const std::vector<Sample> samples = {{-5, 1}, {std::numeric_limits<SampleId>::max(), 2048}};
  EXPECT_TRUE(ValidateDynamicCpProblem(samples, Options(1, 2048)).ok());
  EXPECT_TRUE(ValidateDynamicCpProblem(samples, Options(65536, 2048, 65536)).ok());
  EXPECT_TRUE(ValidateDynamicCpProblem({}, Options(3, kMaxSeqLenPerRank)).ok());
  const std::vector<Sample> longest = {{0, kMaxSampleLen}};
  EXPECT_TRUE(ValidateDynamicCpProblem(longest, Options(1, kMaxSeqLenPerRank)).ok());
}

TEST(ValidateDynamicCpTest, RejectsBadTotalGpus) {
  ExpectInvalid(ValidateDynamicCpOptions(Options(0, 2048)), "total_gpus is 0");
  ExpectInvalid(ValidateDynamicCpOptions(Options(-1, 2048)), "total_gpus is -1");
  ExpectInvalid(ValidateDynamicCpOptions(Options(65537, 2048)), "[1, 65536]");
}

TEST(ValidateDynamicCpTest, RejectsBadMaxSeqLenPerRank) {
  ExpectInvalid(ValidateDynamicCpOptions(Options(8, 0)), "max_seq_len_per_rank is 0");
  ExpectInvalid(ValidateDynamicCpOptions(Options(8, std::int64_t{1} << 31)),
                "max_seq_len_per_rank is 2147483648");
}

TEST(ValidateDynamicCpTest, RejectsMinCpSizeThatIsNotAPowerOfTwoUpToG) {
  ExpectInvalid(ValidateDynamicCpOptions(Options(8, 2048, 3)), "min_cp_size is 3");
  ExpectInvalid(ValidateDynamicCpOptions(Options(8, 2048, 0)), "min_cp_size is 0");
  ExpectInvalid(ValidateDynamicCpOptions(Options(8, 2048, -2)), "power of two");
  ExpectInvalid(ValidateDynamicCpOptions(Options(4, 2048, 8)), "total_gpus (4)");
}

TEST(ValidateDynamicCpTest, RejectsVppGroupBelowOne) {
  DynamicCpOptions options = Options(8, 2048);
  options.vpp_group = 0;
  ExpectInvalid(ValidateDynamicCpOptions(options), "vpp_group is 0");
  options.vpp_group = 1;
  EXPECT_TRUE(ValidateDynamicCpOptions(options).ok());
}

TEST(ValidateDynamicCpTest, RejectsMaxNumSeqsBelowOne) {
  DynamicCpOptions options = Options(8, 2048);
  options.max_num_seqs = 0;
  ExpectInvalid(ValidateDynamicCpOptions(options), "max_num_seqs is 0");
  options.max_num_seqs = -4;
  ExpectInvalid(ValidateDynamicCpOptions(options), "max_num_seqs is -4");
  options.max_num_seqs = 1;
  EXPECT_TRUE(ValidateDynamicCpOptions(options).ok());
}

TEST(ValidateDynamicCpTest, RejectsLengthsOutsideOneTo2Pow26) {
  ExpectInvalid(ValidateDynamicCpProblem(std::vector<Sample>{{7, 0}}, Options(8, 2048)),
                "sample 7 (index 0) has length 0");
  ExpectInvalid(ValidateDynamicCpProblem(std::vector<Sample>{{1, 5}, {2, -52}}, Options(8, 2048)),
                "has length -52");
  ExpectInvalid(
      ValidateDynamicCpProblem(std::vector<Sample>{{1, kMaxSampleLen + 1}}, Options(8, kMaxSeqLenPerRank)),
      "lengths must be in [1, 67108864]");
  ExpectInvalid(ValidateDynamicCpProblem(
                    std::vector<Sample>{{1, std::numeric_limits<std::int64_t>::max()}},
                    Options(8, 2048)),
                "has length 9223372036854775807");
}

TEST(ValidateDynamicCpTest, RejectsDuplicateIds) {
  ExpectInvalid(ValidateDynamicCpProblem(std::vector<Sample>{{4, 10}, {5, 10}, {4, 20}},
                                         Options(8, 2048)),
                "sample id 4 appears twice (indices 0 and 2)");
}

TEST(ValidateDynamicCpTest, RejectsSampleThatNeedsMoreRanksThanG) {
  // Upstream: "Sequence length 16385 requires CP size 16, but only 8 DPxCP
  // ranks are available."
  ExpectInvalid(ValidateDynamicCpProblem(std::vector<Sample>{{3, 100}, {9, 16385}},
                                         Options(8, 2048)),
                "Sequence length 16385 (sample 9) requires CP size 16, but only 8 "
                "DPxCP ranks are available");
  // Non-power-of-two G: 3 ranks cannot hold a sample that needs 4.
  ExpectInvalid(ValidateDynamicCpProblem(std::vector<Sample>{{0, 23}}, Options(3, 7)),
                "requires CP size 4, but only 3");
  // min_cp_size raises the requirement too.
  EXPECT_TRUE(ValidateDynamicCpProblem(std::vector<Sample>{{0, 8192}}, Options(4, 2048, 4)).ok());
}

DpBalancedOptions DpOptions(std::int64_t dp, std::int64_t cp, std::int64_t mslpr) {
  DpBalancedOptions options;
  options.dp_size = dp;
  options.cp_size = cp;
  options.max_seq_len_per_rank = mslpr;
  return options;
}

TEST(ValidateDpBalancedTest, AcceptsTheLimits) {
  const std::vector<std::int64_t> lens = {1, 4096};
  EXPECT_TRUE(ValidateDpBalancedProblem(lens, DpOptions(1, 2, 2048)).ok());
  EXPECT_TRUE(ValidateDpBalancedProblem(lens, DpOptions(256, 256, 2048)).ok());
}

TEST(ValidateDpBalancedTest, RejectsBadSizes) {
  ExpectInvalid(ValidateDpBalancedProblem({}, DpOptions(0, 1, 2048)), "dp_size is 0");
  ExpectInvalid(ValidateDpBalancedProblem({}, DpOptions(1, -3, 2048)), "cp_size is -3");
  ExpectInvalid(ValidateDpBalancedProblem({}, DpOptions(512, 256, 2048)),
                "dp_size * cp_size is 131072");
  ExpectInvalid(ValidateDpBalancedProblem({}, DpOptions(65536, 65536, 2048)),
                "dp_size * cp_size");
  ExpectInvalid(ValidateDpBalancedProblem({}, DpOptions(1, 1, 0)), "max_seq_len_per_rank is 0");
  DpBalancedOptions options = DpOptions(2, 2, 2048);
  options.max_num_seqs = 0;
  ExpectInvalid(ValidateDpBalancedProblem({}, options), "max_num_seqs is 0");
  options.max_num_seqs = std::nullopt;
  options.vpp_group = -1;
  ExpectInvalid(ValidateDpBalancedProblem({}, options), "vpp_group is -1");
}

TEST(ValidateDpBalancedTest, RejectsLengthsThatDoNotFitOnePackedSequence) {
  ExpectInvalid(ValidateDpBalancedProblem(std::vector<std::int64_t>{10, 0}, DpOptions(2, 2, 2048)),
                "position 1 (index 1) has length 0");
  ExpectInvalid(ValidateDpBalancedProblem(std::vector<std::int64_t>{4097}, DpOptions(2, 2, 2048)),
                "max_seq_len_per_rank * cp_size = 4096");
}

}  // namespace
}  // namespace dcpsched::validate_test
