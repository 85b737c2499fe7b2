// How every reader of dcpsched treats the bytes of its input: lengths files,
// problem lines, schedule files and golden vectors alike.
//
//   - A UTF-8 byte-order mark at the start, which some editors write, is not
//     part of the text.
//   - Line ends may be LF or CRLF, and blanks may be spaces or tabs (JSON
//     says so itself; the line readers follow).
//   - A NUL byte is an error: the file is not text.
//   - An error message never carries a raw input byte: anything that is not
//     printable ASCII is shown escaped (\t, \r, \x01, \xc3\xa9), so a message
//     cannot garble the terminal or hide what the input holds.

#ifndef DCPSCHED_IO_INPUT_TEXT_H_
#define DCPSCHED_IO_INPUT_TEXT_H_

#include <string>

#include "absl/strings/string_view.h"

namespace dcpsched {

// `text` without a leading UTF-8 byte-order mark.
absl::string_view WithoutByteOrderMark(absl::string_view text);

// `text` for an error message: every byte that is not printable ASCII
// escaped as \t, \r, \n or \xhh; the rest as it is.
std::string EscapedInput(absl::string_view text);

// A piece of input named in a message: in double quotes, escaped as C
// escapes a string literal (so quotes and backslashes too), cut to its first
// 40 bytes with "..." if longer.
std::string QuotedInput(absl::string_view text);

}  // namespace dcpsched

#endif  // DCPSCHED_IO_INPUT_TEXT_H_
