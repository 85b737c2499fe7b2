// The schedule checker: does a dynamic-CP schedule keep the specification's invariants?
//
// It judges a schedule from anywhere (this library, upstream Megatron-LM, a
// file) against the problem it claims to solve, from the definitions alone:
// it never runs a scheduler. It reads the compact form (compact_schedule.h)
// and is linear in its size (groups + ids, not G x microbatches), so a
// production job can afford it as a runtime guard on every global batch; a
// per-rank schedule is checked as CompactFromRanks of it.

#ifndef DCPSCHED_CORE_CHECKER_H_
#define DCPSCHED_CORE_CHECKER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/compact_schedule.h"
#include "core/types.h"

namespace dcpsched {

// The invariants of docs/specification.md, numbered as there. Invariant 7
// (empty ranks form a tail before the fill step) and 9 (determinism) concern
// how a schedule is built, not the schedule itself, and are checked by the
// test suite instead. Invariant 10 applies when options.max_num_seqs is set.
// Invariant 11 is Megatron-LM's runtime's: every rank's CP group is one it
// created at start-up (runtime_groups.h).
enum class Invariant {
  kNoEmptyRank = 1,          // groups tile [0, G), none empty
  kEachSampleOnce = 2,       // every id once, one contiguous run, no strangers
  kPowerOfTwoCp = 3,         // CP size a power of two, or G
  kTokenBudget = 4,          // per-rank sum(len / cp) <= mslpr
  kWorkCap = 5,              // per-rank sum(len^2 / cp) <= microbatch cap
  kMinimumCp = 6,            // CP size >= cp_min(len) and >= min_cp_size
  kVppMultiple = 8,          // microbatch count a multiple of vpp_group
  kSequenceCap = 10,         // per-rank sample count <= max_num_seqs
  kRuntimeGroups = 11,       // each rank's CP group is one the runtime has
};

// One broken invariant, located. microbatch and rank are -1 where they do
// not apply; `ids` are the samples involved. A finding about a CP group's ids
// holds for each of its ranks and is made once, at its first rank; its
// message names the rank ("microbatch 0 rank 3 holds ...") or the ranks
// ("microbatch 0 ranks 4-7: each holds ...").
struct Violation {
  Invariant invariant = Invariant::kNoEmptyRank;
  std::int64_t microbatch = -1;
  std::int64_t rank = -1;
  std::vector<SampleId> ids;
  std::string message;  // one line, naming the microbatch, rank and ids
};

// Every violation of `schedule` as a solution of (`samples`, `options`), in
// invariant order, then microbatch, then rank. A sample found where it does
// not belong (a second microbatch) is reported once and left out of that
// microbatch's token and work sums. The problem itself must be valid
// (ValidateDynamicCpProblem); if it is not, the result is empty and
// CheckSchedule says why.
std::vector<Violation> FindViolations(absl::Span<const Sample> samples,
                                      const CompactSchedule& schedule,
                                      const DynamicCpOptions& options);
// The same for a per-rank schedule: FindViolations(CompactFromRanks(...)).
std::vector<Violation> FindViolations(absl::Span<const Sample> samples,
                                      const Schedule& schedule,
                                      const DynamicCpOptions& options);

// OK if `schedule` keeps every invariant; otherwise InvalidArgument with the
// lowest-numbered violation ("invariant 4 (token budget): ..."), or with
// the reason the problem itself is invalid.
absl::Status CheckSchedule(absl::Span<const Sample> samples,
                           const CompactSchedule& schedule,
                           const DynamicCpOptions& options);
absl::Status CheckSchedule(absl::Span<const Sample> samples,
                           const Schedule& schedule,
                           const DynamicCpOptions& options);

// Short name of an invariant, e.g. "token budget".
const char* InvariantName(Invariant invariant);

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_CHECKER_H_
