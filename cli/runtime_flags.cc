#include "cli/runtime_flags.h"

#include <cstdint>
#include <optional>
#include <ostream>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "cli/exit_codes.h"
#include "cli/integer_flag.h"
#include "core/runtime_step.h"

namespace dcpsched {
namespace {

// The largest --pp, --virtual-stages and --layers-per-stage accepted; the
// model's own limit on P x V x microbatches (CheckRuntimeConfig) applies too.
constexpr std::int64_t kMaxStages = 1024;

}  // namespace

RuntimeFlags::RuntimeFlags(CLI::App& command) {
  options_.push_back(
      command
          .add_option("--pp,--pipeline-model-parallel-size", flags_.pipeline_stages,
                      "Pipeline stages P behind every DPxCP rank: the step is "
                      "modelled as Megatron-LM runs it, 1F1B for P > 1 "
                      "(docs/runtime_step.md; needs --cost-profile)")
          ->type_name("P")
          ->capture_default_str()
          ->check(IntegerIn(std::int64_t{1}, kMaxStages)));
  options_.push_back(
      command
          .add_option("--virtual-stages,--virtual-pipeline-model-parallel-size",
                      flags_.virtual_stages,
                      "Model chunks V per pipeline rank: interleaved 1F1B for V > 1 "
                      "(needs --pp 2 or more; --vpp is the microbatch group size)")
          ->type_name("V")
          ->capture_default_str()
          ->check(IntegerIn(std::int64_t{1}, kMaxStages)));
  expert_parallel_option_ =
      command
          .add_option("--ep,--expert-model-parallel-size", flags_.expert_parallel_size,
                      "Expert-parallel size E in DPxCP ranks: each block of E ranks "
                      "moves in lockstep (E = G models global_aux_loss; default: dense)")
          ->type_name("E")
          ->check(IntegerIn(std::int64_t{1}, INT64_MAX));
  options_.push_back(expert_parallel_option_);
  options_.push_back(
      command
          .add_option("--runtime", flags_.runtime,
                      "dev: Megatron-LM dev, no barrier between microbatches; legacy: "
                      "main's barrier after every microbatch (P = 1 only)")
          ->capture_default_str()
          ->check(CLI::IsMember({"dev", "legacy"})));
  options_.push_back(
      command
          .add_option("--layers-per-stage", flags_.layers_per_stage,
                      "Transformer layers in one model chunk (every step is for "
                      "this many layers per stage)")
          ->type_name("L")
          ->capture_default_str()
          ->check(IntegerIn(std::int64_t{1}, kMaxStages)));
  options_.push_back(
      command
          .add_option("--forward-share", flags_.forward_share,
                      "The forward pass's share of a layer's time, in (0, 1); the "
                      "backward takes the rest (default 1/3)")
          ->type_name("F"));
}

int RuntimeFlags::Build(std::int64_t total_gpus, std::optional<std::int64_t> vpp_group,
                        bool has_cost_profile, std::ostream& err,
                        RuntimeConfig* config) const {
  for (const CLI::Option* option : options_) {
    if (option->count() > 0 && !has_cost_profile) {
      err << "dcpsched: " << option->get_name()
          << " describes the runtime whose step a cost profile times; add "
             "--cost-profile (e.g. h200-llama3-8b)\n";
      return kExitUsage;
    }
  }
  RuntimeConfig built;
  built.pipeline.stages = flags_.pipeline_stages;
  built.pipeline.virtual_stages = flags_.virtual_stages;
  built.pipeline.microbatch_group_size = vpp_group.value_or(0);
  built.layers_per_stage = flags_.layers_per_stage;
  built.forward_share = flags_.forward_share;
  if (expert_parallel_option_->count() > 0) {
    built.expert_parallel_size = flags_.expert_parallel_size;
  }
  built.path = flags_.runtime == "legacy" ? RuntimePath::kLegacy : RuntimePath::kDev;
  // A microbatch count every shape accepts: the group size (at least P).
  const std::int64_t any_count =
      built.pipeline.microbatch_group_size == 0 ? built.pipeline.stages
                                                : built.pipeline.microbatch_group_size;
  if (absl::Status valid = CheckRuntimeConfig(built, total_gpus, any_count); !valid.ok()) {
    err << "dcpsched: " << valid.message() << "\n";
    return kExitUsage;
  }
  *config = built;
  return kExitSuccess;
}

}  // namespace dcpsched
