#include "io/lengths_file.h"

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/types/span.h"
#include "core/types.h"
#include "core/validate.h"
#include "io/input_text.h"

namespace dcpsched {
namespace {

// The two line forms of a lengths file.
enum class LineForm { kLength, kIdAndLength };

absl::string_view FormName(LineForm form) {
  return form == LineForm::kLength ? "`len`" : "`id,len`";
}

absl::string_view TrimBlanks(absl::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t\r");
  if (first == absl::string_view::npos) return {};
  const std::size_t last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

// The line without its comment and surrounding blanks.
absl::string_view ContentOf(absl::string_view line) {
  return TrimBlanks(line.substr(0, line.find('#')));
}

absl::Status LineError(std::size_t line_number, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("line ", line_number, ": ", message));
}

// Parses one field as a signed 64-bit decimal integer.
absl::StatusOr<std::int64_t> ParseInteger(absl::string_view field,
                                          absl::string_view field_name,
                                          std::size_t line_number) {
  if (field.empty()) {
    return LineError(line_number,
                     absl::StrCat("the ", field_name,
                                  " is missing; write `len` or `id,len`"));
  }
  std::int64_t value = 0;
  const char* const end = field.data() + field.size();
  const auto [stop, error] = std::from_chars(field.data(), end, value);
  if (error == std::errc::result_out_of_range) {
    return LineError(line_number,
                     absl::StrCat("the ", field_name, " ", QuotedInput(field),
                                  " does not fit in a signed 64-bit integer"));
  }
  if (error != std::errc()) {
    return LineError(
        line_number,
        absl::StrCat("the ", field_name, " ", QuotedInput(field),
                     " is not a number; write a decimal integer such as 1024"));
  }
  if (stop != end) {
    return LineError(
        line_number,
        absl::StrCat("the ", field_name, " ", QuotedInput(field),
                     " has unexpected characters ",
                     QuotedInput(absl::string_view(
                         stop, static_cast<std::size_t>(end - stop))),
                     " after the number; write a whole decimal integer "
                     "(fields are separated by one comma, comments start "
                     "with #)"));
  }
  return value;
}

absl::StatusOr<std::int64_t> ParseLength(absl::string_view field,
                                         std::size_t line_number) {
  absl::StatusOr<std::int64_t> len = ParseInteger(field, "length", line_number);
  if (!len.ok()) return len;
  if (*len < 0) {
    return LineError(line_number, absl::StrCat("length ", *len,
                                               " is negative; lengths "
                                               "must be between 1 and ",
                                               kMaxSampleLen));
  }
  if (*len < 1 || *len > kMaxSampleLen) {
    return LineError(line_number, absl::StrCat("length ", *len,
                                               " is out of range; lengths "
                                               "must be between 1 and ",
                                               kMaxSampleLen));
  }
  return len;
}

// True if every field of the line begins with a letter: a header such as
// `id,len` or `length`, not a mistyped number.
bool IsWordLine(absl::string_view content) {
  for (const absl::string_view field : absl::StrSplit(content, ',')) {
    const absl::string_view trimmed = TrimBlanks(field);
    if (trimmed.empty() || !absl::ascii_isalpha(
                               static_cast<unsigned char>(trimmed.front()))) {
      return false;
    }
  }
  return true;
}

// Parser state across lines: the form in use and where each id was seen.
class LengthsFileParser {
 public:
  absl::Status ParseLine(absl::string_view line, std::size_t line_number) {
    const absl::string_view content = ContentOf(line);
    if (content.empty()) return absl::OkStatus();
    const std::vector<absl::string_view> fields = absl::StrSplit(content, ',');
    if (fields.size() > 2) {
      return LineError(line_number,
                       absl::StrCat(QuotedInput(content), " has ", fields.size(),
                                    " comma-separated fields; write `len` or "
                                    "`id,len`"));
    }
    const LineForm form =
        fields.size() == 1 ? LineForm::kLength : LineForm::kIdAndLength;
    const bool first_content_line = !form_.has_value();
    if (absl::Status same = CheckSameForm(form, line_number); !same.ok()) {
      return same;
    }
    absl::Status added =
        form == LineForm::kLength
            ? AddSample(static_cast<SampleId>(samples_.size()),
                        TrimBlanks(fields[0]), line_number)
            : AddSampleWithId(TrimBlanks(fields[0]), TrimBlanks(fields[1]),
                              line_number);
    if (!added.ok() && first_content_line && IsWordLine(content)) {
      // A first line of words is a header (`id,len`, CSV exports have one).
      return absl::InvalidArgumentError(absl::StrCat(
          added.message(), "; if line ", line_number,
          " is a header, comment it out with # (e.g. `# ", content, "`)"));
    }
    return added;
  }

