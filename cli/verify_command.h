// `dcpsched verify FILE`: checks a schedule made anywhere (this program,
// upstream Megatron-LM, a hand edit) against the specification's invariants.
//
// FILE (or "-" for standard input) is a schedule file (io/schedule_file.h,
// docs/schedule_json.md): the problem and the schedule, either as
// "dcpsched.schedule.v1" or as the JSON `dcpsched schedule --format json`
// writes, per rank or compact. Every violation the schedule checker finds,
// on the compact form, in time linear in its size (core/checker.h:
// invariants 1-6, 8, 10 under a cap, and 11, the CP groups Megatron-LM's
// runtime has; 7 and 9 concern how a schedule is built) is printed
// on stdout, one per line, lowest invariant first:
//   invariant 2 (each sample once): 1 input sample(s) in no microbatch: ids 7
// A schedule with none prints one line starting "ok:".
//
// With --cost-profile NAME|FILE (cli/cost_profile_flag.h) two more lines
// give the schedule's GPU time by that profile (core/gpu_time.h): the
// barrier step (the sum over microbatches of the slowest rank), its lower
// bound (for CP sizes that are powers of two or G), the GPU efficiency and
// whether communication is modelled; then the step as Megatron-LM's
// runtime runs it (core/runtime_step.h), on the runtime --pp, --ep, ...
// describe (cli/runtime_flags.h; by default dev without pipelining), with
// the busiest rank's work, the bubble and the step's bound.
//
// Exit status: 0 when the schedule keeps every invariant, 1 when it breaks
// at least one, 2 when FILE cannot be read, is not valid JSON, does not
// follow the schema or states an invalid problem (the message says which
// field to fix), the cost profile is unknown or malformed (the message
// names the field), the runtime cannot run the schedule (say, interleaving
// a microbatch count Megatron-LM refuses), or the command line is wrong.

#ifndef DCPSCHED_CLI_VERIFY_COMMAND_H_
#define DCPSCHED_CLI_VERIFY_COMMAND_H_

#include <ostream>
#include <string>

#include "CLI/CLI.hpp"
#include "cli/runtime_flags.h"

namespace dcpsched {

class VerifyCommand {
 public:
  // Registers the FILE argument on `command` (the `verify` subcommand),
  // which must outlive this object.
  explicit VerifyCommand(CLI::App& command);

  VerifyCommand(const VerifyCommand&) = delete;
  VerifyCommand& operator=(const VerifyCommand&) = delete;

  // Violations (or the "ok:" line) go to `out`, an unreadable or malformed
  // file to `err`. Returns the exit status above.
  int Run(std::ostream& out, std::ostream& err) const;

 private:
  std::string file_;
  std::string cost_profile_;
  RuntimeFlags runtime_flags_;
};

}  // namespace dcpsched

#endif  // DCPSCHED_CLI_VERIFY_COMMAND_H_
