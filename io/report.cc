#include "io/report.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "core/compact_schedule.h"
#include "core/cost_profile.h"
#include "core/gpu_time.h"
#include "core/quality.h"
#include "core/runtime_step.h"
#include "core/types.h"
#include "io/schedule_run.h"

namespace dcpsched {
namespace {

// Work is len^2-sized: four significant digits are enough to compare.
std::string FormatWork(double work) { return absl::StrFormat("%.4g", work); }

std::string FormatTokens(double tokens) {
  return absl::StrFormat("%.1f", tokens);
}

// How many of `count` items to show when at most `limit` may be shown.
std::size_t ShownCount(std::size_t count, std::int64_t limit) {
  return std::min(count,
                  static_cast<std::size_t>(std::max<std::int64_t>(limit, 0)));
}

// "1 microbatch", "2 microbatches".
std::string Counted(std::size_t count, absl::string_view singular,
                    absl::string_view plural) {
  return absl::StrCat(count, " ", count == 1 ? singular : plural);
}

// Width of the longest RankRange in a microbatch of `total_gpus` ranks.
int RankRangeWidth(std::int64_t total_gpus) {
  const std::size_t digits = absl::StrCat(total_gpus - 1).size();
  return static_cast<int>(6 + 2 * digits + 1);
}

// "[12 40 7]", or "[12 40 ... +5 more]" past `max_listed` ids.
std::string IdList(const std::vector<SampleId>& ids, std::int64_t max_listed) {
  const std::size_t listed = ShownCount(ids.size(), max_listed);
  std::string text =
      absl::StrCat("[", absl::StrJoin(ids.begin(), ids.begin() + listed, " "));
  if (listed < ids.size()) {
    absl::StrAppend(&text, listed > 0 ? " " : "", "... +", ids.size() - listed,
                    " more");
  }
  return text + "]";
}

// Seconds as milliseconds, to three decimals.
std::string FormatMs(double seconds) {
  return absl::StrFormat("%.3f", seconds * 1e3);
}

// Whether any of `runs` was measured in GPU seconds.
bool AnyTimed(absl::Span<const ScheduleRun> runs) {
  return std::any_of(runs.begin(), runs.end(),
                     [](const ScheduleRun& run) { return run.time.has_value(); });
}

std::string OptionalValue(const std::optional<std::int64_t>& value) {
  return value.has_value() ? absl::StrCat(*value) : "none";
}

// Per-rank figures of one microbatch (`value` of the group covering each
// rank): every value for small G, min / mean / max for large G, read from
// the groups without listing the ranks.
std::string RankFigures(const MicrobatchLoad& load, double CpGroupLoad::*value,
                        std::string (*format)(double),
                        const ReportOptions& options) {
  if (load.groups.empty()) return "none";
  if (load.width() <= options.max_listed_ranks) {
    std::vector<std::string> texts;
    for (const CpGroupLoad& group : load.groups) {
      for (std::int64_t r = 0; r < group.size; ++r) {
        texts.push_back(format(group.*value));
      }
    }
    return absl::StrJoin(texts, " ");
  }
  const auto [low, high] = std::minmax_element(
      load.groups.begin(), load.groups.end(),
      [value](const CpGroupLoad& a, const CpGroupLoad& b) {
        return a.*value < b.*value;
      });
  return absl::StrCat(
      "min ", format((*low).*value), "  mean ",
      format(SumOverRanks(load, value) / static_cast<double>(load.width())),
      "  max ", format((*high).*value));
}

// Per-rank milliseconds of one microbatch, like RankFigures: every rank for
// small G, min / mean / max for large G.
std::string RankMilliseconds(const MicrobatchLoad& load, const MicrobatchTime& time,
                             const ReportOptions& options) {
  if (load.groups.empty()) return "none";
  if (load.width() <= options.max_listed_ranks) {
    std::vector<std::string> texts;
    for (std::size_t g = 0; g < load.groups.size(); ++g) {
      for (std::int64_t r = 0; r < load.groups[g].size; ++r) {
        texts.push_back(FormatMs(time.group_seconds[g]));
      }
    }
    return absl::StrJoin(texts, " ");
  }
  double sum = 0.0;
  for (std::size_t g = 0; g < load.groups.size(); ++g) {
    for (std::int64_t r = 0; r < load.groups[g].size; ++r) sum += time.group_seconds[g];
  }
  const auto [low, high] =
      std::minmax_element(time.group_seconds.begin(), time.group_seconds.end());
  return absl::StrCat("min ", FormatMs(*low), "  mean ",
                      FormatMs(sum / static_cast<double>(load.width())), "  max ",
                      FormatMs(*high));
}

void AppendMicrobatch(std::size_t index, const MicrobatchLoad& load,
                      const MicrobatchTime* time, std::int64_t total_gpus,
                      const ReportOptions& options, std::string& text) {
  absl::StrAppendFormat(&text,
                        "\nmicrobatch %d  (%s, max work %s, "
                        "min work %s)\n",
                        index,
                        Counted(load.groups.size(), "CP group", "CP groups"),
                        FormatWork(load.max_work), FormatWork(load.min_work));
  const int range_width = RankRangeWidth(total_gpus);
  const std::size_t listed =
      ShownCount(load.groups.size(), options.max_listed_groups);
  for (std::size_t i = 0; i < listed; ++i) {
    const CpGroupLoad& group = load.groups[i];
    absl::StrAppendFormat(
        &text, "  %-*s  cp=%-3d ids %s  tokens/rank %s  work/rank %s\n",
        range_width, RankRange(group.first_rank, group.size), group.size,
        IdList(group.ids, options.max_listed_ids),
        FormatTokens(group.tokens_per_rank), FormatWork(group.work_per_rank));
  }
  if (listed < load.groups.size()) {
    absl::StrAppendFormat(&text, "  ... %s\n",
                          Counted(load.groups.size() - listed, "more CP group",
                                  "more CP groups"));
  }
  absl::StrAppend(&text, "  tokens per rank: ",
                  RankFigures(load, &CpGroupLoad::tokens_per_rank,
                              FormatTokens, options),
                  "\n");
  absl::StrAppend(&text, "  work per rank:   ",
                  RankFigures(load, &CpGroupLoad::work_per_rank, FormatWork,
                              options),
                  "\n");
  if (time != nullptr) {
    absl::StrAppend(&text, "  ms per rank:     ", RankMilliseconds(load, *time, options),
                    "\n");
  }
}

void AppendQuality(const ScheduleQuality& quality, const std::optional<ScheduleTime>& time,
                   const std::optional<RuntimeStep>& step, std::string& text) {
  absl::StrAppendFormat(&text,
                        "\nbalance efficiency  %.4f  (ideal work / "
                        "critical-path work; 1.0 is the bound)\n",
                        quality.balance_efficiency);
  absl::StrAppendFormat(&text, "microbatches        %d  (lower bound %d)\n",
                        quality.microbatch_count,
                        quality.microbatch_lower_bound);
  absl::StrAppendFormat(&text, "critical-path work  %s\n",
                        FormatWork(quality.critical_path_work));
  if (!time.has_value() || !step.has_value()) return;
  absl::StrAppendFormat(&text,
                        "step time           %s ms  (the runtime above; docs/runtime_step.md)\n",
                        FormatMs(step->step_seconds));
  absl::StrAppendFormat(&text,
                        "busiest rank        %s ms  (bubble %s ms; the step is at least %s ms)\n",
                        FormatMs(step->busiest_rank_seconds), FormatMs(step->bubble_seconds),
                        FormatMs(step->bound_seconds));
  absl::StrAppendFormat(&text,
                        "barrier step time   %s ms  (one layer; sum over microbatches of "
                        "the slowest rank)\n",
                        FormatMs(time->step_seconds));
  absl::StrAppendFormat(&text,
                        "time lower bound    %s ms  (one layer; no schedule of these "
                        "samples on G ranks is faster)\n",
                        FormatMs(time->bound_seconds));
  absl::StrAppendFormat(&text,
                        "GPU efficiency      %.4f  (time lower bound / barrier step "
                        "time; 1.0 is the bound)\n",
                        time->gpu_efficiency);
}

// The header's lines on the cost profile: which, and what it leaves out.
void AppendCostProfile(const CostProfile& profile, std::string& text) {
  absl::StrAppendFormat(&text, "\ncost model %s", profile.name);
  if (!profile.description.empty()) {
    absl::StrAppend(&text, ": ", profile.description);
  }
  if (!profile.communication.has_value()) {
    absl::StrAppend(&text,
                    "\n           GPU seconds, compute only: the measured "
                    "layer times; communication is not modelled\n");
    return;
  }
  const CommunicationModel& model = *profile.communication;
  absl::StrAppendFormat(
      &text,
      "\n           GPU seconds: the measured layer times, and the ring "
      "attention KV exchange MODELLED (not measured) at %g GB/s within a "
      "node of %d GPUs, %g GB/s across nodes, %g bytes per token\n",
      model.intra_node_gb_per_s, model.gpus_per_node,
      model.inter_node_gb_per_s, model.kv_bytes_per_token);
}

}  // namespace

std::string TimeColumnsHeader() {
  return absl::StrFormat("  %11s  %11s  %11s  %7s", "step ms", "barrier ms", "bound ms",
                         "GPU eff");
}

std::string TimeColumns(const ScheduleRun& run) {
  if (!run.time.has_value() || !run.step.has_value()) {
    return absl::StrFormat("  %11s  %11s  %11s  %7s", "-", "-", "-", "-");
  }
  return absl::StrFormat("  %11s  %11s  %11s  %7.4f", FormatMs(run.step->step_seconds),
                         FormatMs(run.time->step_seconds), FormatMs(run.time->bound_seconds),
                         run.time->gpu_efficiency);
}

std::string FormatReportHeader(const SchedulingProblem& problem) {
  const std::vector<Sample>& samples = problem.samples;
  const RunParameters& parameters = problem.parameters;
  std::int64_t total_tokens = 0;
  for (const Sample& sample : samples) total_tokens += sample.len;

  std::string text = "dcpsched schedule report\n";
  absl::StrAppendFormat(&text, "workload   %d samples, %d tokens",
                        samples.size(), total_tokens);
  if (!samples.empty()) {
    const auto [shortest, longest] = std::minmax_element(
        samples.begin(), samples.end(),
        [](const Sample& a, const Sample& b) { return a.len < b.len; });
    absl::StrAppendFormat(&text, ", len %d..%d, mean %.1f", shortest->len,
                          longest->len,
                          static_cast<double>(total_tokens) /
                              static_cast<double>(samples.size()));
  }
  absl::StrAppendFormat(&text, "\n           %s\n",
                        problem.workload_description);
  absl::StrAppendFormat(&text, "topology   G = %d ranks",
                        parameters.total_gpus());
  if (parameters.cp_size_implied) {
    absl::StrAppendFormat(
        &text, " (only G given: dp_balanced runs as dp %d x cp %d)\n",
        parameters.dp_size, parameters.cp_size);
  } else {
    absl::StrAppendFormat(&text, " (dp %d x cp %d)\n", parameters.dp_size,
                          parameters.cp_size);
  }
  absl::StrAppendFormat(&text,
                        "limits     max_seq_len_per_rank %d, min_cp %d, vpp %s",
                        parameters.max_seq_len_per_rank, parameters.min_cp_size,
                        OptionalValue(parameters.vpp_group));
  if (parameters.max_num_seqs.has_value()) {
    absl::StrAppendFormat(&text, ", max_num_seqs %d",
                          *parameters.max_num_seqs);
  }
  text += "\n";
  if (problem.cost_profile.has_value()) {
    AppendCostProfile(*problem.cost_profile, text);
    absl::StrAppend(&text, "runtime    ", DescribeRuntime(problem.runtime),
                    " (docs/runtime_step.md): modelled compute only\n");
  }
  return text;
}

std::string FormatRunDetail(const SchedulingProblem& problem,
                            const ScheduleRun& run,
                            const ReportOptions& options) {
  const absl::string_view name = SchedulerName(run.scheduler);
  if (!run.status.ok()) {
    return absl::StrCat("\n", name, " failed: ", run.status.message(), "\n");
  }
  const ScheduleQuality& quality = run.quality;
  std::string text = absl::StrCat(
      "\n", name, " schedule: ",
      Counted(quality.microbatches.size(), "microbatch", "microbatches"), "\n");
  if (run.scheduler == SchedulerKind::kCostAware) {
    absl::StrAppend(&text, "kept       ", run.source_reason,
                    "\npromises   every invariant but 5 (work cap), 11 included\n");
  }
  const std::size_t shown =
      ShownCount(quality.microbatches.size(), options.max_microbatches);
  for (std::size_t i = 0; i < shown; ++i) {
    AppendMicrobatch(i, quality.microbatches[i],
                     run.time.has_value() ? &run.time->microbatches[i] : nullptr,
                     problem.parameters.total_gpus(), options, text);
  }
  if (shown < quality.microbatches.size()) {
    absl::StrAppendFormat(&text,
                          "\n... %d more microbatches (the JSON form lists "
                          "them all)\n",
                          quality.microbatches.size() - shown);
  }
  AppendQuality(quality, run.time, run.step, text);
  return text;
}

std::string FormatComparisonTable(absl::Span<const ScheduleRun> runs,
                                  const ReportOptions& options) {
  std::string text = "\ncomparison on the same workload\n";
  absl::StrAppendFormat(&text, "%-14s  %10s  %12s  %11s  %18s", "scheduler",
                        "efficiency", "microbatches", "lower bound",
                        "critical-path work");
  const bool timed = AnyTimed(runs);
  if (timed) absl::StrAppend(&text, TimeColumnsHeader());
  absl::StrAppend(&text, options.show_time ? "  time ms\n" : "\n");
  for (const ScheduleRun& run : runs) {
    absl::StrAppendFormat(&text, "%-14s  ", SchedulerName(run.scheduler));
    if (!run.skipped.empty()) {
      absl::StrAppend(&text, "skipped: ", run.skipped, "\n");
      continue;
    }
    if (!run.status.ok()) {
      absl::StrAppend(&text, "error: ", run.status.message(), "\n");
      continue;
    }
    const ScheduleQuality& quality = run.quality;
    absl::StrAppendFormat(&text, "%10.4f  %12d  %11d  %18s",
                          quality.balance_efficiency, quality.microbatch_count,
                          quality.microbatch_lower_bound,
                          FormatWork(quality.critical_path_work));
    if (timed) absl::StrAppend(&text, TimeColumns(run));
    if (options.show_time) {
      absl::StrAppendFormat(&text, "  %7.3f", run.elapsed_ms);
    }
    absl::StrAppend(&text, "\n");
  }
  return text;
}

std::string FormatReport(const SchedulingProblem& problem,
                         const ScheduleRun& run,
                         absl::Span<const ScheduleRun> comparison,
                         const ReportOptions& options) {
  return absl::StrCat(
      FormatReportHeader(problem), FormatRunDetail(problem, run, options),
      comparison.empty() ? "" : FormatComparisonTable(comparison, options));
}

}  // namespace dcpsched
