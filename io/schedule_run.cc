#include "io/schedule_run.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/compact_schedule.h"
#include "core/cost_aware.h"
#include "core/dp_balanced.h"
#include "core/gpu_time.h"
#include "core/legacy.h"
#include "core/packing_aware.h"
#include "core/quality.h"
#include "core/runtime_step.h"
#include "core/types.h"
#include "core/validate.h"

namespace dcpsched {
namespace {

absl::Status CheckPositiveFactor(absl::string_view name, std::int64_t value) {
  if (value >= 1 && value <= kMaxTotalGpus) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      name, " is ", value, "; it must be between 1 and ", kMaxTotalGpus));
}

// dp_balanced's schedule names samples by position; map them to ids.
absl::StatusOr<CompactSchedule> PositionsToIds(
    CompactSchedule by_position, absl::Span<const Sample> samples) {
  for (CompactMicrobatch& microbatch : by_position.microbatches) {
    for (CpGroupIds& group : microbatch.groups) {
      for (SampleId& entry : group.ids) {
        if (entry < 0 || static_cast<std::size_t>(entry) >= samples.size()) {
          return absl::InternalError(
              absl::StrCat("dp_balanced returned position ", entry, " for ",
                           samples.size(), " samples"));
        }
        entry = samples[static_cast<std::size_t>(entry)].id;
      }
    }
  }
  return by_position;
}

// cost_aware's schedule; `run` records whose it is and why.
absl::StatusOr<CompactSchedule> CallCostAware(const SchedulingProblem& problem,
                                              ScheduleRun& run) {
  if (!problem.cost_profile.has_value()) {
    return absl::InvalidArgumentError(
        "cost_aware schedules by a measured cost profile and none was given; add "
        "--cost-profile NAME (h200-llama3-8b, h200-llama3-70b-tp8, ...) or FILE");
  }
  absl::StatusOr<CostAwareResult> result =
      ScheduleCostAware(problem.samples, ToDynamicCpOptions(problem.parameters),
                        *problem.cost_profile, CostAwareOptions{.runtime = problem.runtime});
  if (!result.ok()) return result.status();
  run.source = std::string(CostAwareSourceName(result->source));
  run.source_reason = std::move(result->reason);
  return std::move(result->schedule);
}

absl::StatusOr<CompactSchedule> CallScheduler(
    SchedulerKind scheduler, const SchedulingProblem& problem, ScheduleRun& run) {
  switch (scheduler) {
    case SchedulerKind::kCostAware:
      return CallCostAware(problem, run);
    case SchedulerKind::kPackingAware:
      return ScheduleDynamicCpCompact(problem.samples,
                                      ToDynamicCpOptions(problem.parameters));
    case SchedulerKind::kLegacy:
      return ScheduleLegacyCompact(problem.samples,
                                   ToDynamicCpOptions(problem.parameters));
    case SchedulerKind::kDpBalanced: {
      std::vector<std::int64_t> lens;
      lens.reserve(problem.samples.size());
      for (const Sample& sample : problem.samples) lens.push_back(sample.len);
      absl::StatusOr<CompactSchedule> by_position = ScheduleDpBalancedCompact(
          lens, ToDpBalancedOptions(problem.parameters));
      if (!by_position.ok()) return by_position.status();
      return PositionsToIds(*std::move(by_position), problem.samples);
    }
  }
  return absl::InternalError("unknown scheduler");
}

}  // namespace

absl::string_view SchedulerName(SchedulerKind scheduler) {
  switch (scheduler) {
    case SchedulerKind::kPackingAware:
      return "packing_aware";
    case SchedulerKind::kDpBalanced:
      return "dp_balanced";
    case SchedulerKind::kLegacy:
      return "legacy";
    case SchedulerKind::kCostAware:
      return "cost_aware";
  }
  return "unknown";
}

bool SchedulerRunsOn(SchedulerKind scheduler, bool has_cost_profile) {
  return scheduler != SchedulerKind::kCostAware || has_cost_profile;
}

absl::StatusOr<SchedulerKind> ParseSchedulerName(absl::string_view name) {
  for (const SchedulerKind scheduler : kAllSchedulers) {
    if (SchedulerName(scheduler) == name) return scheduler;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown scheduler \"", name,
                   "\"; use packing_aware, dp_balanced, legacy or cost_aware"));
}

