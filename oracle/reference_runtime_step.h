// Reference runtime step: a schedule's training step the way Megatron-LM's
// runtime runs it, by a plain discrete-event simulation, as the yardstick the
// core's runtime step model (core/runtime_step.h, with the op order of
// core/pipeline_order.h) is checked against.
//
// Written from docs/runtime_step.md, sharing no code with core/ beyond the
// value types of core/types.h: its own walk of Megatron-LM's schedule loops
// (warm-up forwards, steady 1F1B pairs, cool-down backwards, and for the
// interleaved schedule its own schedule table), its own synchronised sets
// (by joining the ranks' labels, microbatch by microbatch), and its own event loop
// that runs one synchronised op at a time, always the one that can start
// earliest, over every (DPxCP rank, pipeline rank). Slow on purpose (every
// pick scans every rank's next op): it is used on tiny instances.

#ifndef DCPSCHED_ORACLE_REFERENCE_RUNTIME_STEP_H_
#define DCPSCHED_ORACLE_REFERENCE_RUNTIME_STEP_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/types.h"

namespace dcpsched::oracle {

// The runtime configuration, as docs/runtime_step.md names it.
struct ReferenceRuntime {
  std::int64_t pipeline_stages = 1;          // P
  std::int64_t virtual_stages = 1;           // V
  std::int64_t microbatch_group_size = 0;    // N; 0 means P
  std::int64_t layers_per_stage = 1;         // L
  double forward_share = 1.0 / 3.0;          // f
  std::int64_t expert_parallel_size = 0;     // E; 0 means none
  bool legacy = false;                       // the legacy path (barrier after every microbatch)
};

// What the model reports of one step.
struct ReferenceStep {
  double step_seconds = 0.0;
  std::vector<double> rank_finish_seconds;   // one per DPxCP rank
  double busiest_rank_seconds = 0.0;         // most op time of any (DPxCP rank, pipeline rank)
};

// One op of a pipeline rank's order.
struct ReferenceOp {
  std::int64_t microbatch;
  std::int64_t chunk;
  bool forward;
};

// Pipeline rank p's op order for M microbatches, built the plain way (walk
// Megatron's loops: warm-up forwards, steady 1F1B pairs, cool-down
// backwards, with virtual microbatch ids mapped to (microbatch, chunk) as
// the doc says). At P = 1 it is forward then backward of each microbatch in
// turn (chunk 0). InvalidArgument where Megatron-LM refuses (V > 1: N > M,
// N < P, a last group of 0 < M mod N < P, with N = 0 read as P) and for an
// order that has no meaning: P < 1, V < 1, V > 1 with P == 1, M < 0, p
// outside [0, P). The other fields of `runtime` (L, f, E, legacy) play no
// part and are not checked here.
absl::StatusOr<std::vector<ReferenceOp>> ReferenceStageOrder(const ReferenceRuntime& runtime,
                                                             std::int64_t num_microbatches,
                                                             std::int64_t pipeline_rank);

// The step of a per-rank schedule whose rank r takes rank_seconds[m][r] (one
// layer, forward and backward) in microbatch m, by a plain discrete-event
// simulation of every (DPxCP rank, pipeline rank) and every op: keep per
// (rank, pipeline rank) the next op index and its free time; repeatedly
// pick, among the synchronised sets all of whose members are at the same op
// with their inputs done, the one with the earliest start time, and run it.
//
// Synchronised sets per docs/runtime_step.md: ranks r..r' consecutive
// holding equal non-empty id lists in schedule.microbatches[m].rank_ids,
// joined with EP blocks [kE, (k+1)E) when E > 0 (transitively); an empty
// rank without EP is alone. A rank that holds nothing takes 0 in microbatch
// m whatever rank_seconds[m][r] says (the doc: it "takes no time"). Every
// member of a set starts the op at the same time, the latest of the
// members' free times and input ends; each ends it its own duration later,
// or, with E > 0, the set's longest duration later.
//
// Durations: d = L * t; at P = 1 one op of d per microbatch (its forward and
// backward back to back, needing no input); at P > 1 a forward of F = d * f
// and a backward of B = d - F on each chunk. A rank's finish time is the
// end of its last op on any pipeline rank; the step is the latest. The
// busiest rank's work is the largest sum of a (rank, pipeline rank)'s own
// op durations (not stretched by EP: at P = 1 the longest of the ranks' own
// sums, as the doc's bound reads it).
//
// Legacy (P = 1 only): the step is the sum over microbatches of the largest
// L * rank_seconds[m][r] (0 for a rank that holds nothing), summed in
// microbatch order; rank r's finish time is the start of the last
// microbatch (that sum without its last term) plus its own d(M - 1, r); the
// busiest work is the longest of the ranks' own sums.
//
// With no microbatches the step is 0 and there are no ranks. InvalidArgument
// for shapes that disagree (rank_seconds vs schedule, or microbatches of
// different rank counts), P < 1, V < 1, L < 1, forward_share outside
// (0, 1), V > 1 with P == 1, legacy with P > 1, E < 0 or E not dividing G,
// and the pipeline refusals of ReferenceStageOrder. Internal if the
// simulation deadlocks.
absl::StatusOr<ReferenceStep> ReferenceRuntimeStep(
    const Schedule& schedule, const std::vector<std::vector<double>>& rank_seconds,
    const ReferenceRuntime& runtime);

}  // namespace dcpsched::oracle

#endif  // DCPSCHED_ORACLE_REFERENCE_RUNTIME_STEP_H_
