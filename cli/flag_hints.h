// The command line's names for the parameters a core message names.
//
// The core's errors say what to change in the library's terms
// ("raise max_seq_len_per_rank or cp_size"); a command-line user sets those
// through flags whose names differ (--mslpr, --cp), and with --total-gpus G
// dp_balanced's cp_size is not a flag at all (it runs as dp G x cp 1). So
// every core error the program prints goes through WithFlagHint, which adds
// the flags that set the parameters the message names.

#ifndef DCPSCHED_CLI_FLAG_HINTS_H_
#define DCPSCHED_CLI_FLAG_HINTS_H_

#include <string>

#include "absl/strings/string_view.h"
#include "io/schedule_run.h"

namespace dcpsched {

// `message` followed by "; on the command line, P is --flag and ..." for
// each parameter P it names (as a whole word), in the order of first
// mention; `message` alone if it names none. `parameters` says whether
// cp_size came from --total-gpus, where raising it means giving --dp D
// --cp C instead.
std::string WithFlagHint(absl::string_view message,
                         const RunParameters& parameters);

}  // namespace dcpsched

#endif  // DCPSCHED_CLI_FLAG_HINTS_H_
