#include "cli/integer_flag.h"

#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace dcpsched {
namespace {

bool IsDecimal(absl::string_view text, bool allow_minus) {
  if (allow_minus) absl::ConsumePrefix(&text, "-");
  if (text.empty()) return false;
  for (const char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string NotAnInteger(const std::string& value, absl::string_view what) {
  return absl::StrCat("not an integer: \"", absl::CHexEscape(value), "\"; give ",
                      what);
}

std::string OutOfRange(const std::string& value, absl::string_view range) {
  return absl::StrCat("out of range: ", value, " is not in ", range);
}

}  // namespace

CLI::Validator IntegerIn(std::int64_t low, std::int64_t high) {
  const std::string range = absl::StrCat("[", low, ", ", high, "]");
  return CLI::Validator(
      [low, high, range](std::string& value) -> std::string {
        if (!IsDecimal(value, /*allow_minus=*/true)) {
          return NotAnInteger(value, absl::StrCat("a decimal integer in ", range));
        }
        std::int64_t parsed = 0;
        if (!absl::SimpleAtoi(value, &parsed) || parsed < low || parsed > high) {
          return OutOfRange(value, range);
        }
        return std::string();
      },
      absl::StrCat("INT in ", range));
}

CLI::Validator UnsignedInteger() {
  const std::string range = "[0, 18446744073709551615]";
  return CLI::Validator(
      [range](std::string& value) -> std::string {
        if (!IsDecimal(value, /*allow_minus=*/true)) {
          return NotAnInteger(value, absl::StrCat("a decimal integer in ", range));
        }
        std::uint64_t parsed = 0;
        if (value.front() == '-' || !absl::SimpleAtoi(value, &parsed)) {
          return OutOfRange(value, range);
        }
        return std::string();
      },
      "UINT64");
}

}  // namespace dcpsched