  std::vector<Sample> TakeSamples() && { return std::move(samples_); }

 private:
  absl::Status CheckSameForm(LineForm form, std::size_t line_number) {
    if (!form_.has_value()) {
      form_ = form;
      form_line_ = line_number;
      return absl::OkStatus();
    }
    if (*form_ == form) return absl::OkStatus();
    return LineError(
        line_number,
        absl::StrCat("this line uses the ", FormName(form), " form but line ",
                     form_line_, " uses ", FormName(*form_),
                     "; use one form for the whole file"));
  }

  absl::Status AddSampleWithId(absl::string_view id_field,
                               absl::string_view len_field,
                               std::size_t line_number) {
    absl::StatusOr<std::int64_t> id = ParseInteger(id_field, "id", line_number);
    if (!id.ok()) return id.status();
    return AddSample(*id, len_field, line_number);
  }

  absl::Status AddSample(SampleId id, absl::string_view len_field,
                         std::size_t line_number) {
    absl::StatusOr<std::int64_t> len = ParseLength(len_field, line_number);
    if (!len.ok()) return len.status();
    const auto [seen, inserted] = id_lines_.try_emplace(id, line_number);
    if (!inserted) {
      return LineError(line_number,
                       absl::StrCat("id ", id, " was already used on line ",
                                    seen->second, "; ids must be unique"));
    }
    samples_.push_back({id, *len});
    return absl::OkStatus();
  }

  std::optional<LineForm> form_;
  std::size_t form_line_ = 0;
  absl::flat_hash_map<SampleId, std::size_t> id_lines_;
  std::vector<Sample> samples_;
};

bool IdsArePositions(absl::Span<const Sample> samples) {
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (samples[i].id != static_cast<SampleId>(i)) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::vector<Sample>> ParseLengthsFile(
    absl::string_view contents) {
  LengthsFileParser parser;
  std::size_t line_number = 0;
  contents = WithoutByteOrderMark(contents);
  for (const absl::string_view line : absl::StrSplit(contents, '\n')) {
    ++line_number;
    if (line.find('\0') != absl::string_view::npos) {
      return LineError(line_number,
                       "holds a NUL byte; a lengths file is text (is this a "
                       "binary file?)");
    }
    if (absl::Status parsed = parser.ParseLine(line, line_number);
        !parsed.ok()) {
      return parsed;
    }
  }
  return std::move(parser).TakeSamples();
}

namespace {

// The bytes of the file at `path`, or of standard input for "-".
absl::StatusOr<std::string> ReadLengthsInput(const std::string& path) {
  std::ostringstream contents;
  if (path == "-") {
    contents << std::cin.rdbuf();
    return contents.str();
  }
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", path, "\" is a directory; give the path of a lengths file"));
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return absl::NotFoundError(
        absl::StrCat("cannot open lengths file \"", path,
                     "\"; check the path and its permissions"));
  }
  contents << file.rdbuf();
  if (file.bad()) {
    return absl::DataLossError(
        absl::StrCat("error while reading lengths file \"", path, "\""));
  }
  return contents.str();
}

}  // namespace

absl::StatusOr<std::vector<Sample>> ReadLengthsFile(const std::string& path) {
  const absl::StatusOr<std::string> contents = ReadLengthsInput(path);
  if (!contents.ok()) return contents.status();
  absl::StatusOr<std::vector<Sample>> samples = ParseLengthsFile(*contents);
  if (!samples.ok()) {
    return absl::Status(samples.status().code(),
                        absl::StrCat(path == "-" ? "<stdin>" : path, ": ",
                                     samples.status().message()));
  }
  return samples;
}

std::string FormatLengthsFile(absl::Span<const Sample> samples) {
  const bool implicit_ids = IdsArePositions(samples);
  std::string text = absl::StrFormat(
      "# dcpsched lengths file: %d samples, one per line as %s\n",
      samples.size(), implicit_ids ? "len (id = position)" : "id,len");
  for (const Sample& sample : samples) {
    if (implicit_ids) {
      absl::StrAppend(&text, sample.len, "\n");
    } else {
      absl::StrAppend(&text, sample.id, ",", sample.len, "\n");
    }
  }
  return text;
}

}  // namespace dcpsched
