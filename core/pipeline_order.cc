#include "core/pipeline_order.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace dcpsched {
namespace {

std::int64_t GroupSize(const PipelineShape& shape) {
  return shape.microbatch_group_size == 0 ? shape.stages : shape.microbatch_group_size;
}

// get_schedule_table: for each group of N consecutive microbatches (the
// last may hold fewer), every chunk in turn over the group's microbatches.
std::vector<std::pair<std::int64_t, std::int64_t>> ScheduleTable(
    std::int64_t num_microbatches, std::int64_t chunks, std::int64_t group_size) {
  std::vector<std::pair<std::int64_t, std::int64_t>> table;
  table.reserve(static_cast<std::size_t>(num_microbatches * chunks));
  for (std::int64_t first = 0; first < num_microbatches; first += group_size) {
    const std::int64_t end = std::min(first + group_size, num_microbatches);
    for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
      for (std::int64_t m = first; m < end; ++m) table.emplace_back(m, chunk);
    }
  }
  return table;
}

// convert_schedule_table_to_order: `warmup` forwards, then each further
// forward followed by the oldest backward not yet run, then the rest of
// the backwards. Backward i runs table entry i on the mirrored chunk.
std::vector<StageOp> OrderFromTable(
    const std::vector<std::pair<std::int64_t, std::int64_t>>& table,
    std::int64_t chunks, std::int64_t warmup) {
  const auto forward = [&](std::size_t i) {
    return StageOp{table[i].first, table[i].second, true};
  };
  const auto backward = [&](std::size_t i) {
    return StageOp{table[i].first, chunks - 1 - table[i].second, false};
  };
  const std::size_t total = table.size();
  const std::size_t warm = static_cast<std::size_t>(warmup);
  std::vector<StageOp> order;
  order.reserve(2 * total);
  for (std::size_t i = 0; i < warm; ++i) order.push_back(forward(i));
  for (std::size_t i = warm; i < total; ++i) {
    order.push_back(forward(i));
    order.push_back(backward(i - warm));
  }
  for (std::size_t i = total - warm; i < total; ++i) order.push_back(backward(i));
  return order;
}

}  // namespace

absl::Status CheckPipelineShape(const PipelineShape& shape,
                                std::int64_t num_microbatches) {
  if (shape.stages < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the pipeline has ", shape.stages, " stages; give --pp 1 or more"));
  }
  if (shape.virtual_stages < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("the pipeline has ", shape.virtual_stages,
                     " virtual stages per rank; give --virtual-stages 1 or more"));
  }
  if (shape.virtual_stages > 1 && shape.stages == 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--virtual-stages ", shape.virtual_stages,
        " needs a pipeline: Megatron-LM interleaves model chunks only with "
        "--pp 2 or more; give --pp, or --virtual-stages 1"));
  }
  if (num_microbatches < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the step has ", num_microbatches, " microbatches; a step has 0 or more"));
  }
  if (shape.microbatch_group_size < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the microbatch group size per virtual stage is ", shape.microbatch_group_size,
        "; give 1 or more, or leave it unset for the pipeline size"));
  }
  if (shape.virtual_stages == 1) return absl::OkStatus();
  const std::int64_t group = GroupSize(shape);
  if (group > num_microbatches || group < shape.stages) {
    return absl::InvalidArgumentError(absl::StrCat(
        "interleaving runs groups of ", group, " microbatches per virtual stage, which must lie in [",
        shape.stages, " (the pipeline size), ", num_microbatches,
        " (the microbatches)]: Megatron-LM refuses this step (ValueError); schedule at least ",
        group, " microbatches (--vpp ", group, " makes their count a multiple of it), or give a "
        "group size (--vpp) between the pipeline size and the microbatch count"));
  }
  const std::int64_t last_group = num_microbatches % group;
  if (last_group > 0 && last_group < shape.stages) {
    return absl::InvalidArgumentError(absl::StrCat(
        "interleaving ", num_microbatches, " microbatches in groups of ", group,
        " leaves a last group of ", last_group, ", fewer than the ", shape.stages,
        " pipeline stages: Megatron-LM refuses this step (RuntimeError); give --vpp ", group,
        " so that the scheduler makes the microbatch count a multiple of it"));
  }
  return absl::OkStatus();
}

std::vector<StageOp> PipelineStageOrder(const PipelineShape& shape,
                                        std::int64_t num_microbatches,
                                        std::int64_t pipeline_rank) {
  const std::int64_t chunks = shape.virtual_stages;
  const std::int64_t total = num_microbatches * chunks;
  // get_pp_rank_microbatches: no warm-up without pipelining; P - p - 1 in
  // 1F1B; twice that plus (V - 1) N interleaved; never more than all.
  std::int64_t warmup = 0;
  if (shape.stages > 1) {
    warmup = shape.stages - pipeline_rank - 1;
    if (chunks > 1) warmup = 2 * warmup + (chunks - 1) * GroupSize(shape);
  }
  const std::int64_t group = chunks > 1 ? GroupSize(shape) : std::max<std::int64_t>(num_microbatches, 1);
  return OrderFromTable(ScheduleTable(num_microbatches, chunks, group), chunks,
                        std::min(warmup, total));
}

}  // namespace dcpsched
