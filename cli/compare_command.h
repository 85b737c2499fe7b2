// `dcpsched compare`: every scheduler (packing_aware, dp_balanced, legacy)
// on the same global batch, side by side.
//
// Takes the same problem flags as `dcpsched schedule` (problem_flags.h).
// --format text (the default) prints the workload header and one table row
// per scheduler: balance efficiency, microbatches, their lower bound, the
// most work any rank carries in one microbatch, the critical-path work and
// the scheduling time; a scheduler that cannot schedule the batch shows its
// error instead. --format json prints one "dcpsched.compare.v1" line
// (io/schedule_json.h). --svg FILE draws each scheduler that succeeded into
// its own file (svg_output.h: FILE-<scheduler>.svg).
//
// Exit status: 0 when at least one scheduler scheduled the batch (a failing
// one is a result, shown in the table); 1 when none did or an output could
// not be written; 2 for command-line errors.

#ifndef DCPSCHED_CLI_COMPARE_COMMAND_H_
#define DCPSCHED_CLI_COMPARE_COMMAND_H_

#include <ostream>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/types/span.h"
#include "cli/problem_flags.h"
#include "io/schedule_run.h"

namespace dcpsched {

class CompareCommand {
 public:
  // Registers the flags on `command` (the `compare` subcommand), which must
  // outlive this object.
  explicit CompareCommand(CLI::App& command);

  CompareCommand(const CompareCommand&) = delete;
  CompareCommand& operator=(const CompareCommand&) = delete;

  // Runs every scheduler with the parsed flags; the table or JSON goes to
  // `out`, one line per error to `err`. Returns the exit status.
  int Run(std::ostream& out, std::ostream& err) const;

 private:
  ProblemFlags problem_flags_;
  std::string format_ = "text";
  std::string svg_file_;
};

// The table of `runs`: a header line, then one row per run. With
// `show_time` false the time column is left out (for stable output).
std::string FormatCompareTable(absl::Span<const ScheduleRun> runs,
                               bool show_time = true);

}  // namespace dcpsched

#endif  // DCPSCHED_CLI_COMPARE_COMMAND_H_
