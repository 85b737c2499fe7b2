// The order of a schedule's microbatches and the rank blocks of their CP
// groups, chosen for the runtime step (core/runtime_step.h): the part of
// the cost-aware scheduler (core/cost_aware.h) that works on a schedule
// whose microbatches are already packed.
//
// Why. Under the barrier model the step is a sum over microbatches, which
// neither the order nor where a group sits changes. As Megatron-LM's
// runtime runs a schedule, both matter:
//  - without pipelining (P = 1, `dev`), a rank's step is its own chain of
//    groups: groups laid out largest first from rank 0 put every
//    microbatch's slowest group on the same ranks, whose chain then ends
//    the step;
//  - with pipelines (1F1B, interleaved), the first microbatch's forward
//    and the last one's backward cross every stage alone, and a slow
//    microbatch next to fast ones stalls the stages behind it.
//
// What it does. It keeps every microbatch's groups (their sizes and
// samples) and changes only:
//  - the order of the microbatches: the given one, slowest first, fastest
//    first, and slowest and fastest alternating, each then improved by
//    swapping neighbours while that shortens the step (a bounded number of
//    steps);
//  - the rank blocks: either the given ones, or, microbatch after
//    microbatch in that order, each size's groups (largest size first),
//    slowest first, on the free aligned blocks of that size whose ranks
//    finish earliest so far (their chains, as without pipelining).
// Every candidate is timed by SimulateRuntimeStep, and it keeps the
// fastest: the given arrangement first on ties, so it is never slower than
// the schedule it was given. A group stays on an aligned block of its own
// size (or all G ranks), so a schedule the runtime can run (invariant 11)
// stays one.
//
// What it does not attempt: moving samples between groups or microbatches;
// an optimal order (the exhaustive time oracle,
// oracle/exhaustive_time_oracle.h, measures the gap on tiny instances).

#ifndef DCPSCHED_CORE_STEP_ARRANGEMENT_H_
#define DCPSCHED_CORE_STEP_ARRANGEMENT_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "core/compact_schedule.h"
#include "core/gpu_time.h"
#include "core/runtime_step.h"

namespace dcpsched {

struct ArrangedSchedule {
  CompactSchedule schedule;
  RuntimeStep step;
};

// How far the arrangement searches.
struct ArrangementSearch {
  // Whether the best of the orders and blocks above is then improved by
  // swaps (the costly part: one simulated step each). A caller choosing
  // among many schedules arranges each without, and the one it keeps with.
  bool swaps = true;
};

// The fastest arrangement above of `schedule` on `total_gpus` ranks, whose
// times MeasureScheduleTime gave as `time`, under `config`. Errors as
// MeasureRuntimeStep's, for the schedule as given.
absl::StatusOr<ArrangedSchedule> ArrangeForRuntimeStep(const CompactSchedule& schedule,
                                                       const ScheduleTime& time,
                                                       std::int64_t total_gpus,
                                                       const RuntimeConfig& config,
                                                       ArrangementSearch search = {});

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_STEP_ARRANGEMENT_H_
