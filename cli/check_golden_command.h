// `dcpsched check-golden FILE...`: runs every golden case of every file
// through the core (io/golden.h) and prints one line per failing case, then
// a closing line exactly "N passed, M failed" with the totals over all files.

#ifndef DCPSCHED_CLI_CHECK_GOLDEN_COMMAND_H_
#define DCPSCHED_CLI_CHECK_GOLDEN_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace dcpsched {

class CheckGoldenCommand {
 public:
  // Registers the FILE... arguments on `command` (the `check-golden`
  // subcommand), which must outlive this object.
  explicit CheckGoldenCommand(CLI::App& command);

  CheckGoldenCommand(const CheckGoldenCommand&) = delete;
  CheckGoldenCommand& operator=(const CheckGoldenCommand&) = delete;

  // Failing cases and the totals go to `out`; a file that cannot be read is
  // reported on `err`. Returns kExitSuccess iff every file was read, they
  // held at least one case and none failed; kExitWrong if a case failed;
  // kExitUsage if a file could not be read or no file held a case.
  int Run(std::ostream& out, std::ostream& err) const;

 private:
  std::vector<std::string> files_;
};

}  // namespace dcpsched

#endif  // DCPSCHED_CLI_CHECK_GOLDEN_COMMAND_H_
