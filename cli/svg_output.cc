#include "cli/svg_output.h"

#include <fstream>
#include <ostream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "cli/exit_codes.h"
#include "io/schedule_run.h"
#include "io/schedule_svg.h"

namespace dcpsched {

std::string SvgPathForScheduler(const std::string& path,
                                SchedulerKind scheduler) {
  absl::string_view stem = path;
  if (absl::EndsWithIgnoreCase(stem, ".svg")) stem.remove_suffix(4);
  return absl::StrCat(stem, "-", SchedulerName(scheduler), ".svg");
}

int WriteScheduleSvg(const std::string& path, const SchedulingProblem& problem,
                     const ScheduleRun& run, std::ostream& err) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (file) file << FormatScheduleSvg(problem, run);
  if (file) file.close();
  if (!file) {
    err << "dcpsched: cannot write SVG file \"" << path
        << "\"; check that its directory exists and is writable\n";
    return kExitInternal;
  }
  return kExitSuccess;
}

}  // namespace dcpsched
