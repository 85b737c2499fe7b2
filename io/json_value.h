// Reading typed values out of parsed JSON (nlohmann::json), shared by the
// readers of golden vectors (io/golden.h) and schedule files
// (io/schedule_file.h), which wrap the answers in errors naming the field.

#ifndef DCPSCHED_IO_JSON_VALUE_H_
#define DCPSCHED_IO_JSON_VALUE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "nlohmann/json.hpp"

namespace dcpsched {

// What a value is, for an error message: "got 1.5", "got true", or its JSON
// type ("got string"); never the whole of an array or object.
std::string DescribeJsonValue(const nlohmann::json& value);

// The value as an int64 if it is a JSON integer in int64 range; nullopt for
// floats (even 5.0), strings, booleans and integers outside int64 (which
// nlohmann keeps as uint64 or as a float).
std::optional<std::int64_t> JsonInt64(const nlohmann::json& value);

}  // namespace dcpsched

#endif  // DCPSCHED_IO_JSON_VALUE_H_
