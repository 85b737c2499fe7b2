#include "cli/verify_command.h"

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "cli/exit_codes.h"
#include "core/checker.h"
#include "core/types.h"
#include "io/schedule_file.h"

namespace dcpsched {
namespace {

// The invariants the checker judged: 10 only under a cap; 11 is the
// runtime's CP groups.
std::string HeldInvariants(const DynamicCpOptions& options) {
  if (!options.max_num_seqs.has_value()) return "invariants 1-6, 8 and 11";
  return absl::StrCat("invariants 1-6, 8, 10 (max_num_seqs ",
                      *options.max_num_seqs, ") and 11");
}

}  // namespace

VerifyCommand::VerifyCommand(CLI::App& command) {
  command
      .add_option("FILE", file_,
                  "Schedule file (JSON, docs/schedule_json.md), or - for "
                  "standard input")
      ->type_name("FILE")
      ->required();
}

int VerifyCommand::Run(std::ostream& out, std::ostream& err) const {
  const absl::StatusOr<ScheduleFile> file = ReadScheduleFile(file_);
  if (!file.ok()) {
    err << "dcpsched: " << file.status().message() << "\n";
    return kExitUsage;
  }
  const std::vector<Violation> violations =
      FindViolations(file->samples, file->schedule, file->options);
  for (const Violation& violation : violations) {
    out << "invariant " << static_cast<int>(violation.invariant) << " ("
        << InvariantName(violation.invariant) << "): " << violation.message
        << "\n";
  }
  if (violations.empty()) {
    const std::size_t count = file->schedule.microbatches.size();
    out << "ok: " << count << (count == 1 ? " microbatch" : " microbatches")
        << " of G = " << file->options.total_gpus << " ranks, "
        << file->samples.size() << (file->samples.size() == 1 ? " sample" : " samples")
        << "; " << HeldInvariants(file->options) << " hold (docs/specification.md)\n";
  }
  return FinishOutput(out, err, violations.empty() ? kExitSuccess : kExitWrong);
}

}  // namespace dcpsched
