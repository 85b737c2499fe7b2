// The schedule loop of the legacy scheduler, and the sort order every
// dynamic-CP scheduler shares (internal to core/): sort the batch longest
// first, build microbatches until every sample is placed, then align the
// count to the VPP group. The packing-aware scheduler runs the same loop
// without re-sorting or rescanning its leftovers (core/remaining_samples.h).

#ifndef DCPSCHED_CORE_SCHEDULE_LOOP_H_
#define DCPSCHED_CORE_SCHEDULE_LOOP_H_

#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/compact_schedule.h"
#include "core/types.h"

namespace dcpsched {

// `samples` sorted by length, longest first; equal lengths keep their order.
std::vector<Sample> SortedLongestFirst(absl::Span<const Sample> samples);

// One microbatch built by a step, as its groups, and the samples it left
// over, in order.
struct CompactStep {
  CompactMicrobatch microbatch;
  std::vector<Sample> leftovers;
};

// Builds one microbatch from the remaining samples (longest first) and
// returns it with the samples it left over.
using StepFunction =
    absl::FunctionRef<absl::StatusOr<CompactStep>(const std::vector<Sample>&)>;

// Runs `step` on validated `samples` until none remain, then aligns to
// options.vpp_group when it is > 1. Microbatches pass from step to schedule
// as groups, never as per-rank lists. A step that places nothing is an
// internal error (`scheduler` names it), never an endless loop.
absl::StatusOr<CompactSchedule> ScheduleBySteps(absl::Span<const Sample> samples,
                                                const DynamicCpOptions& options,
                                                absl::string_view scheduler,
                                                StepFunction step);

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_SCHEDULE_LOOP_H_
