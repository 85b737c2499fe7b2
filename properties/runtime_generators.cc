#include "properties/runtime_generators.h"

#include <cstdint>
#include <ostream>
#include <vector>

#include "core/runtime_step.h"
#include "oracle/reference_runtime_step.h"
#include "rapidcheck.h"

namespace dcpsched {

void showValue(const RuntimeConfig& config, std::ostream& os) {
  os << DescribeRuntime(config) << ", N " << config.pipeline.microbatch_group_size;
}

}  // namespace dcpsched

namespace dcpsched::properties {
namespace {

// A divisor of `total_gpus`, or, one time in ten per candidate, any size up
// to G + 1.
std::int64_t GenExpertParallelSize(std::int64_t total_gpus, bool divisors_only) {
  std::vector<std::int64_t> sizes;
  for (std::int64_t e = 1; e <= total_gpus + 1; ++e) {
    if (total_gpus % e == 0 ||
        (!divisors_only && *rc::gen::weightedElement<bool>({{9, false}, {1, true}}))) {
      sizes.push_back(e);
    }
  }
  return *rc::gen::elementOf(sizes);
}

}  // namespace

rc::Gen<RuntimeConfig> GenRuntimeConfig(std::int64_t total_gpus) {
  return rc::gen::exec([total_gpus] {
    RuntimeConfig config;
    config.pipeline.stages = *rc::gen::inRange<std::int64_t>(1, 5);
    config.pipeline.virtual_stages =
        *rc::gen::weightedElement<std::int64_t>({{4, 1}, {2, 2}, {1, 3}});
    config.pipeline.microbatch_group_size = *rc::gen::inRange<std::int64_t>(0, 7);
    config.layers_per_stage = *rc::gen::inRange<std::int64_t>(1, 4);
    config.forward_share = *rc::gen::element(1.0 / 3.0, 0.25, 0.5, 0.9);
    if (*rc::gen::arbitrary<bool>()) {
      config.expert_parallel_size = GenExpertParallelSize(total_gpus, false);
    }
    if (*rc::gen::weightedElement<bool>({{3, false}, {1, true}})) config.path = RuntimePath::kLegacy;
    return config;
  });
}

rc::Gen<RuntimeConfig> GenRunnableRuntimeConfig(std::int64_t total_gpus,
                                                std::int64_t vpp_group) {
  return rc::gen::exec([total_gpus, vpp_group] {
    RuntimeConfig config;
    // Pipelines a quarter of the time: cost_aware plans at up to 11 token
    // budgets there, so these cases cost the most.
    config.pipeline.stages =
        *rc::gen::weightedElement<std::int64_t>({{6, 1}, {1, 2}, {1, 4}});
    if (config.pipeline.stages > 1 && vpp_group >= config.pipeline.stages &&
        *rc::gen::arbitrary<bool>()) {
      config.pipeline.virtual_stages = 2;
      config.pipeline.microbatch_group_size = vpp_group;
    }
    config.layers_per_stage = *rc::gen::inRange<std::int64_t>(1, 3);
    config.forward_share = *rc::gen::element(1.0 / 3.0, 0.25, 0.5);
    if (*rc::gen::weightedElement<bool>({{3, false}, {1, true}})) {
      config.expert_parallel_size = GenExpertParallelSize(total_gpus, true);
    }
    if (config.pipeline.stages == 1 && *rc::gen::weightedElement<bool>({{3, false}, {1, true}})) {
      config.path = RuntimePath::kLegacy;
    }
    return config;
  });
}

oracle::ReferenceRuntime ToReference(const RuntimeConfig& config) {
  return oracle::ReferenceRuntime{
      .pipeline_stages = config.pipeline.stages,
      .virtual_stages = config.pipeline.virtual_stages,
      .microbatch_group_size = config.pipeline.microbatch_group_size,
      .layers_per_stage = config.layers_per_stage,
      .forward_share = config.forward_share,
      .expert_parallel_size = config.expert_parallel_size.value_or(0),
      .legacy = config.path == RuntimePath::kLegacy,
  };
}

}  // namespace dcpsched::properties
