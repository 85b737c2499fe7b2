// `dcpsched schedule`: schedule one global batch and report on it.
//
// The batch is read from a lengths file (--lengths) or drawn from upstream's
// DCP benchmark workload (clipped lognormal, io/workload.h). The chosen
// scheduler's schedule is printed as a text report, with a side-by-side
// table of all three schedulers on the same batch (--format text, the
// default), or as one line of JSON (--format json, io/schedule_json.h).
// Running `dcpsched` with no subcommand is this command with every default.

#ifndef DCPSCHED_CLI_SCHEDULE_COMMAND_H_
#define DCPSCHED_CLI_SCHEDULE_COMMAND_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "CLI/CLI.hpp"
#include "io/workload.h"

namespace dcpsched {

class ScheduleCommand {
 public:
  // Registers the flags on `command` (the `schedule` subcommand). The
  // command reads them when Run is called, so `command` must outlive it.
  explicit ScheduleCommand(CLI::App& command);

  ScheduleCommand(const ScheduleCommand&) = delete;
  ScheduleCommand& operator=(const ScheduleCommand&) = delete;

  // Runs with the parsed (or default) flags; writes the result to `out` and
  // one line per error to `err`. Returns the exit status (exit_codes.h).
  int Run(std::ostream& out, std::ostream& err) const;

 private:
  struct Flags {
    std::string lengths_file;
    std::int64_t total_gpus = 0;
    std::int64_t dp_size = 2;
    std::int64_t cp_size = 4;
    std::int64_t max_seq_len_per_rank = 2048;
    std::int64_t min_cp_size = 1;
    std::int64_t vpp_group = 0;
    std::int64_t max_num_seqs = 0;
    std::string scheduler = "packing_aware";
    std::string format = "text";
    std::string preset = "benchmark";
    LognormalWorkload workload;
  };

  Flags flags_;
  // Options whose presence (not only value) matters.
  CLI::Option* total_gpus_option_ = nullptr;
  CLI::Option* vpp_option_ = nullptr;
  CLI::Option* max_num_seqs_option_ = nullptr;
  CLI::Option* mean_option_ = nullptr;
  CLI::Option* sigma_option_ = nullptr;
};

}  // namespace dcpsched

#endif  // DCPSCHED_CLI_SCHEDULE_COMMAND_H_
