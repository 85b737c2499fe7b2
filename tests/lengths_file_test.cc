#include "io/lengths_file.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/types.h"
#include "gtest/gtest.h"

namespace dcpsched::lengths_file_test {
namespace {

// Expects `contents` to be rejected with InvalidArgument whose message
// contains every one of `fragments`.
void ExpectRejected(const std::string& contents,
                    const std::vector<std::string>& fragments) {
  const absl::StatusOr<std::vector<Sample>> samples =
      ParseLengthsFile(contents);
  ASSERT_EQ(samples.status().code(), absl::StatusCode::kInvalidArgument)
      << "contents: " << contents;
  for (const std::string& fragment : fragments) {
    EXPECT_TRUE(absl::StrContains(samples.status().message(), fragment))
        << "message \"" << samples.status().message() << "\" lacks \""
        << fragment << "\"";
  }
}

TEST(ParseLengthsFileTest, BareLengthsGetTheirPositionAsId) {
  const absl::StatusOr<std::vector<Sample>> samples =
      ParseLengthsFile("4096\n512\n128\n");

  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ(*samples, (std::vector<Sample>{{0, 4096}, {1, 512}, {2, 128}}));
}

TEST(ParseLengthsFileTest, ExplicitIdsAreKept) {
  const absl::StatusOr<std::vector<Sample>> samples =
      ParseLengthsFile("7,4096\n-3,512\n9223372036854775807,1");

  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ(*samples,
            (std::vector<Sample>{{7, 4096}, {-3, 512}, {INT64_MAX, 1}}));
}

TEST(ParseLengthsFileTest, CommentsBlankLinesAndBlanksAreSkipped) {
  const absl::StatusOr<std::vector<Sample>> samples = ParseLengthsFile(
      "# header\n\n   \n\t 100 \t\r\n# 5\n200   # trailing comment\r\n");

  ASSERT_TRUE(samples.ok()) << samples.status();
  // Ids count sample lines only, not comments or blank lines.
  EXPECT_EQ(*samples, (std::vector<Sample>{{0, 100}, {1, 200}}));
}

TEST(ParseLengthsFileTest, BlanksAroundTheCommaAreSkipped) {
  const absl::StatusOr<std::vector<Sample>> samples =
      ParseLengthsFile(" 3 ,  40 \n");

  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ(*samples, (std::vector<Sample>{{3, 40}}));
}

TEST(ParseLengthsFileTest, EmptyFileHasNoSamples) {
  EXPECT_TRUE(ParseLengthsFile("").value().empty());
  EXPECT_TRUE(ParseLengthsFile("# nothing\n\n").value().empty());
}

TEST(ParseLengthsFileTest, ErrorsNameTheLineAndTheProblem) {
  ExpectRejected("100\nabc\n", {"line 2", "\"abc\" is not a number"});
  ExpectRejected("100\n\n-5\n",
                 {"line 3", "length -5 is negative", "between 1 and 67108864"});
  ExpectRejected("0\n", {"line 1", "length 0 is out of range"});
  ExpectRejected("67108865\n", {"line 1", "out of range"});
  ExpectRejected("12x\n", {"line 1", "unexpected characters \"x\""});
  ExpectRejected("1.5\n", {"line 1", "unexpected characters \".5\""});
  ExpectRejected("1 2\n", {"line 1", "unexpected characters"});
  ExpectRejected("+5\n", {"line 1", "not a number"});
  ExpectRejected("99999999999999999999\n",
                 {"line 1", "does not fit in a signed 64-bit integer"});
  ExpectRejected("1,99999999999999999999\n",
                 {"line 1", "length", "does not fit"});
  ExpectRejected("99999999999999999999,1\n", {"line 1", "id", "does not fit"});
  ExpectRejected("1,2,3\n", {"line 1", "3 comma-separated fields"});
  ExpectRejected("5,\n", {"line 1", "the length is missing"});
  ExpectRejected(",5\n", {"line 1", "the id is missing"});
}

TEST(ParseLengthsFileTest, AHeaderLineIsExplained) {
  // A CSV export's header: the error says to comment it out.
  ExpectRejected("id,len\n1,100\n",
                 {"line 1", "the id \"id\" is not a number",
                  "if line 1 is a header, comment it out with # (e.g. `# id,len`)"});
  ExpectRejected("\n# lengths\nlength\n100\n",
                 {"line 3", "if line 3 is a header, comment it out with #"});
  // Commented out, it is skipped.
  EXPECT_EQ(ParseLengthsFile("# id,len\n1,100\n").value(),
            (std::vector<Sample>{{1, 100}}));
  // A mistyped number is not called a header, nor a word on a later line.
  const absl::StatusOr<std::vector<Sample>> typo = ParseLengthsFile("+5\n");
  ASSERT_FALSE(typo.ok());
  EXPECT_FALSE(absl::StrContains(typo.status().message(), "header"));
  const absl::StatusOr<std::vector<Sample>> later = ParseLengthsFile("100\nabc\n");
  ASSERT_FALSE(later.ok());
  EXPECT_FALSE(absl::StrContains(later.status().message(), "header"));
}

TEST(ParseLengthsFileTest, MixedFormsAreRejected) {
  ExpectRejected("# ids\n1,100\n200\n",
                 {"line 3", "`len` form but line 2 uses `id,len`",
                  "one form for the whole file"});
  ExpectRejected("100\n1,200\n", {"line 2", "`id,len` form but line 1"});
}

TEST(ParseLengthsFileTest, RepeatedIdsAreRejected) {
  ExpectRejected("4,100\n5,100\n4,300\n",
                 {"line 3", "id 4 was already used on line 1"});
}

// A byte-order mark, CRLF line ends and tabs read as the plain file does.
TEST(ParseLengthsFileTest, ByteOrderMarkCrlfAndTabsReadAsThePlainFile) {
  const absl::StatusOr<std::vector<Sample>> plain = ParseLengthsFile("7,10\n8,20\n");
  ASSERT_TRUE(plain.ok()) << plain.status();
  for (const std::string contents :
       {"\xEF\xBB\xBF" "7,10\n8,20\n", "7,10\r\n8,20\r\n", "\t7,\t10\t\n8 , 20\n"}) {
    const absl::StatusOr<std::vector<Sample>> samples = ParseLengthsFile(contents);
    ASSERT_TRUE(samples.ok()) << samples.status();
    EXPECT_EQ(*samples, *plain);
  }
}

TEST(ParseLengthsFileTest, NulByteIsAnError) {
  ExpectRejected(std::string("7,10\n8,2\0" "0\n", 10), {"line 2: holds a NUL byte"});
}

// Quoted input never carries raw bytes to the terminal.
TEST(ParseLengthsFileTest, MessagesEscapeBytesThatAreNotPrintable) {
  const absl::StatusOr<std::vector<Sample>> samples =
      ParseLengthsFile("12\x1b[31m\xff\n");
  ASSERT_FALSE(samples.ok());
  const std::string message(samples.status().message());
  EXPECT_EQ(message.find('\x1b'), std::string::npos) << message;
  EXPECT_EQ(message.find('\xff'), std::string::npos) << message;
  EXPECT_NE(message.find("\\x1b"), std::string::npos) << message;
}

TEST(FormatLengthsFileTest, RoundTripsImplicitIds) {
  const std::vector<Sample> samples = {{0, 5}, {1, 67108864}, {2, 1}};

  const std::string text = FormatLengthsFile(samples);

  EXPECT_EQ(text,
            "# dcpsched lengths file: 3 samples, one per line as len (id = "
            "position)\n5\n67108864\n1\n");
  EXPECT_EQ(ParseLengthsFile(text).value(), samples);
}

TEST(FormatLengthsFileTest, RoundTripsExplicitIds) {
  const std::vector<Sample> samples = {
      {1, 5}, {0, 6}, {INT64_MIN, 7}, {INT64_MAX, 8}};

  const std::string text = FormatLengthsFile(samples);

  EXPECT_TRUE(absl::StrContains(text, "\n1,5\n0,6\n")) << text;
  EXPECT_EQ(ParseLengthsFile(text).value(), samples);
}

TEST(FormatLengthsFileTest, RoundTripsNoSamples) {
  EXPECT_TRUE(ParseLengthsFile(FormatLengthsFile({})).value().empty());
}

TEST(ReadLengthsFileTest, ReadsAFileAndPrefixesErrorsWithItsPath) {
  // Named after the process: the mutation runner runs two copies at once.
  const std::string path = absl::StrCat(::testing::TempDir(), "/lengths_file_test_",
                                        getpid(), "_lengths.txt");
  {
    std::ofstream file(path);
    file << "10\n20\n";
  }
  EXPECT_EQ(ReadLengthsFile(path).value(),
            (std::vector<Sample>{{0, 10}, {1, 20}}));

  {
    std::ofstream file(path);
    file << "10\n-20\n";
  }
  const absl::Status error = ReadLengthsFile(path).status();
  EXPECT_EQ(error.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(error.message(), path + ": line 2: length -20"))
      << error.message();
  std::remove(path.c_str());
}

TEST(ReadLengthsFileTest, MissingFileIsNotFound) {
  EXPECT_EQ(
      ReadLengthsFile("/nonexistent/dcpsched/lengths.txt").status().code(),
      absl::StatusCode::kNotFound);
  EXPECT_EQ(ReadLengthsFile(::testing::TempDir()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dcpsched::lengths_file_test
