#include "core/cost_model.h"

#include <bit>
#include <cstdint>

#include "gtest/gtest.h"

namespace dcpsched::cost_model_test {
namespace {

TEST(WorkTest, IsLenSquaredOverCpSizeWithOneRounding) {
  EXPECT_EQ(Work(1024, 1), 1048576.0);
  EXPECT_EQ(Work(3, 2), 4.5);
  // 2^26 squared is 2^52: still exact in a double, then one division.
  const std::int64_t longest = std::int64_t{1} << 26;
  EXPECT_EQ(Work(longest, 3), static_cast<double>(longest * longest) / 3.0);
}

TEST(MinCpSizeTest, SmallestPowerOfTwoThatHoldsTheSample) {
  EXPECT_EQ(MinCpSize(1, 2048, 1), 1);
  EXPECT_EQ(MinCpSize(2048, 2048, 1), 1);
  EXPECT_EQ(MinCpSize(2049, 2048, 1), 2);
  EXPECT_EQ(MinCpSize(4096, 2048, 1), 2);
  EXPECT_EQ(MinCpSize(4097, 2048, 1), 4);
  EXPECT_EQ(MinCpSize(3 * 2048, 2048, 1), 4);  // 3 ranks is not a power of two
  EXPECT_EQ(MinCpSize(std::int64_t{1} << 26, 1, 1), std::int64_t{1} << 26);
}

TEST(MinCpSizeTest, RaisedToMinCpSize) {
  EXPECT_EQ(MinCpSize(10, 2048, 4), 4);
  EXPECT_EQ(MinCpSize(5000, 2048, 2), 4);
}

TEST(WorkCapTest, MultipliesLeftToRightLikeUpstream) {
  const double expected = 8192.0 * 2048.0 * (1.0 + 0.05);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(WorkCap(8192, 2048)),
            std::bit_cast<std::uint64_t>(expected));
  // The order matters: tall * (mslpr * 1.05) is 34.650000000000006 here.
  EXPECT_EQ(WorkCap(3, 11), 34.65);
}

TEST(TokensPerRankTest, IsLenOverCpSize) {
  EXPECT_EQ(TokensPerRank(100, 8), 12.5);
  EXPECT_EQ(TokensPerRank(50, 14), 50.0 / 14.0);
}

}  // namespace
}  // namespace dcpsched::cost_model_test
