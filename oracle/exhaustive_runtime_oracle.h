// Exhaustive runtime oracle: the fastest schedule of a tiny instance under
// a cost profile when the step is the runtime's (docs/runtime_step.md:
// pipelines, no barrier between microbatches), found by trying every
// schedule Megatron-LM's runtime can run, in every order and placement.
//
// The exhaustive time oracle (exhaustive_time_oracle.h) finds the optimum of
// the barrier model, whose step is the sum of each microbatch's slowest rank:
// there neither the order of the microbatches nor which aligned block a CP
// group sits on matters. Under the runtime step both do: a rank runs its
// next microbatch as soon as its own CP group is free, so the step depends
// on which ranks are slow in which microbatch, and pipelines add fill and
// drain that depend on the first and last microbatch. This oracle lets the
// suite measure how far the cost-aware scheduler (core/cost_aware.h) lands
// from the exact optimum of that step.
//
// A schedule keeps the rules of ExhaustiveFastestSchedule (the same
// per-microbatch placements, RunnableMicrobatches; no work cap; a microbatch
// count that is a multiple of vpp_group) and one more: the runtime accepts
// its microbatch count (ReferenceStageOrder: the interleaved schedule
// refuses some counts). Its step is oracle::ReferenceRuntimeStep with rank
// r's one-layer time in microbatch m by ReferenceMicrobatchSeconds
// (reference_gpu_time.h), which is the time of r's CP group: under the
// rules every rank of a CP group holds the same samples. Nothing here
// shares code with core/.
//
// Method: every set partition of the samples into a count the rules and
// the runtime accept, every combination of its parts' placements, and every
// order of the parts (each order of a partition once: the parts are
// distinct sets), each stepped by ReferenceRuntimeStep. A schedule is
// stepped only when the bound of docs/runtime_step.md ("What the report
// gives": the busiest rank's work, a microbatch's chain through all P V
// stages, and the pipeline's fill and drain around rank r's work) does not
// already exceed the least step found: a bound is never above the step, so
// the skip is exact: the same optimum and schedule as without it (with a
// relative slack of 1e-9 for rounding).

#ifndef DCPSCHED_ORACLE_EXHAUSTIVE_RUNTIME_ORACLE_H_
#define DCPSCHED_ORACLE_EXHAUSTIVE_RUNTIME_ORACLE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/types.h"
#include "oracle/reference_gpu_time.h"
#include "oracle/reference_runtime_step.h"

namespace dcpsched::oracle {

// Largest instance enumerated, so that one call takes at most about 20 ms
// in a Release build. 4 samples on 4 ranks have at most 449 schedules
// (every partition, placement and order; tests/exhaustive_runtime_oracle_test.cc
// counts them), and ReferenceRuntimeStep steps one of them at P = 4 in about
// 45 us (it scans every (rank, pipeline rank) for each op): 20 ms when the
// bound skips none, 4 ms as it usually goes (125 stepped). Interleaving
// accepts few counts (P = 4, V = 2: 4 microbatches only, 24 schedules).
// Each limit one step higher is past ~50 ms: 8 ranks take 55 ms at P = 4
// (545 schedules), 5 samples 240 ms (5611), P = 8 50 ms.
inline constexpr std::int64_t kRuntimeOracleMaxSamples = 4;
inline constexpr std::int64_t kRuntimeOracleMaxGpus = 4;
inline constexpr std::int64_t kRuntimeOracleMaxPipelineStages = 4;
inline constexpr std::int64_t kRuntimeOracleMaxVirtualStages = 2;

struct RuntimeOptimum {
  // The least step over every runnable schedule, order and placement, in
  // seconds.
  double step_seconds = 0.0;
  // One fastest schedule (the first found), per rank, its microbatches in
  // the order run.
  Schedule schedule;
  // How many schedules (a partition, a placement of each part, an order)
  // the search covered, whether stepped or skipped by the bound: the size
  // of the search space.
  std::int64_t schedules_enumerated = 0;
  // How many of them ReferenceRuntimeStep stepped.
  std::int64_t schedules_stepped = 0;
};

// The fastest runnable schedule of `samples` under `runtime`.
//
// InvalidArgument for input outside the specification's limits, larger than
// the limits above, or a runtime ReferenceRuntimeStep refuses whatever the
// schedule (P < 1, V < 1, L < 1, forward_share outside (0, 1), V > 1 with
// P = 1, legacy with P > 1, E < 0 or not dividing G). NotFound when
// no schedule keeps the rules in a microbatch count the runtime accepts
// (for example fewer samples than vpp_group, or an interleaved runtime that
// refuses every count up to the number of samples). An empty batch has the
// empty schedule, 0 seconds.
absl::StatusOr<RuntimeOptimum> ExhaustiveFastestRuntimeStep(absl::Span<const Sample> samples,
                                                            const DynamicCpOptions& options,
                                                            const ReferenceCostTables& tables,
                                                            const ReferenceRuntime& runtime);

}  // namespace dcpsched::oracle

#endif  // DCPSCHED_ORACLE_EXHAUSTIVE_RUNTIME_ORACLE_H_
