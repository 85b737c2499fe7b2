// Every dynamic-CP problem drawn from explicit finite sets, in a fixed order.
//
// Random problems (properties/generators.h) sample the space; this
// enumerates all of a bounded part of it, so that a check run on every
// problem makes "no counterexample within these sets" a statement rather
// than a sample (tests/exhaustive_check.cc; the conformance tool's
// --exhaustive runs the same problems through upstream). The sets are one
// line of text, every field required, lists comma-separated, `a..b` an
// inclusive range:
//
//   G=1..16 n=0..3 lens=1,m-1,m,m+1,2m-1,2m,2m+1,4m mslpr=4
//   min_cp=1,2 vpp=none,2 max_num_seqs=none,1
//
// (one line in use). A length is `c`, `km`, `km+c` or `km-c` (k and c
// integers, `m` meaning k = 1): k * mslpr + c, so the thresholds where a
// sample's minimum CP size changes (m, 2m, 4m, ...) and their neighbours are
// named for every mslpr. For one mslpr the lengths are the distinct values
// of the terms in [1, 2^26], in the order written (a term equal to an
// earlier one, or out of range, is dropped).
//
// The problems are the whole product, nothing left out: for each G, mslpr,
// min_cp, vpp, max_num_seqs and n, in the order written, every sequence of
// n lengths (sequences, not multisets: ties keep input order, so every
// order counts), in lexicographic order of the lengths' positions in the
// list, the first sample most significant. A combination that is not valid
// input (min_cp > G, a sample too long for G ranks) is enumerated too: its
// refusal is an outcome like any other.
//
// One reduction: sample ids are 0..n-1 in input order. Every problem with
// other distinct ids is a renaming of one of these, and renaming ids renames
// the schedule (CheckRelabellingRelabels, properties/problem_checks.h,
// checks it on every problem the driver enumerates).
//
// python/dcpsched/conformance/exhaustive.py enumerates the same problems in
// the same order from the same text; python/tests/test_exhaustive.py checks
// that the two lists are identical.

#ifndef DCPSCHED_PROPERTIES_PROBLEM_ENUMERATOR_H_
#define DCPSCHED_PROPERTIES_PROBLEM_ENUMERATOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/types.h"

namespace dcpsched::properties {

// One length term: per_mslpr * mslpr + offset.
struct LengthTerm {
  std::int64_t per_mslpr = 0;
  std::int64_t offset = 0;

  friend bool operator==(const LengthTerm&, const LengthTerm&) = default;
};

// The explicit finite sets; every list non-empty and without repeats.
struct EnumerationSets {
  std::vector<std::int64_t> total_gpus;          // G, each in [1, 65536]
  std::vector<std::int64_t> sample_counts;       // n, each in [0, kMaxEnumeratedSamples]
  std::vector<LengthTerm> lengths;
  std::vector<std::int64_t> max_seq_len_per_rank;  // each in [1, 2^31-1]
  std::vector<std::int64_t> min_cp_sizes;        // each a power of two
  std::vector<std::optional<std::int64_t>> vpp_groups;    // none or >= 1
  std::vector<std::optional<std::int64_t>> max_num_seqs;  // none or >= 1

  friend bool operator==(const EnumerationSets&, const EnumerationSets&) = default;
};

inline constexpr std::int64_t kMaxEnumeratedSamples = 12;
// Sets that name more problems than this are refused (a typo in a range).
inline constexpr std::int64_t kMaxEnumeratedProblems = std::int64_t{1} << 40;

// The sets the test command runs (ctest exhaustive_check: the release
// build kTestCommandSets, about 600000 problems, the sanitized build the
// smaller kSanitizedTestCommandSets), and the nightly tier's (scripts/test.sh
// stage exhaustive). ParseEnumerationSets reads them by name too: "test",
// "test-sanitized", "nightly".
inline constexpr absl::string_view kTestCommandSets =
    "G=1..16 n=0..4 lens=1,m-1,m,m+1,2m-1,2m,2m+1,4m mslpr=4 min_cp=1,2 "
    "vpp=none,2 max_num_seqs=none,1";
// The sanitized build's: a length on each side of each CP size's threshold
// (1 and m for one rank, m+1 for two, 2m+1 and 4m for four), n = 0..3; a
// quarter of the problems of the same sets with every length, since each
// costs 25 times more under AddressSanitizer.
inline constexpr absl::string_view kSanitizedTestCommandSets =
    "G=1..16 n=0..3 lens=1,m,m+1,2m+1,4m mslpr=4 min_cp=1,2 "
    "vpp=none,2 max_num_seqs=none,1";
inline constexpr absl::string_view kNightlySets =
    "G=1..16 n=0..5 lens=1,m-1,m,m+1,2m-1,2m,2m+1,4m mslpr=4,64 min_cp=1,2,4 "
    "vpp=none,2,3 max_num_seqs=none,1,2";

// Parses the one-line form above, or the name of one of the sets above.
// InvalidArgument naming the field that is
// missing, repeated, unknown, malformed, out of range or with a value
// listed twice, or when the sets name more than kMaxEnumeratedProblems
// problems.
absl::StatusOr<EnumerationSets> ParseEnumerationSets(absl::string_view text);

// The one-line form, ranges written out; ParseEnumerationSets of it gives
// `sets` back.
std::string FormatEnumerationSets(const EnumerationSets& sets);

// The lengths of one mslpr: the distinct term values in [1, 2^26], in the
// order written.
std::vector<std::int64_t> LengthsFor(const EnumerationSets& sets, std::int64_t mslpr);

// How many problems ForEachProblem visits, computed without visiting them.
std::int64_t CountProblems(const EnumerationSets& sets);

// Calls `visit` on every problem of the sets, in the order above, with its
// 0-based index in that order. Only the problems whose index is
// part - 1 modulo parts are visited (part in [1, parts]), so `parts`
// processes share the work; part 1 of 1 is every problem.
void ForEachProblem(const EnumerationSets& sets, std::int64_t part, std::int64_t parts,
                    absl::FunctionRef<void(std::int64_t index, const DynamicCpProblem&)> visit);

}  // namespace dcpsched::properties

#endif  // DCPSCHED_PROPERTIES_PROBLEM_ENUMERATOR_H_
