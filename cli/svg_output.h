// Writing schedule pictures (io/schedule_svg.h) for the --svg flags.
//
// `dcpsched schedule --svg FILE` draws the one scheduler it reports on into
// FILE. `dcpsched compare --svg FILE` draws every scheduler that succeeded,
// one file each, named by SvgPathForScheduler: FILE without a trailing
// ".svg", then "-<scheduler>.svg".

#ifndef DCPSCHED_CLI_SVG_OUTPUT_H_
#define DCPSCHED_CLI_SVG_OUTPUT_H_

#include <ostream>
#include <string>

#include "io/schedule_run.h"

namespace dcpsched {

// "out.svg" or "out" -> "out-packing_aware.svg".
std::string SvgPathForScheduler(const std::string& path,
                                SchedulerKind scheduler);

// Writes the picture of `run` to `path`. Returns kExitSuccess, or writes one
// error line to `err` and returns kExitInternal (an I/O error).
int WriteScheduleSvg(const std::string& path, const SchedulingProblem& problem,
                     const ScheduleRun& run, std::ostream& err);

}  // namespace dcpsched

#endif  // DCPSCHED_CLI_SVG_OUTPUT_H_
