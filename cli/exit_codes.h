// The exit statuses of the dcpsched program: one contract for every
// subcommand, listed in `dcpsched --help` and the README.
//
//   0  success: the job ran and its answer is good (verify: every invariant
//      holds; check-golden: every case matches)
//   1  the answer is "wrong": verify found violations, check-golden found
//      cases that do not match
//   2  usage or input error: the command line, an input file or the batch
//      must change (an unknown flag, a value out of range, a file that
//      cannot be read or parsed, a batch no scheduler can schedule, a golden
//      file with no case)
//   3  internal or I/O error: writing the output failed, or a bug; the
//      message says which
//
// So CI can tell "the schedule is wrong" (1) from "the check could not run"
// (2, 3).

#ifndef DCPSCHED_CLI_EXIT_CODES_H_
#define DCPSCHED_CLI_EXIT_CODES_H_

#include <ostream>

namespace dcpsched {

inline constexpr int kExitSuccess = 0;
inline constexpr int kExitWrong = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInternal = 3;

// The contract above as --help prints it.
inline constexpr const char kExitStatusHelp[] =
    "Exit status: 0 ok; 1 the schedule or golden vectors are wrong (verify "
    "violations, check-golden mismatches); 2 usage or input error (flags, "
    "unreadable or malformed files, a batch that cannot be scheduled); 3 "
    "internal or I/O error (e.g. writing the output failed).";

// Flushes `out`; if that or an earlier write failed, says so on `err` and
// returns kExitInternal, else `status`.
int FinishOutput(std::ostream& out, std::ostream& err, int status);

}  // namespace dcpsched

#endif  // DCPSCHED_CLI_EXIT_CODES_H_
