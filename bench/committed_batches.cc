#include "bench/committed_batches.h"

#include <cstdint>
#include <vector>

#include "io/workload.h"

namespace dcpsched::bench {
namespace {

LognormalWorkload Workload(std::int64_t samples, double mean, double sigma,
                           std::int64_t min_len, std::int64_t max_len) {
  LognormalWorkload workload = DcpBenchmarkWorkload();
  workload.num_samples = samples;
  workload.mean_len = mean;
  workload.sigma = sigma;
  workload.min_len = min_len;
  workload.max_len = max_len;
  return workload;
}

}  // namespace

std::vector<Batch> CommittedBatches() {
  const LognormalWorkload skewed = SkewedDcpBenchmarkWorkload();
  return {
      {"--dp 2 --cp 4 --mslpr 2048 --samples 256", 8, 2, 4, 2048,
       Workload(256, 1024, 1.5, 128, 8192)},
      {"--dp 8 --cp 8 --mslpr 8192 --samples 2048", 64, 8, 8, 8192,
       Workload(2048, 1024, 1.5, 128, 8192)},
      {"--dp 8 --cp 8 --mslpr 16384 --samples 1024 --mean 4096 --sigma 1.5 "
       "--min-len 256 --max-len 131072",
       64, 8, 8, 16384, Workload(1024, 4096, 1.5, 256, 131072)},
      {"--dp 4 --cp 8 --mslpr 4096 --samples 1024 --preset skewed", 32, 4, 8, 4096,
       Workload(1024, skewed.mean_len, skewed.sigma, skewed.min_len, skewed.max_len)},
      {"--dp 4 --cp 4 --mslpr 32768 --samples 512 --mean 8192 --sigma 1.4 "
       "--min-len 512 --max-len 262144",
       16, 4, 4, 32768, Workload(512, 8192, 1.4, 512, 262144)},
      {"--total-gpus 512 --mslpr 8192 --samples 8192", 512, 512, 1, 8192,
       Workload(8192, 1024, 1.5, 128, 8192)},
  };
}

}  // namespace dcpsched::bench
