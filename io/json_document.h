// Parsing one JSON document strictly, for every JSON reader of dcpsched
// (schedule files, golden vectors).
//
// nlohmann::json alone keeps the last of two equal keys in an object, so a
// document that says "total_gpus": 4 and then "total_gpus": 8 reads as 8
// without a word. Here a repeated key is an error naming the key, and a
// syntax error says, in dcpsched's words rather than the library's, where
// it is and what was read there (escaped, io/input_text.h).

#ifndef DCPSCHED_IO_JSON_DOCUMENT_H_
#define DCPSCHED_IO_JSON_DOCUMENT_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace dcpsched {

// The document `text` holds. InvalidArgument "not valid JSON at line L,
// column C: unexpected ..." (or "... the text ends at ...") for a syntax
// error, and "key \"k\" appears twice in one object ..." for a repeated
// key.
absl::StatusOr<nlohmann::json> ParseJsonDocument(absl::string_view text);

}  // namespace dcpsched

#endif  // DCPSCHED_IO_JSON_DOCUMENT_H_
