// The step times cost_aware's schedules take under h200-llama3-8b on a fixed
// set of batches, one line per batch: what mutation/quality_only.py compares
// between the unmutated core and a mutant of it (DCPSCHED_MUTANT, the
// schemata build), to tell a mutant that only worsens cost_aware's schedules
// (hidden from the properties by the fallback to packing-aware) from one
// that changes nothing it measures.
//
// The batches: the committed set of docs/cost_aware.md, then seeded
// lognormal batches at G that are and are not powers of two, with and
// without VPP and max_num_seqs, and small batches with VPP. Each line is
//   <batch> <step seconds as a hex float> <source>
// or `<batch> error <status code>`.
//
// Usage: cost_aware_quality_probe   (links against a core library)

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "core/cost_aware.h"
#include "core/cost_profile.h"
#include "core/types.h"
#include "io/cost_profile_file.h"
#include "io/workload.h"

namespace dcpsched {
namespace {

struct ProbeBatch {
  std::string name;
  DynamicCpOptions options;
  LognormalWorkload workload;
};

LognormalWorkload Workload(std::int64_t samples, double mean, double sigma,
                           std::int64_t min_len, std::int64_t max_len, std::uint64_t seed) {
  LognormalWorkload workload = DcpBenchmarkWorkload();
  workload.num_samples = samples;
  workload.mean_len = mean;
  workload.sigma = sigma;
  workload.min_len = min_len;
  workload.max_len = max_len;
  workload.seed = seed;
  return workload;
}

std::vector<ProbeBatch> Batches() {
  std::vector<ProbeBatch> batches = {
      {"committed-g8", {.total_gpus = 8, .max_seq_len_per_rank = 2048},
       Workload(256, 1024, 1.5, 128, 8192, 5154)},
      {"committed-g64", {.total_gpus = 64, .max_seq_len_per_rank = 8192},
       Workload(2048, 1024, 1.5, 128, 8192, 5154)},
      {"committed-long", {.total_gpus = 64, .max_seq_len_per_rank = 16384},
       Workload(1024, 4096, 1.5, 256, 131072, 5154)},
      {"committed-g16-long", {.total_gpus = 16, .max_seq_len_per_rank = 32768},
       Workload(512, 8192, 1.4, 512, 262144, 5154)},
      {"committed-g512", {.total_gpus = 512, .max_seq_len_per_rank = 8192},
       Workload(8192, 1024, 1.5, 128, 8192, 5154)},
  };
  const std::int64_t gpus[] = {4, 6, 8, 12, 14, 16, 24, 32};
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    for (const std::int64_t g : gpus) {
      DynamicCpOptions options{.total_gpus = g, .max_seq_len_per_rank = 4096};
      if (seed % 2 == 0) options.vpp_group = 4;
      if (seed % 3 == 0) options.max_num_seqs = 3;
      if (seed == 5) options.min_cp_size = 2;
      std::int64_t widest = 1;  // the largest power of two in G: the longest sample's group
      while (widest * 2 <= g) widest *= 2;
      batches.push_back({absl::StrFormat("g%d-seed%d", g, seed), options,
                         Workload(16 * g, 2048, 1.4, 128, 4096 * widest, seed)});
    }
  }
  // Small batches with VPP, where few ways of splitting reach a multiple of
  // vpp_group (the fallback over microbatch counts).
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const std::int64_t g = 2 + static_cast<std::int64_t>(seed % 15);
    const std::int64_t vpp = 2 + static_cast<std::int64_t>(seed % 3);
    std::int64_t widest = 1;
    while (widest * 2 <= g) widest *= 2;
    DynamicCpOptions options{.total_gpus = g, .max_seq_len_per_rank = 64, .vpp_group = vpp};
    if (seed % 4 == 0) options.max_num_seqs = 2;
    batches.push_back({absl::StrFormat("small-g%d-vpp%d-seed%d", g, vpp, seed), options,
                       Workload(vpp * (1 + static_cast<std::int64_t>(seed % 4)) +
                                    static_cast<std::int64_t>(seed % 5),
                                48, 1.2, 1, 64 * widest, seed)});
  }
  return batches;
}

int Main() {
  const absl::StatusOr<CostProfile> profile = LoadCostProfile("h200-llama3-8b");
  if (!profile.ok()) {
    std::fprintf(stderr, "%s\n", std::string(profile.status().message()).c_str());
    return 2;
  }
  for (const ProbeBatch& batch : Batches()) {
    const absl::StatusOr<std::vector<Sample>> samples = GenerateLognormalWorkload(batch.workload);
    if (!samples.ok()) return 2;
    const absl::StatusOr<CostAwareResult> result =
        ScheduleCostAware(*samples, batch.options, *profile);
    if (!result.ok()) {
      std::printf("%s error %d\n", batch.name.c_str(), static_cast<int>(result.status().code()));
      continue;
    }
    std::printf("%s %a %s\n", batch.name.c_str(), result->step_seconds,
                std::string(CostAwareSourceName(result->source)).c_str());
  }
  return 0;
}

}  // namespace
}  // namespace dcpsched

int main() { return dcpsched::Main(); }
