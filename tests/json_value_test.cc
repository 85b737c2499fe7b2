#include "io/json_value.h"

#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace dcpsched::json_value_test {
namespace {

using Json = nlohmann::json;

TEST(JsonValueTest, Int64AcceptsIntegersInRangeOnly) {
  EXPECT_EQ(JsonInt64(Json::parse("5")), 5);
  EXPECT_EQ(JsonInt64(Json::parse("-9223372036854775808")),
            std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(JsonInt64(Json::parse("9223372036854775807")),
            std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(JsonInt64(Json::parse("9223372036854775808")), std::nullopt);
  EXPECT_EQ(JsonInt64(Json::parse("5.0")), std::nullopt);
  EXPECT_EQ(JsonInt64(Json::parse("\"5\"")), std::nullopt);
  EXPECT_EQ(JsonInt64(Json::parse("true")), std::nullopt);
  EXPECT_EQ(JsonInt64(Json::parse("null")), std::nullopt);
}

TEST(JsonValueTest, DescriptionShowsScalarsAndOnlyTheTypeOfContainers) {
  EXPECT_EQ(DescribeJsonValue(Json::parse("1.5")), "got 1.5");
  EXPECT_EQ(DescribeJsonValue(Json::parse("9223372036854775808")), "got 9223372036854775808");
  EXPECT_EQ(DescribeJsonValue(Json::parse("false")), "got false");
  EXPECT_EQ(DescribeJsonValue(Json::parse("\"x\"")), "got string");
  EXPECT_EQ(DescribeJsonValue(Json::parse("[1, 2, 3]")), "got array");
  EXPECT_EQ(DescribeJsonValue(Json::parse("{\"a\": 1}")), "got object");
}

}  // namespace
}  // namespace dcpsched::json_value_test
