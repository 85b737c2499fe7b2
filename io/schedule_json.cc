#include "io/schedule_json.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/types/span.h"
#include "core/compact_schedule.h"
#include "core/quality.h"
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

// One microbatch: its groups and, in the per-rank form, every rank's load.
json MicrobatchToJson(const MicrobatchLoad& load, ScheduleForm form) {
  json cp_groups = json::array();
  for (const CpGroupLoad& group : load.groups) {
    cp_groups.push_back(CpGroupToJson(group));
  }
  json microbatch{
      {"cp_groups", std::move(cp_groups)},
      {"max_work", load.max_work},
      {"min_work", load.min_work},
  };
  if (form == ScheduleForm::kPerRank) {
    microbatch["rank_tokens"] = RankTokens(load);
    microbatch["rank_work"] = RankWork(load);
  }
  return microbatch;
}

json QualityToJson(const ScheduleQuality& quality) {
  return json{
      {"balance_efficiency", quality.balance_efficiency},
      {"microbatch_count", quality.microbatch_count},
      {"microbatch_lower_bound", quality.microbatch_lower_bound},
      {"critical_path_work", quality.critical_path_work},
      {"max_rank_work", quality.max_rank_work},
  };
}

json ComparedRunToJson(const ScheduleRun& run) {
  json document{
      {"scheduler", std::string(SchedulerName(run.scheduler))},
      {"ok", run.status.ok()},
      {"elapsed_ms", run.elapsed_ms},
  };
  if (run.status.ok()) {
    document["quality"] = QualityToJson(run.quality);
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
  if (!run.status.ok()) {
    document["error"] = std::string(run.status.message());
    return document;
  }
  if (form == ScheduleForm::kPerRank) {
    document["groups"] = PerRankGroupsToJson(run.schedule);
  }
  json microbatches = json::array();
  for (const MicrobatchLoad& load : run.quality.microbatches) {
    microbatches.push_back(MicrobatchToJson(load, form));
  }
  document["microbatches"] = std::move(microbatches);
  document["quality"] = QualityToJson(run.quality);
  return document;
}

json ComparisonToJson(const SchedulingProblem& problem,
                      absl::Span<const ScheduleRun> runs) {
  json compared = json::array();
  for (const ScheduleRun& run : runs) {
    compared.push_back(ComparedRunToJson(run));
  }
  return json{
      {"format", kCompareFormat},
      {"parameters", ParametersToJson(problem.parameters)},
      {"workload", WorkloadToJson(problem)},
      {"runs", std::move(compared)},
  };
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
