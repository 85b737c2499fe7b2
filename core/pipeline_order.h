// The order in which one pipeline rank runs its forward and backward ops:
// Megatron-LM dev's (d48bd6be0a, megatron/core/pipeline_parallel/
// schedules.py), without pipelining, 1F1B, and interleaved 1F1B with
// virtual stages (docs/runtime_step.md has the rule). The runtime step model
// (core/runtime_step.h) runs every pipeline rank in this order; the
// conformance tool checks it against the user's Megatron-LM checkout
// (get_pp_rank_microbatches, get_schedule_table,
// convert_schedule_table_to_order).

#ifndef DCPSCHED_CORE_PIPELINE_ORDER_H_
#define DCPSCHED_CORE_PIPELINE_ORDER_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace dcpsched {

// How the model is cut into pipeline stages.
struct PipelineShape {
  // P: pipeline ranks behind every DPxCP rank, >= 1.
  std::int64_t stages = 1;
  // V: model chunks per pipeline rank, >= 1; V > 1 (interleaving) needs
  // P > 1.
  std::int64_t virtual_stages = 1;
  // N, microbatch_group_size_per_vp_stage: consecutive microbatches each
  // chunk runs before the next chunk's turn (V > 1 only). 0 means P,
  // Megatron-LM's default.
  std::int64_t microbatch_group_size = 0;
};

// One op: the forward or the backward pass of a microbatch on a chunk.
struct StageOp {
  std::int64_t microbatch = 0;
  std::int64_t chunk = 0;
  bool forward = true;
};

// OK if Megatron-LM can run `num_microbatches` microbatches through
// `shape`; otherwise InvalidArgument saying what to change: P < 1, V < 1,
// V > 1 with P = 1, a negative microbatch count, N < 0, and for V > 1 what Megatron-LM refuses (N > M,
// N < P, or a last group of 0 < M mod N < P microbatches).
absl::Status CheckPipelineShape(const PipelineShape& shape,
                                std::int64_t num_microbatches);

// Pipeline rank `pipeline_rank`'s ops in the order it runs them, for a
// shape and count CheckPipelineShape accepts and a rank in [0, P). At P = 1
// each microbatch's forward then its backward.
std::vector<StageOp> PipelineStageOrder(const PipelineShape& shape,
                                        std::int64_t num_microbatches,
                                        std::int64_t pipeline_rank);

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_PIPELINE_ORDER_H_
