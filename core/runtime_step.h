// How long a training step takes as Megatron-LM's runtime runs a schedule:
// the runtime step model (docs/runtime_step.md has the rule and the proof
// of its bound).
//
// core/gpu_time.h gives each CP group's time in each microbatch. This model
// adds who waits for whom. On the `dev` path (Megatron-LM dev, the default)
// nothing synchronises ranks between microbatches except their own CP group
// (ring attention), their expert-parallel group (the MoE all-to-all) and
// the pipeline: a CP group starts a microbatch's op once all of its ranks
// are free and have its input; each pipeline rank runs its ops in
// Megatron-LM's order (core/pipeline_order.h); the last op ends the step.
// At P = 1 without expert parallelism the step is the longest of the
// ranks' chains, not the sum of per-microbatch maxima. The `legacy` path
// (main's hybrid_context_parallel_forward_backward) waits on all ranks
// after every microbatch: its step is that sum, MeasureScheduleTime's.
//
// Everything is computed over the compact form's groups, never rank by
// rank: O(P V (groups + samples)) whatever G is.

#ifndef DCPSCHED_CORE_RUNTIME_STEP_H_
#define DCPSCHED_CORE_RUNTIME_STEP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/compact_schedule.h"
#include "core/gpu_time.h"
#include "core/pipeline_order.h"

namespace dcpsched {

// Which of Megatron-LM's training loops runs the step.
enum class RuntimePath {
  // dev: no barrier between microbatches; pipelines allowed.
  kDev,
  // main's legacy dynamic-CP loop: a barrier over all DPxCP ranks after
  // every microbatch; no pipelining.
  kLegacy,
};

// "dev" or "legacy".
const char* RuntimePathName(RuntimePath path);

// The runtime a step is modelled on.
struct RuntimeConfig {
  PipelineShape pipeline;
  // L: transformer layers on one pipeline stage (rank), >= 1, split evenly
  // over its V chunks. Every reported time is for L such layers per stage.
  std::int64_t layers_per_stage = 1;
  // f: the forward pass's share of a layer's time, in (0, 1); the backward
  // takes the rest. The shipped profiles time both together, so 1/3 (a
  // backward costs twice a forward) is an assumption.
  double forward_share = 1.0 / 3.0;
  // E: DPxCP ranks per expert-parallel group ([kE, (k + 1) E)), which move
  // in lockstep; unset for a dense model. E = G models MoE's
  // global_aux_loss, which reduces over all DPxCP ranks.
  std::optional<std::int64_t> expert_parallel_size;
  RuntimePath path = RuntimePath::kDev;
};

// `config` in words, as reports print it: "dev runtime, no pipelining, 1
// layer per stage", "dev runtime, 1F1B over P = 4 stages, forward 0.3333
// of a layer, 2 layers per stage, EP 8 in lockstep", and so on.
std::string DescribeRuntime(const RuntimeConfig& config);

// OK if `config` describes a runtime for `total_gpus` DPxCP ranks running
// `num_microbatches` microbatches; otherwise InvalidArgument saying what to
// change: CheckPipelineShape's refusals, L < 1, f outside (0, 1), E < 1 or
// not dividing G, and `legacy` with P > 1 (upstream runs it only without
// pipelining).
absl::Status CheckRuntimeConfig(const RuntimeConfig& config,
                                std::int64_t total_gpus,
                                std::int64_t num_microbatches);

// One CP group of a microbatch and its ranks' time for one layer, forward
// and backward (core/gpu_time.h). A group that holds no samples takes no
// time and synchronises nobody.
struct TimedGroup {
  std::int64_t first_rank = 0;
  std::int64_t size = 0;
  double seconds = 0.0;
  bool holds_samples = true;
};

// One microbatch as its groups, which tile its ranks (as in
// CompactMicrobatch).
struct TimedMicrobatch {
  std::vector<TimedGroup> groups;
};

struct RuntimeStep {
  // When the last op ends.
  double step_seconds = 0.0;
  // For each DPxCP rank, when the last op of any of its pipeline ranks ends.
  std::vector<double> rank_finish_seconds;
  // The most time any pipeline rank of any DPxCP rank spends in its ops.
  double busiest_rank_seconds = 0.0;
  // step_seconds - busiest_rank_seconds: time the busiest rank waits.
  double bubble_seconds = 0.0;
  // A bound the step never goes below under the model, for this schedule
  // (docs/runtime_step.md); busiest_rank_seconds <= bound_seconds <= step.
  double bound_seconds = 0.0;
};

// The step of `microbatches` on `total_gpus` ranks under `config`.
// InvalidArgument (CheckRuntimeConfig, or naming the microbatch and group)
// for a config it refuses, groups that do not tile [0, G), or a time that
// is negative or not finite.
absl::StatusOr<RuntimeStep> SimulateRuntimeStep(
    std::int64_t total_gpus, absl::Span<const TimedMicrobatch> microbatches,
    const RuntimeConfig& config);

// The step of `schedule`, whose times MeasureScheduleTime gave as `time`.
// InvalidArgument when `time` is not of this schedule (other microbatch or
// group counts), or as SimulateRuntimeStep.
absl::StatusOr<RuntimeStep> MeasureRuntimeStep(const CompactSchedule& schedule,
                                               const ScheduleTime& time,
                                               const RuntimeConfig& config);

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_RUNTIME_STEP_H_
