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
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "io/input_text.h"
#include "nlohmann/json.hpp"

namespace dcpsched {
namespace {

using Json = nlohmann::json;

// The library's message without its "[json.exception.parse_error.101] " tag.
std::string WithoutExceptionTag(absl::string_view message) {
  if (absl::StartsWith(message, "[json.exception.")) {
    const std::size_t end = message.find("] ");
    if (end != absl::string_view::npos) message.remove_prefix(end + 2);
  }
  return std::string(message);
}

// A SAX pass that stops at the first key an object repeats, or at the
// first syntax error. Containers are tracked on a vector, not the call
// stack, so deep nesting costs memory, not stack.
class RepeatedKeyFinder : public nlohmann::json_sax<Json> {
 public:
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
  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::detail::exception& exception) override {
    error = absl::InvalidArgumentError(
        absl::StrCat("not valid JSON: ", EscapedInput(WithoutExceptionTag(exception.what()))));
    return false;
  }

 private:
  // Per open container: its keys so far (objects) or nullopt (arrays).
  std::vector<std::optional<absl::flat_hash_set<std::string>>> containers_;
};

}  // namespace

absl::StatusOr<Json> ParseJsonDocument(absl::string_view text) {
  RepeatedKeyFinder finder;
  Json::sax_parse(text.begin(), text.end(), &finder);
  if (finder.error.has_value()) return *finder.error;
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::exception& exception) {
    return absl::InvalidArgumentError(
        absl::StrCat("not valid JSON: ", EscapedInput(WithoutExceptionTag(exception.what()))));
  }
}

}  // namespace dcpsched
