// `dcpsched schedule`: schedule one global batch and report on it.
//
// The batch is read from a lengths file (--lengths) or drawn from upstream's
// DCP benchmark workload (clipped lognormal, io/workload.h); see
// problem_flags.h for every problem flag. The chosen scheduler's schedule is
// printed as a text report, with a side-by-side table of the schedulers on
// the same batch (--format text, the default; --compare chooses them, see
// comparison_runs.h), or as one line
// of JSON (--format json, io/schedule_json.h): per rank
// ("dcpsched.schedule_run.v1"), or with --compact the compact form
// ("dcpsched.schedule_run.v2"), whose size does not grow with G. The run is
// held in compact form throughout, so the report and the picture cost
// O(samples + groups) too. --svg FILE also draws the
// chosen scheduler's schedule into FILE (io/schedule_svg.h).
// Running `dcpsched` with no subcommand is this command with every default.

#ifndef DCPSCHED_CLI_SCHEDULE_COMMAND_H_
#define DCPSCHED_CLI_SCHEDULE_COMMAND_H_

#include <ostream>
#include <string>

#include "CLI/CLI.hpp"
#include "cli/problem_flags.h"

namespace dcpsched {

class ScheduleCommand {
 public:
  // Registers the flags on `command` (the `schedule` subcommand). The
  // command reads them when Run is called, so `command` must outlive it.
  explicit ScheduleCommand(CLI::App& command);

  ScheduleCommand(const ScheduleCommand&) = delete;
  ScheduleCommand& operator=(const ScheduleCommand&) = delete;

  // Runs with the parsed (or default) flags; writes the result to `out` and
  // one line per error to `err`. Returns the exit status (exit_codes.h).
  int Run(std::ostream& out, std::ostream& err) const;

 private:
  ProblemFlags problem_flags_;
  std::string scheduler_ = "packing_aware";
  std::string format_ = "text";
  std::string svg_file_;
  bool compact_ = false;
  std::string compare_ = "auto";
  CLI::Option* compare_option_ = nullptr;
};

}  // namespace dcpsched

#endif  // DCPSCHED_CLI_SCHEDULE_COMMAND_H_
