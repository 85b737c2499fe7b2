#include "cli/check_golden_command.h"

#include <cstdint>
#include <ostream>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "cli/exit_codes.h"
#include "io/golden.h"

namespace dcpsched {

CheckGoldenCommand::CheckGoldenCommand(CLI::App& command) {
  command
      .add_option("FILE", files_,
                  "Golden vector files (.jsonl, one case per line); - reads "
                  "standard input")
      ->type_name("FILE")
      ->required();
}

int CheckGoldenCommand::Run(std::ostream& out, std::ostream& err) const {
  std::int64_t passed = 0;
  std::int64_t failed = 0;
  std::int64_t unrunnable = 0;
  bool all_files_read = true;
  for (const std::string& file : files_) {
    const absl::StatusOr<GoldenFileReport> report = CheckGoldenFile(file);
    if (!report.ok()) {
      err << "dcpsched: " << report.status().message() << "\n";
      all_files_read = false;
      continue;
    }
    for (const std::string& failure : report->failures) out << failure << "\n";
    passed += report->passed;
    failed += report->failed;
    unrunnable += report->unrunnable;
  }
  if (unrunnable > 0) {
    out << unrunnable << " of the passed cases: upstream returns a schedule its runtime "
        << "cannot run (invariant 11), reproduced exactly and refused\n";
  }
  out << passed << " passed, " << failed << " failed\n";
  if (all_files_read && passed + failed == 0) {
    err << "dcpsched: no golden case in " << files_.size()
        << (files_.size() == 1 ? " file" : " files")
        << "; an empty or truncated file checks nothing: regenerate it\n";
    return FinishOutput(out, err, kExitUsage);
  }
  const int status = !all_files_read ? kExitUsage
                     : failed > 0    ? kExitWrong
                                     : kExitSuccess;
  return FinishOutput(out, err, status);
}

}  // namespace dcpsched
