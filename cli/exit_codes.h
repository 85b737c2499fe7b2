// Exit statuses of the dcpsched program.
//
// 2 means "fix the command line" (an unknown flag, a value out of range, a
// bad combination of parameters); 1 means the command line was fine but the
// job failed (a scheduler rejected the batch, a lengths or golden file could
// not be read or parsed, a golden case did not match).
//
// `dcpsched verify` reads 1 as "the schedule breaks an invariant", its
// answer, so there a schedule file that cannot be read or parsed is 2:
// the input, not the schedule, must change.

#ifndef DCPSCHED_CLI_EXIT_CODES_H_
#define DCPSCHED_CLI_EXIT_CODES_H_

namespace dcpsched {

inline constexpr int kExitSuccess = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

}  // namespace dcpsched

#endif  // DCPSCHED_CLI_EXIT_CODES_H_
