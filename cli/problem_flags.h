// The flags that describe one scheduling problem, shared by `dcpsched
// schedule` and `dcpsched compare`: the global batch (a lengths file, or
// upstream's DCP benchmark workload drawn with a seed), the topology
// (--total-gpus G, or --dp D --cp C) and the limits (--mslpr, --min-cp,
// --vpp, --max-num-seqs), and the cost profile to measure GPU time by
// (--cost-profile, cli/cost_profile_flag.h) with the runtime whose step it
// times (--pp, --ep, ..., cli/runtime_flags.h). Or the whole problem as one
// line, --problem LINE (io/problem_text.h's form, as the conformance check
// and the property tests print a shrunk problem), so such a line runs as it
// is.

#ifndef DCPSCHED_CLI_PROBLEM_FLAGS_H_
#define DCPSCHED_CLI_PROBLEM_FLAGS_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "CLI/CLI.hpp"
#include "cli/runtime_flags.h"
#include "io/schedule_run.h"
#include "io/workload.h"

namespace dcpsched {

class ProblemFlags {
 public:
  // Registers the flags on `command`, which reads them when it parses; it
  // must outlive this object.
  explicit ProblemFlags(CLI::App& command);

  ProblemFlags(const ProblemFlags&) = delete;
  ProblemFlags& operator=(const ProblemFlags&) = delete;

  // Builds the problem the parsed (or default) flags describe into
  // `*problem`. Returns kExitSuccess, or writes one error line to `err` and
  // returns kExitUsage (parameters out of range, the lengths file cannot
  // be read or parsed or holds no sample, or the cost profile cannot be
  // found or is malformed). Writes a note line to `err` where a default
  // the user may not expect decides the problem: one of --dp and --cp
  // given without the other, or an empty generated batch (--samples 0).
  int BuildProblem(std::ostream& err, SchedulingProblem* problem) const;

 private:
  struct Flags {
    std::string problem_line;
    std::string lengths_file;
    std::int64_t total_gpus = 0;
    std::int64_t dp_size = 2;
    std::int64_t cp_size = 4;
    std::int64_t max_seq_len_per_rank = 2048;
    std::int64_t min_cp_size = 1;
    std::int64_t vpp_group = 0;
    std::int64_t max_num_seqs = 0;
    std::string preset = "benchmark";
    std::string cost_profile;
    LognormalWorkload workload;
  };

  int BuildSamples(std::ostream& err, SchedulingProblem* problem) const;
  // The cost profile and the runtime, once the parameters are built.
  int BuildMeasure(std::ostream& err, SchedulingProblem* problem) const;
  // BuildProblem for --problem LINE.
  int BuildFromLine(std::ostream& err, SchedulingProblem* problem) const;

  Flags flags_;
  RuntimeFlags runtime_flags_;
  // Options whose presence (not only value) matters.
  CLI::Option* problem_option_ = nullptr;
  CLI::Option* total_gpus_option_ = nullptr;
  CLI::Option* dp_option_ = nullptr;
  CLI::Option* cp_option_ = nullptr;
  CLI::Option* vpp_option_ = nullptr;
  CLI::Option* max_num_seqs_option_ = nullptr;
  CLI::Option* mean_option_ = nullptr;
  CLI::Option* sigma_option_ = nullptr;
};

}  // namespace dcpsched

#endif  // DCPSCHED_CLI_PROBLEM_FLAGS_H_
