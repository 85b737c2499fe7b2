// Tests of io/input_text.h: its three functions, and that every reader of
// dcpsched (lengths files, problem lines, schedule files, golden files)
// treats the same bytes alike: a byte-order mark, CRLF line ends and tabs
// read as the plain text does, a NUL byte is an error, and no error message
// carries a raw input byte.

#include "io/input_text.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "io/golden.h"
#include "io/lengths_file.h"
#include "io/problem_text.h"
#include "io/schedule_file.h"

namespace dcpsched::input_text_test {
namespace {

constexpr absl::string_view kByteOrderMark = "\xEF\xBB\xBF";

// True when every byte of `text` is printable ASCII.
bool PrintableAscii(absl::string_view text) {
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f) return false;
  }
  return true;
}

TEST(InputTextTest, WithoutByteOrderMarkDropsOnlyALeadingMark) {
  EXPECT_EQ(WithoutByteOrderMark(absl::StrCat(kByteOrderMark, "5\n")), "5\n");
  EXPECT_EQ(WithoutByteOrderMark("5\n"), "5\n");
  const std::string inner = absl::StrCat("5", kByteOrderMark);
  EXPECT_EQ(WithoutByteOrderMark(inner), inner);
  EXPECT_EQ(WithoutByteOrderMark("\xEF\xBB"), "\xEF\xBB");  // cut short
}

TEST(InputTextTest, EscapedInputShowsOnlyPrintableAscii) {
  EXPECT_EQ(EscapedInput("a \"b\" 'c' \\"), "a \"b\" 'c' \\");
  EXPECT_EQ(EscapedInput("\t\r\n"), "\\t\\r\\n");
  EXPECT_EQ(EscapedInput(std::string("\0\x01\x7f", 3)), "\\x00\\x01\\x7f");
  EXPECT_EQ(EscapedInput("\xc3\xa9"), "\\xc3\\xa9");
  for (int byte = 0; byte < 256; ++byte) {
    const std::string one(1, static_cast<char>(byte));
    EXPECT_TRUE(PrintableAscii(EscapedInput(one))) << byte;
  }
}

TEST(InputTextTest, QuotedInputIsAQuotedEscapedPrefix) {
  EXPECT_EQ(QuotedInput("12x"), "\"12x\"");
  EXPECT_EQ(QuotedInput("a\"b\tc\x01"), "\"a\\\"b\\tc\\x01\"");
  const std::string long_text(50, 'z');
  EXPECT_EQ(QuotedInput(long_text), absl::StrCat("\"", std::string(40, 'z'), "...\""));
  for (int byte = 0; byte < 256; ++byte) {
    const std::string one(1, static_cast<char>(byte));
    EXPECT_TRUE(PrintableAscii(QuotedInput(one))) << byte;
  }
}

// One reader, as the tests below drive it: the text it reads as a canonical
// string (or the error), a plain input, and a bad input that holds raw
// bytes.
struct Reader {
  std::string name;
  std::function<absl::StatusOr<std::string>(const std::string&)> read;
  std::string plain;
  std::string bad_with_raw_bytes;
};

std::string TempPath(absl::string_view name) {
  return absl::StrCat(::testing::TempDir(), "/input_text_test_", getpid(), "_",
                      name);
}

absl::StatusOr<std::string> ReadGoldenText(const std::string& text) {
  const std::string path = TempPath("golden.jsonl");
  std::ofstream(path, std::ios::binary) << text;
  const absl::StatusOr<GoldenFileReport> report = CheckGoldenFile(path);
  std::remove(path.c_str());
  if (!report.ok()) return report.status();
  if (report->failed > 0) {
    return absl::InvalidArgumentError(report->failures.front());
  }
  return absl::StrCat(report->passed, " passed");
}

