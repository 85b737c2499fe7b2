#include "cli/schedule_command.h"

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "cli/comparison_runs.h"
#include "cli/exit_codes.h"
#include "cli/flag_hints.h"
#include "cli/problem_flags.h"
#include "cli/svg_output.h"
#include "io/report.h"
#include "io/schedule_json.h"
#include "io/schedule_run.h"

namespace dcpsched {

ScheduleCommand::ScheduleCommand(CLI::App& command) : problem_flags_(command) {
  command
      .add_option("--scheduler", scheduler_, "Scheduler to report on in detail")
      ->capture_default_str()
      ->check(CLI::IsMember({"packing_aware", "dp_balanced", "legacy", "cost_aware"}));
  command
      .add_option("--format", format_,
                  "text: report and comparison table; json: one JSON line "
                  "(docs/schedule_json.md)")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "json"}));
  command
      .add_option("--svg", svg_file_,
                  "Also draw the scheduler's schedule into FILE (SVG: ranks "
                  "across, microbatches down)")
      ->type_name("FILE");
  compare_option_ =
      command
          .add_option("--compare", compare_,
                      "Text report: the schedulers to compare with, "
                      "comma-separated (packing_aware,dp_balanced,legacy,"
                      "cost_aware), none, or auto: all, but legacy only "
                      "where it takes no longer than about a second (it "
                      "rescans the batch once per microbatch) and cost_aware "
                      "only with --cost-profile")
          ->capture_default_str();
  command.add_flag("--compact", compact_,
                   "With --format json: write the compact form "
                   "(dcpsched.schedule_run.v2: each microbatch as its CP "
                   "groups, no per-rank lists)");
}

int ScheduleCommand::Run(std::ostream& out, std::ostream& err) const {
  SchedulingProblem problem;
  if (const int built = problem_flags_.BuildProblem(err, &problem);
      built != kExitSuccess) {
    return built;
  }
  if (compact_ && format_ != "json") {
    err << "dcpsched: --compact chooses the form of the JSON output; add "
           "--format json (the text report is compact already)\n";
    return kExitUsage;
  }
  const absl::StatusOr<SchedulerKind> chosen = ParseSchedulerName(scheduler_);
  if (!chosen.ok()) {
    err << "dcpsched: " << chosen.status().message() << "\n";
    return kExitUsage;
  }
  if (format_ == "json" && compare_option_->count() > 0) {
    err << "dcpsched: --compare chooses the comparison table of the text "
           "report; the JSON output has none (dcpsched compare --format json "
           "compares)\n";
    return kExitUsage;
  }
  const absl::StatusOr<Comparison> comparison = ParseComparison(compare_);
  if (!comparison.ok()) {
    err << "dcpsched: " << comparison.status().message() << "\n";
    return kExitUsage;
  }
  if (*chosen == SchedulerKind::kLegacy &&
      problem.parameters.max_num_seqs.has_value()) {
    err << "dcpsched: --max-num-seqs cannot be used with --scheduler legacy: "
           "the legacy scheduler takes no cap; drop --max-num-seqs, or "
           "choose a scheduler that takes one (packing_aware, dp_balanced, "
           "cost_aware)\n";
    return kExitUsage;
  }
  const ScheduleRun chosen_run = RunScheduler(*chosen, problem);
  if (!chosen_run.status.ok()) {
    err << "dcpsched: " << SchedulerName(*chosen)
        << " cannot schedule this batch: "
        << WithFlagHint(chosen_run.status.message(), problem.parameters)
        << "\n";
    return kExitUsage;
  }
  if (!svg_file_.empty()) {
    if (const int written =
            WriteScheduleSvg(svg_file_, problem, chosen_run, err);
        written != kExitSuccess) {
      return written;
    }
  }
  if (format_ == "json" && !compact_) {
    const std::int64_t values = PerRankJsonValues(chosen_run.schedule);
    if (values > kMaxPerRankJsonValues) {
      err << "dcpsched: the per-rank JSON of this schedule would hold "
          << values << " values (" << chosen_run.schedule.microbatches.size()
          << " microbatches x G = " << problem.parameters.total_gpus()
          << " ranks), more than the " << kMaxPerRankJsonValues
          << " dcpsched writes; add --compact for the compact form, which "
             "grows with the samples and CP groups, not with G\n";
      return kExitUsage;
    }
  }
  if (format_ == "json") {
    out << FormatScheduleRunJson(
        problem, chosen_run,
        compact_ ? ScheduleForm::kCompact : ScheduleForm::kPerRank);
  } else {
    out << FormatReport(problem, chosen_run,
                        ComparisonRuns(*comparison, problem, chosen_run));
  }
  return FinishOutput(out, err, kExitSuccess);
}

}  // namespace dcpsched
