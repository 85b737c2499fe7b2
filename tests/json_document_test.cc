// Tests of io/json_document.h: repeated keys are errors, and a syntax error
// says where it is and what is there, in dcpsched's words.

#include "io/json_document.h"

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dcpsched::json_document_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string ErrorOf(const std::string& text) {
  const absl::StatusOr<nlohmann::json> document = ParseJsonDocument(text);
  EXPECT_FALSE(document.ok()) << text;
  if (document.ok()) return "";
  EXPECT_EQ(document.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(document.status().message());
}

TEST(JsonDocumentTest, ParsesADocument) {
  const absl::StatusOr<nlohmann::json> document =
      ParseJsonDocument("\xEF\xBB\xBF{\"a\": [1, {\"b\": 2}]}\r\n");
  ASSERT_TRUE(document.ok()) << document.status();
  EXPECT_EQ((*document)["a"][1]["b"], 2);
}

TEST(JsonDocumentTest, RepeatedKeyIsNamed) {
  EXPECT_THAT(ErrorOf("{\"a\": {\"k\": 1, \"k\": 2}}"),
              HasSubstr("key \"k\" appears twice in one object"));
  // The same key in two objects is fine.
  EXPECT_TRUE(ParseJsonDocument("[{\"k\": 1}, {\"k\": 2}]").ok());
}

TEST(JsonDocumentTest, SyntaxErrorGivesLineColumnAndTheTextThere) {
  EXPECT_EQ(ErrorOf("{\"a\": 1,\n \"b\" 2}"),
            "not valid JSON at line 2, column 6: unexpected \"2}\"; write "
            "valid JSON there");
  EXPECT_EQ(ErrorOf("{\"a\":1}{\"b\":2}"),
            "not valid JSON at line 1, column 8: unexpected \"{\\\"b\\\":2}\"; "
            "write valid JSON there");
}

TEST(JsonDocumentTest, ColumnsDoNotCountAByteOrderMark) {
  EXPECT_THAT(ErrorOf("\xEF\xBB\xBF{\"a\" 1}"), HasSubstr("line 1, column 6"));
}

TEST(JsonDocumentTest, TextThatEndsInsideAValueSaysSo) {
  EXPECT_EQ(ErrorOf("{\"total_gpus\": 2,\n \"groups\": [[[1, 2]]\n"),
            "not valid JSON: the text ends at line 3, column 1 inside a value; "
            "close every brace, bracket and string");
  EXPECT_THAT(ErrorOf("[\"abc"), HasSubstr("the text ends at line 1, column 6"));
}

TEST(JsonDocumentTest, MessagesHoldNoLibraryTextAndNoRawBytes) {
  for (const std::string& text :
       {std::string("{\"a\": tru}"), std::string("{\"a\": \"\xff\"}"),
        std::string("{\"a\": \"\x01\"}"), std::string("{\"a\"\0: 1}", 9),
        std::string("{,}")}) {
    const std::string message = ErrorOf(text);
    EXPECT_THAT(message, Not(HasSubstr("json.exception")));
    EXPECT_THAT(message, Not(HasSubstr("syntax error while parsing")));
    EXPECT_THAT(message, Not(HasSubstr("last read")));
    for (const char c : message) {
      const auto byte = static_cast<unsigned char>(c);
      EXPECT_TRUE(byte >= 0x20 && byte < 0x7f) << message;
    }
  }
}

}  // namespace
}  // namespace dcpsched::json_document_test
