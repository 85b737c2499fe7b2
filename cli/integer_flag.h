// Strict validators for the integer flags of dcpsched.
//
// CLI11 alone turns "--seed -1" into 2^64-1, clamps nothing consistently
// and calls "abc" "not in range". A flag's value must be a decimal integer
// (an optional '-' for signed flags, digits only: no '+', spaces, exponent,
// hex or separators) within the flag's range; otherwise the error says
// which of the two it is ("not an integer" or "out of range") and shows the
// value with its non-printable bytes escaped, so no raw input byte reaches
// the terminal.

#ifndef DCPSCHED_CLI_INTEGER_FLAG_H_
#define DCPSCHED_CLI_INTEGER_FLAG_H_

#include <cstdint>

#include "CLI/CLI.hpp"

namespace dcpsched {

// A signed decimal integer in [low, high].
CLI::Validator IntegerIn(std::int64_t low, std::int64_t high);

// An unsigned decimal integer in [0, 2^64 - 1] (no '-').
CLI::Validator UnsignedInteger();

}  // namespace dcpsched

#endif  // DCPSCHED_CLI_INTEGER_FLAG_H_
