// A dynamic-CP problem as one line of text, e.g.
//
//   G=14 mslpr=100 min_cp=1 vpp=none samples=0:50,1:50
//   G=14 mslpr=100 min_cp=1 vpp=none max_num_seqs=2 samples=0:50,1:50
//
// Property tests print failing problems this way, and a regression test turns
// one back into a problem with a single call, so a shrunk counterexample is
// pasted, never hand-copied into arrays. Fields are separated by spaces and
// may come in any order; `min_cp` (default 1), `vpp` (default none) and
// `max_num_seqs` (default none: no cap) may be left out; `samples=` may be
// empty; each sample is `id:len`. FormatProblem writes max_num_seqs, between
// vpp and samples, only when it is set, so a problem without a cap prints as
// it did before the cap existed (and as the Python conformance tool prints
// it).

#ifndef DCPSCHED_IO_PROBLEM_TEXT_H_
#define DCPSCHED_IO_PROBLEM_TEXT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/types.h"

namespace dcpsched {

// The one-line form of `problem`; ParseProblem(FormatProblem(p)) == p.
std::string FormatProblem(const DynamicCpProblem& problem);

// Parses the one-line form. Its bytes are read as io/input_text.h says: a
// leading byte-order mark is dropped, fields are separated by spaces, tabs,
// CR or LF, and a NUL byte is an error. InvalidArgument naming the field
// that is missing, repeated, unknown or not an integer (input shown
// escaped). The values are not checked against the scheduler's limits (see
// core/validate.h).
absl::StatusOr<DynamicCpProblem> ParseProblem(absl::string_view text);

}  // namespace dcpsched

#endif  // DCPSCHED_IO_PROBLEM_TEXT_H_
