#include "io/input_text.h"

#include <cstddef>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace dcpsched {

absl::string_view WithoutByteOrderMark(absl::string_view text) {
  absl::ConsumePrefix(&text, "\xEF\xBB\xBF");
  return text;
}

std::string EscapedInput(absl::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      escaped += c;
    } else if (c == '\t') {
      escaped += "\\t";
    } else if (c == '\r') {
      escaped += "\\r";
    } else if (c == '\n') {
      escaped += "\\n";
    } else {
      absl::StrAppendFormat(&escaped, "\\x%02x", byte);
    }
  }
  return escaped;
}

std::string QuotedInput(absl::string_view text) {
  constexpr std::size_t kMaxShown = 40;
  if (text.size() <= kMaxShown) return absl::StrCat("\"", absl::CHexEscape(text), "\"");
  return absl::StrCat("\"", absl::CHexEscape(text.substr(0, kMaxShown)), "...\"");
}

}  // namespace dcpsched
