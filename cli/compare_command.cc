#include "cli/compare_command.h"

#include <algorithm>
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "cli/exit_codes.h"
#include "cli/problem_flags.h"
#include "cli/svg_output.h"
#include "io/report.h"
#include "io/schedule_json.h"
#include "io/schedule_run.h"
#include "nlohmann/json.hpp"

namespace dcpsched {

namespace {

// The report's header (workload, topology, limits) under its own first line.
std::string CompareHeader(const SchedulingProblem& problem) {
  const std::string header = FormatReportHeader(problem);
  const std::size_t first_line_end = header.find('\n');
  return absl::StrCat("dcpsched compare: every scheduler on one workload",
                      first_line_end == std::string::npos
                          ? "\n"
                          : header.substr(first_line_end));
}

}  // namespace

CompareCommand::CompareCommand(CLI::App& command) : problem_flags_(command) {
  command
      .add_option("--format", format_,
                  "text: a table; json: one dcpsched.compare.v1 JSON line "
                  "(docs/schedule_json.md)")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "json"}));
  command
      .add_option("--svg", svg_file_,
                  "Also draw each scheduler's schedule, into "
                  "FILE-<scheduler>.svg (a trailing .svg of FILE is dropped "
                  "first)")
      ->type_name("FILE");
}

std::string FormatCompareTable(absl::Span<const ScheduleRun> runs,
                               bool show_time) {
  std::string text = absl::StrFormat(
      "%-14s  %10s  %12s  %11s  %13s  %18s", "scheduler", "efficiency",
      "microbatches", "lower bound", "max rank work", "critical-path work");
  const bool timed = std::any_of(runs.begin(), runs.end(), [](const ScheduleRun& run) {
    return run.time.has_value();
  });
  if (timed) absl::StrAppend(&text, TimeColumnsHeader());
  absl::StrAppend(&text, show_time ? "  time ms\n" : "\n");
  for (const ScheduleRun& run : runs) {
    absl::StrAppendFormat(&text, "%-14s  ", SchedulerName(run.scheduler));
    if (!run.status.ok()) {
      absl::StrAppend(&text, "error: ", run.status.message(), "\n");
      continue;
    }
    const ScheduleQuality& quality = run.quality;
    absl::StrAppendFormat(
        &text, "%10.4f  %12d  %11d  %13s  %18s", quality.balance_efficiency,
        quality.microbatch_count, quality.microbatch_lower_bound,
        absl::StrFormat("%.4g", quality.max_rank_work),
        absl::StrFormat("%.4g", quality.critical_path_work));
    if (timed) absl::StrAppend(&text, TimeColumns(run));
    if (show_time) absl::StrAppendFormat(&text, "  %7.3f", run.elapsed_ms);
    absl::StrAppend(&text, "\n");
  }
  return text;
}

int CompareCommand::Run(std::ostream& out, std::ostream& err) const {
  SchedulingProblem problem;
  if (const int built = problem_flags_.BuildProblem(err, &problem);
      built != kExitSuccess) {
    return built;
  }
  const std::vector<ScheduleRun> runs = RunAllSchedulers(problem);
  bool any_ok = false;
  for (const ScheduleRun& run : runs) any_ok = any_ok || run.status.ok();
  if (!svg_file_.empty()) {
    for (const ScheduleRun& run : runs) {
      if (!run.status.ok()) continue;
      const std::string path = SvgPathForScheduler(svg_file_, run.scheduler);
      if (const int written = WriteScheduleSvg(path, problem, run, err);
          written != kExitSuccess) {
        return written;
      }
    }
  }
  if (format_ == "json") {
    out << ComparisonToJson(problem, runs)
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
  } else {
    out << CompareHeader(problem) << "\n" << FormatCompareTable(runs);
  }
  if (!any_ok) {
    err << "dcpsched: no scheduler can schedule this batch (see the table "
           "for each one's reason)\n";
    return FinishOutput(out, err, kExitUsage);
  }
  return FinishOutput(out, err, kExitSuccess);
}

}  // namespace dcpsched
