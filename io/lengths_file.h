// Lengths files: a global batch written as plain text, one sample per line.
//
// Format:
//   - Each sample line is either `len` or `id,len`, decimal integers (an
//     optional leading '-', no '+', no exponent, no digit separators).
//     With `len` lines a sample's id is its index among the samples of the
//     file (0-based, counting only sample lines); with `id,len` lines the id
//     is given (any signed 64-bit integer, unique within the file).
//   - One file uses one form: mixing `len` and `id,len` lines is an error,
//     because implicit ids (positions) could silently collide with explicit
//     ones.
//   - `#` starts a comment that runs to the end of the line; blank lines and
//     comment-only lines are skipped; spaces and tabs around fields are
//     ignored; "\r\n" line ends are accepted, and so is a UTF-8 byte-order
//     mark at the start of the file. A NUL byte is an error.
//   - Lengths must be in [1, 2^26], the range every scheduler accepts.
//
// Example:
//   # id,len
//   7,4096
//   3, 512   # a short one
//
// Every error is InvalidArgument and reads "line N: <what is wrong>; <what
// is allowed>", N being the 1-based line number in the file. Input bytes
// quoted in a message are escaped unless they are printable ASCII.

#ifndef DCPSCHED_IO_LENGTHS_FILE_H_
#define DCPSCHED_IO_LENGTHS_FILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/types.h"

namespace dcpsched {

// Parses the contents of a lengths file. Samples come back in file order.
absl::StatusOr<std::vector<Sample>> ParseLengthsFile(
    absl::string_view contents);

// Reads and parses the file at `path` ("-": standard input). NotFound if it
// cannot be opened; parse errors are prefixed with the path ("<stdin>").
absl::StatusOr<std::vector<Sample>> ReadLengthsFile(const std::string& path);

// Writes `samples` as a lengths file that ParseLengthsFile reads back to the
// same samples (when they are valid: unique ids, lengths in [1, 2^26]). Uses
// the `len` form when every id equals its position, `id,len` otherwise, and
// starts with a comment naming the form.
std::string FormatLengthsFile(absl::Span<const Sample> samples);

}  // namespace dcpsched

#endif  // DCPSCHED_IO_LENGTHS_FILE_H_
