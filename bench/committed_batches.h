// The committed set of batches the cost-model benchmarks report on
// (docs/cost_aware.md, docs/runtime_step.md): each as the `dcpsched
// schedule` flags that make it (seed 5154) and the workload those flags
// generate, so that a table's row can be reproduced from the command line.

#ifndef DCPSCHED_BENCH_COMMITTED_BATCHES_H_
#define DCPSCHED_BENCH_COMMITTED_BATCHES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "io/workload.h"

namespace dcpsched::bench {

struct Batch {
  // The CLI command's flags.
  std::string flags;
  // G, as --dp x --cp or --total-gpus.
  std::int64_t total_gpus = 0;
  // dp and cp as the flags give them (dp = G, cp = 1 for --total-gpus).
  std::int64_t dp_size = 0;
  std::int64_t cp_size = 0;
  std::int64_t mslpr = 0;
  LognormalWorkload workload;
};

// The six batches, smallest G first but the G = 512 one last.
std::vector<Batch> CommittedBatches();

}  // namespace dcpsched::bench

#endif  // DCPSCHED_BENCH_COMMITTED_BATCHES_H_
