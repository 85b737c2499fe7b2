#include "io/json_document.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "io/input_text.h"
#include "nlohmann/json.hpp"

namespace dcpsched {
namespace {

using Json = nlohmann::json;

// "line L, column C" of byte `offset` of `text` (both from 1).
std::string LineAndColumn(absl::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::size_t line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return absl::StrCat("line ", line, ", column ", offset - line_start + 1);
}

// The syntax error the parser stopped at, in dcpsched's words: where, and
// the text from there to the end of its line. `position` counts the bytes
// read, the offending one included.
absl::Status SyntaxError(absl::string_view text, std::size_t position) {
  // The parser counts a byte-order mark; lines and columns do not.
  const absl::string_view body = WithoutByteOrderMark(text);
  const std::size_t mark = text.size() - body.size();
  const std::size_t read = position > mark ? position - mark : 0;
  const std::size_t at = read == 0 ? 0 : read - 1;
  if (at >= body.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not valid JSON: the text ends at ", LineAndColumn(body, body.size()),
        " inside a value; close every brace, bracket and string"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "not valid JSON at ", LineAndColumn(body, at), ": unexpected ",
      QuotedInput(body.substr(at, body.find('\n', at) - at)),
      "; write valid JSON there"));
}

// A SAX pass that stops at the first key an object repeats, or at the
// first syntax error. Containers are tracked on a vector, not the call
// stack, so deep nesting costs memory, not stack.
class RepeatedKeyFinder : public nlohmann::json_sax<Json> {
 public:
  explicit RepeatedKeyFinder(absl::string_view text) : text_(text) {}

  // Set once the pass stopped: the error to report.
  std::optional<absl::Status> error;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    containers_.emplace_back(absl::flat_hash_set<std::string>());
    return true;
  }
  bool key(string_t& key) override {
    if (containers_.back()->insert(key).second) return true;
    error = absl::InvalidArgumentError(absl::StrCat(
        "key \"", EscapedInput(key),
        "\" appears twice in one object; write each key once"));
    return false;
  }
  bool end_object() override {
    containers_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    containers_.emplace_back(std::nullopt);
    return true;
  }
  bool end_array() override {
    containers_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception&) override {
    error = SyntaxError(text_, position);
    return false;
  }

 private:
  const absl::string_view text_;
  // Per open container: its keys so far (objects) or nullopt (arrays).
  std::vector<std::optional<absl::flat_hash_set<std::string>>> containers_;
};

}  // namespace

absl::StatusOr<Json> ParseJsonDocument(absl::string_view text) {
  RepeatedKeyFinder finder(text);
  Json::sax_parse(text.begin(), text.end(), &finder);
  if (finder.error.has_value()) return *finder.error;
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::exception&) {
    // The pass above accepted the same bytes, so this is dcpsched's fault.
    return absl::InternalError(
        "a JSON document the syntax check accepted failed to parse");
  }
}

}  // namespace dcpsched
