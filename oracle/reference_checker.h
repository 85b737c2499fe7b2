// Reference checker: the invariants of docs/specification.md judged the
// plainest way, rank by rank, as the yardstick the schedule checker
// (core/checker.h) is compared against.
//
// The core's checker reads the compact form once, in one pass, with a
// placement record per sample. This one reads the per-rank schedule as the
// specification words it: a sample's CP size is the number of ranks that
// hold it, its ranks are split into contiguous runs, and a rank's tokens and
// work are summed over its own list. It shares no code with core/ beyond the
// value types of core/types.h (its definitions are oracle/
// reference_definitions.h), so a slip in the checker's bookkeeping shows as
// a difference instead of hiding in both.
//
// A finding is made where the specification's "How the checker reads a
// schedule" says: once per CP group (a run of neighbouring ranks with equal
// lists), at its first rank; once per later microbatch for a sample found
// again there; once per further occurrence of an id in one rank's list; once
// per run of ranks after a sample's first run in its microbatch.
//
// Meant for tests: it costs a map lookup per id of every rank's list.

#ifndef DCPSCHED_ORACLE_REFERENCE_CHECKER_H_
#define DCPSCHED_ORACLE_REFERENCE_CHECKER_H_

#include <compare>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/types.h"

namespace dcpsched::oracle {

// One broken invariant: its number in the specification (1-6, 8, 10, 11), the
// microbatch and rank it is located at (-1 where neither applies) and the
// ids involved, in the order the specification's reading meets them.
struct ReferenceFinding {
  int invariant = 0;
  std::int64_t microbatch = -1;
  std::int64_t rank = -1;
  std::vector<SampleId> ids;

  friend auto operator<=>(const ReferenceFinding&, const ReferenceFinding&) = default;
};

// Every finding for `schedule` as a solution of (`samples`, `options`),
// sorted. Nothing when the problem is not valid (the specification's "Valid
// input"): a checker judges schedules of valid problems only.
std::vector<ReferenceFinding> ReferenceFindViolations(absl::Span<const Sample> samples,
                                                      const Schedule& schedule,
                                                      const DynamicCpOptions& options);

}  // namespace dcpsched::oracle

#endif  // DCPSCHED_ORACLE_REFERENCE_CHECKER_H_
