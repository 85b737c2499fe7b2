#include "io/schedule_json.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/types/span.h"
#include "core/compact_schedule.h"
#include "core/cost_profile.h"
#include "core/gpu_time.h"
#include "core/pipeline_order.h"
#include "core/quality.h"
#include "core/runtime_step.h"
#include "core/types.h"
#include "io/schedule_run.h"
#include "nlohmann/json.hpp"

namespace dcpsched {
namespace {

using nlohmann::json;

json OptionalToJson(const std::optional<std::int64_t>& value) {
  return value.has_value() ? json(*value) : json(nullptr);
}

json ParametersToJson(const RunParameters& parameters) {
  return json{
      {"total_gpus", parameters.total_gpus()},
      {"dp_size", parameters.dp_size},
      {"cp_size", parameters.cp_size},
      {"cp_size_implied", parameters.cp_size_implied},
      {"max_seq_len_per_rank", parameters.max_seq_len_per_rank},
      {"min_cp_size", parameters.min_cp_size},
      {"vpp_group", OptionalToJson(parameters.vpp_group)},
      {"max_num_seqs", OptionalToJson(parameters.max_num_seqs)},
  };
}

json WorkloadToJson(const SchedulingProblem& problem) {
  std::int64_t total_tokens = 0;
  for (const Sample& sample : problem.samples) total_tokens += sample.len;
  std::int64_t min_len = 0;
  std::int64_t max_len = 0;
  if (!problem.samples.empty()) {
    const auto [shortest, longest] = std::minmax_element(
        problem.samples.begin(), problem.samples.end(),
        [](const Sample& a, const Sample& b) { return a.len < b.len; });
    min_len = shortest->len;
    max_len = longest->len;
  }
  return json{
      {"description", problem.workload_description},
      {"num_samples", problem.samples.size()},
      {"total_tokens", total_tokens},
      {"min_len", min_len},
      {"max_len", max_len},
  };
}

json SamplesToJson(const SchedulingProblem& problem) {
  json samples = json::array();
  for (const Sample& sample : problem.samples) {
    samples.push_back(json::array({sample.id, sample.len}));
  }
  return samples;
}

json CpGroupToJson(const CpGroupLoad& group) {
  return json{
      {"first_rank", group.first_rank},
      {"size", group.size},
      {"ids", group.ids},
      {"tokens_per_rank", group.tokens_per_rank},
      {"work_per_rank", group.work_per_rank},
  };
}

// Per rank, the seconds of the group that covers it.
json RankSeconds(const MicrobatchLoad& load, const MicrobatchTime& time) {
  json ranks = json::array();
  for (std::size_t g = 0; g < load.groups.size(); ++g) {
    for (std::int64_t r = 0; r < load.groups[g].size; ++r) {
      ranks.push_back(time.group_seconds[g]);
    }
  }
  return ranks;
}

// One microbatch: its groups and, in the per-rank form, every rank's load;
// with a `time`, the seconds too.
json MicrobatchToJson(const MicrobatchLoad& load, const MicrobatchTime* time,
                      ScheduleForm form) {
  json cp_groups = json::array();
  for (std::size_t g = 0; g < load.groups.size(); ++g) {
    json group = CpGroupToJson(load.groups[g]);
    if (time != nullptr) group["seconds_per_rank"] = time->group_seconds[g];
    cp_groups.push_back(std::move(group));
  }
  json microbatch{
      {"cp_groups", std::move(cp_groups)},
      {"max_work", load.max_work},
      {"min_work", load.min_work},
  };
  if (time != nullptr) microbatch["max_seconds"] = time->max_seconds;
  if (form == ScheduleForm::kPerRank) {
    microbatch["rank_tokens"] = RankTokens(load);
    microbatch["rank_work"] = RankWork(load);
    if (time != nullptr) microbatch["rank_seconds"] = RankSeconds(load, *time);
  }
  return microbatch;
}

// The runtime a run's step is modelled on, and the step's figures.
json RuntimeStepToJson(const RuntimeConfig& runtime, const RuntimeStep& step) {
  json expert_parallel_size = nullptr;
  if (runtime.expert_parallel_size.has_value()) {
    expert_parallel_size = *runtime.expert_parallel_size;
  }
  const PipelineShape& shape = runtime.pipeline;
  return json{
      {"path", RuntimePathName(runtime.path)},
      {"pipeline_stages", shape.stages},
      {"virtual_stages", shape.virtual_stages},
      {"microbatch_group_size",
       shape.microbatch_group_size == 0 ? shape.stages : shape.microbatch_group_size},
      {"layers_per_stage", runtime.layers_per_stage},
      {"forward_share", runtime.forward_share},
      {"expert_parallel_size", std::move(expert_parallel_size)},
      {"step_seconds", step.step_seconds},
      {"busiest_rank_seconds", step.busiest_rank_seconds},
      {"bubble_seconds", step.bubble_seconds},
      {"bound_seconds", step.bound_seconds},
  };
}

json QualityToJson(const ScheduleRun& run, const RuntimeConfig& runtime) {
  const ScheduleQuality& quality = run.quality;
  json document{
      {"balance_efficiency", quality.balance_efficiency},
      {"microbatch_count", quality.microbatch_count},
      {"microbatch_lower_bound", quality.microbatch_lower_bound},
      {"critical_path_work", quality.critical_path_work},
      {"max_rank_work", quality.max_rank_work},
  };
  if (run.time.has_value()) {
    document["gpu_time"] = json{
        {"step_seconds", run.time->step_seconds},
        {"bound_seconds", run.time->bound_seconds},
        {"gpu_efficiency", run.time->gpu_efficiency},
        {"communication_modelled", run.time->communication_modelled},
    };
  }
  if (run.step.has_value()) document["runtime"] = RuntimeStepToJson(runtime, *run.step);
  return document;
}

// The profile a problem is measured by: what it is and what it models.
json CostProfileToJson(const CostProfile& profile) {
  json communication = nullptr;
  if (profile.communication.has_value()) {
    const CommunicationModel& model = *profile.communication;
    communication = json{
        {"gpus_per_node", model.gpus_per_node},
        {"intra_node_gb_per_s", model.intra_node_gb_per_s},
        {"inter_node_gb_per_s", model.inter_node_gb_per_s},
        {"kv_bytes_per_token", model.kv_bytes_per_token},
    };
  }
  return json{
      {"name", profile.name},
      {"description", profile.description},
      {"device", profile.device},
      {"model", profile.model},
      {"communication", std::move(communication)},
      {"communication_modelled", profile.communication.has_value()},
  };
}

// cost_aware's account of its schedule: whose it is and why.
json CostAwareToJson(const ScheduleRun& run) {
  return json{{"source", run.source}, {"reason", run.source_reason}};
}

json ComparedRunToJson(const ScheduleRun& run, const RuntimeConfig& runtime) {
  json document{
      {"scheduler", std::string(SchedulerName(run.scheduler))},
      {"ok", run.status.ok()},
      {"elapsed_ms", run.elapsed_ms},
  };
  if (run.status.ok()) {
    document["quality"] = QualityToJson(run, runtime);
    if (run.scheduler == SchedulerKind::kCostAware) document["cost_aware"] = CostAwareToJson(run);
  } else {
    document["error"] = std::string(run.status.message());
  }
  return document;
}

}  // namespace

json PerRankGroupsToJson(const CompactSchedule& schedule) {
  json groups = json::array();
  for (const CompactMicrobatch& microbatch : schedule.microbatches) {
    json ranks = json::array();
    for (const CpGroupIds& group : microbatch.groups) {
      const json ids = group.ids;
      for (std::int64_t r = 0; r < group.size; ++r) ranks.push_back(ids);
    }
    groups.push_back(std::move(ranks));
  }
  return groups;
}

json ScheduleRunToJson(const SchedulingProblem& problem,
                       const ScheduleRun& run, ScheduleForm form) {
  json document{
      {"format", form == ScheduleForm::kCompact ? kCompactScheduleRunFormat
                                                : kScheduleRunFormat},
      {"scheduler", std::string(SchedulerName(run.scheduler))},
      {"ok", run.status.ok()},
      {"parameters", ParametersToJson(problem.parameters)},
      {"workload", WorkloadToJson(problem)},
      {"samples", SamplesToJson(problem)},
  };
  if (problem.cost_profile.has_value()) {
    document["cost_profile"] = CostProfileToJson(*problem.cost_profile);
  }
  if (run.status.ok() && run.scheduler == SchedulerKind::kCostAware) {
    document["cost_aware"] = CostAwareToJson(run);
  }
  if (!run.status.ok()) {
    document["error"] = std::string(run.status.message());
    return document;
  }
  if (form == ScheduleForm::kPerRank) {
    document["groups"] = PerRankGroupsToJson(run.schedule);
  }
  json microbatches = json::array();
  for (std::size_t m = 0; m < run.quality.microbatches.size(); ++m) {
    microbatches.push_back(MicrobatchToJson(
        run.quality.microbatches[m],
        run.time.has_value() ? &run.time->microbatches[m] : nullptr, form));
  }
  document["microbatches"] = std::move(microbatches);
  document["quality"] = QualityToJson(run, problem.runtime);
  return document;
}

json ComparisonToJson(const SchedulingProblem& problem,
                      absl::Span<const ScheduleRun> runs) {
  json compared = json::array();
  for (const ScheduleRun& run : runs) {
    compared.push_back(ComparedRunToJson(run, problem.runtime));
  }
  json document{
      {"format", kCompareFormat},
      {"parameters", ParametersToJson(problem.parameters)},
      {"workload", WorkloadToJson(problem)},
      {"runs", std::move(compared)},
  };
  if (problem.cost_profile.has_value()) {
    document["cost_profile"] = CostProfileToJson(*problem.cost_profile);
  }
  return document;
}

std::string FormatScheduleRunJson(const SchedulingProblem& problem,
                                  const ScheduleRun& run, ScheduleForm form) {
  // A description or message with invalid UTF-8 (say, from a file name) is
  // written with U+FFFD in place of the bad bytes rather than failing.
  return ScheduleRunToJson(problem, run, form)
             .dump(-1, ' ', false, json::error_handler_t::replace) +
         "\n";
}

std::int64_t PerRankJsonValues(const CompactSchedule& schedule) {
  std::int64_t values = 0;
  for (const CompactMicrobatch& microbatch : schedule.microbatches) {
    for (const CpGroupIds& group : microbatch.groups) {
      // Each rank's list, its ids, and its two load figures.
      values += group.size * (3 + static_cast<std::int64_t>(group.ids.size()));
    }
  }
  return values;
}

}  // namespace dcpsched
