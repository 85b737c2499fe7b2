// The runtime a step is modelled on (docs/runtime_step.md), shared by
// `dcpsched schedule`, `compare` and `verify`: --pp, --virtual-stages,
// --ep (with Megatron-LM's long names as aliases), --runtime dev|legacy,
// --layers-per-stage and --forward-share. The step is timed by a cost
// profile, so these flags need --cost-profile. Without them a profile's
// step is the dev runtime's without pipelining.

#ifndef DCPSCHED_CLI_RUNTIME_FLAGS_H_
#define DCPSCHED_CLI_RUNTIME_FLAGS_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "core/runtime_step.h"

namespace dcpsched {

class RuntimeFlags {
 public:
  // Registers the flags on `command`, which reads them when it parses; it
  // must outlive this object.
  explicit RuntimeFlags(CLI::App& command);

  RuntimeFlags(const RuntimeFlags&) = delete;
  RuntimeFlags& operator=(const RuntimeFlags&) = delete;

  // The runtime the parsed (or default) flags describe for G =
  // `total_gpus` ranks, into `*config`; its group size N is `vpp_group`
  // (--vpp, or the schedule file's) when set, else P. Returns
  // kExitSuccess, or writes one error line to `err` and returns kExitUsage:
  // a runtime flag without a cost profile, or a runtime no schedule can
  // run on (CheckRuntimeConfig: legacy with a pipeline, V > 1 without
  // one, E not dividing G, ...). What depends on the microbatch count is
  // checked when a schedule is measured.
  int Build(std::int64_t total_gpus, std::optional<std::int64_t> vpp_group,
            bool has_cost_profile, std::ostream& err, RuntimeConfig* config) const;

 private:
  struct Flags {
    std::int64_t pipeline_stages = 1;
    std::int64_t virtual_stages = 1;
    std::int64_t expert_parallel_size = 0;
    std::string runtime = "dev";
    std::int64_t layers_per_stage = 1;
    double forward_share = 1.0 / 3.0;
  };

  Flags flags_;
  std::vector<CLI::Option*> options_;
  CLI::Option* expert_parallel_option_ = nullptr;
};

}  // namespace dcpsched

#endif  // DCPSCHED_CLI_RUNTIME_FLAGS_H_
