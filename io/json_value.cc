#include "io/json_value.h"

#include <limits>

#include "absl/strings/str_cat.h"

namespace dcpsched {

std::string DescribeJsonValue(const nlohmann::json& value) {
  if (value.is_number() || value.is_boolean()) return absl::StrCat("got ", value.dump());
  return absl::StrCat("got ", value.type_name());
}

std::optional<std::int64_t> JsonInt64(const nlohmann::json& value) {
  if (value.is_number_unsigned()) {
    const auto unsigned_value = value.get<std::uint64_t>();
    if (unsigned_value <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return static_cast<std::int64_t>(unsigned_value);
    }
    return std::nullopt;
  }
  if (value.is_number_integer()) return value.get<std::int64_t>();
  return std::nullopt;
}

}  // namespace dcpsched
