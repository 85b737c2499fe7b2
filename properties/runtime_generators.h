// RapidCheck generators of runtimes (core/runtime_step.h) and the runtime
// as the oracles read it: shared by the properties of the runtime step
// model and of the schedulers that minimise it.

#ifndef DCPSCHED_PROPERTIES_RUNTIME_GENERATORS_H_
#define DCPSCHED_PROPERTIES_RUNTIME_GENERATORS_H_

#include <cstdint>
#include <ostream>

#include "core/runtime_step.h"
#include "oracle/reference_runtime_step.h"
#include "rapidcheck.h"

namespace dcpsched {

// How RapidCheck prints a generated runtime of a failing case.
void showValue(const RuntimeConfig& config, std::ostream& os);

}  // namespace dcpsched

namespace dcpsched::properties {

// A runtime for G ranks: P <= 4, V <= 3, any group size N (0 to 6), L <= 3,
// several forward shares; E a divisor of G (or, rarely, not); legacy now
// and then, with a pipeline too, so that refusals are drawn as well.
rc::Gen<RuntimeConfig> GenRuntimeConfig(std::int64_t total_gpus);

// A runtime a schedule of G ranks can be run on whenever its microbatch
// count is a multiple of `vpp_group` (>= 1) and at least `vpp_group`:
// P 1 (three times in four), 2 or 4; V = 2 only where vpp_group >= P (N =
// vpp_group); E a divisor of G now and then; legacy only without
// pipelining.
rc::Gen<RuntimeConfig> GenRunnableRuntimeConfig(std::int64_t total_gpus,
                                                std::int64_t vpp_group);

// `config` as the reference oracles name its fields.
oracle::ReferenceRuntime ToReference(const RuntimeConfig& config);

}  // namespace dcpsched::properties

#endif  // DCPSCHED_PROPERTIES_RUNTIME_GENERATORS_H_