std::vector<Reader> Readers() {
  const std::string golden_line =
      "{\"name\":\"t-1\",\"kind\":\"schedule\",\"scheduler\":\"packing_aware\","
      "\"total_gpus\":2,\"dp_size\":1,\"cp_size\":2,\"max_seq_len_per_rank\":"
      "2048,\"min_cp_size\":1,\"vpp_group\":null,\"max_num_seqs\":null,"
      "\"samples\":[[0,128],[1,300]],\"expect\":{\"ok\":true,\"groups\":"
      "[[[1],[0]]]}}\n";
  return {
      {"lengths file",
       [](const std::string& text) -> absl::StatusOr<std::string> {
         absl::StatusOr<std::vector<Sample>> samples = ParseLengthsFile(text);
         if (!samples.ok()) return samples.status();
         return FormatLengthsFile(*samples);
       },
       "# a batch\n7,100\n8,200 # a comment\n",
       "7,100\n8,2\xc3\xa9\x01\n"},
      {"problem text",
       [](const std::string& text) -> absl::StatusOr<std::string> {
         absl::StatusOr<DynamicCpProblem> problem = ParseProblem(text);
         if (!problem.ok()) return problem.status();
         return FormatProblem(*problem);
       },
       "G=4 mslpr=100 min_cp=1 vpp=none samples=0:50,1:60\n",
       "G=4 mslpr=1\xc3\xa9\x01 samples=0:50\n"},
      {"schedule file",
       [](const std::string& text) -> absl::StatusOr<std::string> {
         absl::StatusOr<ScheduleFile> file = ParseScheduleFile(text);
         if (!file.ok()) return file.status();
         return FormatScheduleFile(*file);
       },
       "{\n \"format\": \"dcpsched.schedule.v1\",\n \"total_gpus\": 2,\n"
       " \"max_seq_len_per_rank\": 2048,\n \"samples\": [[0, 128], [1, 300]],\n"
       " \"groups\": [[[1, 0], [1, 0]]]\n}\n",
       // A key that decodes to raw bytes (JSON escapes them).
       "{\"format\": \"dcpsched.schedule.v1\", \"x\\u00e9\\u0001\": 1}\n"},
      {"golden file", ReadGoldenText, golden_line,
       "{\"name\":\"t\",\"kind\":\"sch\\u00e9\\u0001\"}\n"},
  };
}

TEST(InputTextTest, EveryReaderReadsMarkCrlfAndTabsAsThePlainText) {
  for (const Reader& reader : Readers()) {
    SCOPED_TRACE(reader.name);
    const absl::StatusOr<std::string> plain = reader.read(reader.plain);
    ASSERT_TRUE(plain.ok()) << plain.status();
    const std::string with_mark = absl::StrCat(kByteOrderMark, reader.plain);
    const std::string crlf = absl::StrReplaceAll(reader.plain, {{"\n", "\r\n"}});
    const std::string tabs = absl::StrReplaceAll(reader.plain, {{" ", "\t"}});
    for (const std::string& variant : {with_mark, crlf, tabs}) {
      const absl::StatusOr<std::string> read = reader.read(variant);
      ASSERT_TRUE(read.ok()) << read.status() << " on " << EscapedInput(variant);
      EXPECT_EQ(*read, *plain) << EscapedInput(variant);
    }
  }
}

TEST(InputTextTest, EveryReaderRefusesANulByte) {
  for (const Reader& reader : Readers()) {
    SCOPED_TRACE(reader.name);
    std::string with_nul = reader.plain;
    with_nul.insert(with_nul.size() / 2, 1, '\0');
    const absl::StatusOr<std::string> read = reader.read(with_nul);
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(PrintableAscii(read.status().message()))
        << EscapedInput(read.status().message());
  }
}

TEST(InputTextTest, NoErrorMessageCarriesARawInputByte) {
  for (const Reader& reader : Readers()) {
    SCOPED_TRACE(reader.name);
    const absl::StatusOr<std::string> read = reader.read(reader.bad_with_raw_bytes);
    ASSERT_FALSE(read.ok());
    EXPECT_TRUE(PrintableAscii(read.status().message()))
        << EscapedInput(read.status().message());
    EXPECT_NE(read.status().message().find("\\xc3\\xa9"), absl::string_view::npos)
        << read.status().message();
  }
  // Invalid UTF-8 inside JSON: the parser's own message quotes the byte.
  const absl::StatusOr<ScheduleFile> file =
      ParseScheduleFile("{\"format\": \"\xff\x01\"}");
  ASSERT_FALSE(file.ok());
  EXPECT_TRUE(PrintableAscii(file.status().message()))
      << EscapedInput(file.status().message());
}

}  // namespace
}  // namespace dcpsched::input_text_test