absl::Status ValidateRunParameters(const RunParameters& parameters) {
  if (absl::Status dp = CheckPositiveFactor("dp size", parameters.dp_size);
      !dp.ok()) {
    return dp;
  }
  if (absl::Status cp = CheckPositiveFactor("cp size", parameters.cp_size);
      !cp.ok()) {
    return cp;
  }
  if (parameters.total_gpus() > kMaxTotalGpus) {
    return absl::InvalidArgumentError(
        absl::StrCat("dp size x cp size is ", parameters.dp_size, " x ",
                     parameters.cp_size, " = ", parameters.total_gpus(),
                     " ranks; at most ", kMaxTotalGpus, " are allowed"));
  }
  if (parameters.max_num_seqs.has_value() && *parameters.max_num_seqs < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_num_seqs is ", *parameters.max_num_seqs,
                     "; it must be >= 1 (or left unset for no limit)"));
  }
  return ValidateDynamicCpOptions(ToDynamicCpOptions(parameters));
}

DynamicCpOptions ToDynamicCpOptions(const RunParameters& parameters) {
  return DynamicCpOptions{
      .total_gpus = parameters.total_gpus(),
      .max_seq_len_per_rank = parameters.max_seq_len_per_rank,
      .min_cp_size = parameters.min_cp_size,
      .vpp_group = parameters.vpp_group,
      .max_num_seqs = parameters.max_num_seqs,
  };
}

DpBalancedOptions ToDpBalancedOptions(const RunParameters& parameters) {
  return DpBalancedOptions{
      .dp_size = parameters.dp_size,
      .cp_size = parameters.cp_size,
      .max_seq_len_per_rank = parameters.max_seq_len_per_rank,
      .max_num_seqs = parameters.max_num_seqs,
      .vpp_group = parameters.vpp_group,
  };
}

ScheduleRun MeasureRun(SchedulerKind scheduler,
                       const SchedulingProblem& problem,
                       CompactSchedule schedule) {
  ScheduleRun run;
  run.scheduler = scheduler;
  absl::StatusOr<ScheduleQuality> quality = MeasureQuality(
      problem.samples, schedule, problem.parameters.max_seq_len_per_rank);
  if (!quality.ok()) {
    run.status = quality.status();
    return run;
  }
  if (problem.cost_profile.has_value()) {
    const GpuTimeOptions options{
        .max_seq_len_per_rank = problem.parameters.max_seq_len_per_rank,
        .fixed_cp_size = problem.parameters.cp_size};
    absl::StatusOr<ScheduleTime> time = MeasureScheduleTime(
        problem.samples, schedule, *problem.cost_profile, options);
    if (!time.ok()) {
      run.status = time.status();
      return run;
    }
    absl::StatusOr<RuntimeStep> step = MeasureRuntimeStep(schedule, *time, problem.runtime);
    if (!step.ok()) {
      run.status = absl::InvalidArgumentError(absl::StrCat(
          "the ", DescribeRuntime(problem.runtime), " cannot run its schedule of ",
          schedule.microbatches.size(), " microbatches: ", step.status().message()));
      return run;
    }
    run.time = *std::move(time);
    run.step = *std::move(step);
  }
  run.schedule = std::move(schedule);
  run.quality = *std::move(quality);
  return run;
}

ScheduleRun RunScheduler(SchedulerKind scheduler,
                         const SchedulingProblem& problem) {
  ScheduleRun called;
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<CompactSchedule> schedule = CallScheduler(scheduler, problem, called);
  const auto stop = std::chrono::steady_clock::now();
  ScheduleRun run;
  if (schedule.ok()) {
    run = MeasureRun(scheduler, problem, *std::move(schedule));
    run.source = std::move(called.source);
    run.source_reason = std::move(called.source_reason);
  } else {
    run.scheduler = scheduler;
    run.status = schedule.status();
  }
  run.elapsed_ms =
      std::chrono::duration<double, std::milli>(stop - start).count();
  return run;
}

ScheduleRun SkippedRun(SchedulerKind scheduler, std::string why) {
  ScheduleRun run;
  run.scheduler = scheduler;
  run.skipped = std::move(why);
  return run;
}

std::vector<ScheduleRun> RunAllSchedulers(const SchedulingProblem& problem) {
  std::vector<ScheduleRun> runs;
  for (const SchedulerKind scheduler : kAllSchedulers) {
    if (!SchedulerRunsOn(scheduler, problem.cost_profile.has_value())) continue;
    runs.push_back(RunScheduler(scheduler, problem));
  }
  return runs;
}

}  // namespace dcpsched
