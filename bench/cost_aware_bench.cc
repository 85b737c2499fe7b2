// The cost-aware scheduler against packing-aware on the committed set of
// batches (docs/cost_aware.md): per batch and shipped profile, each
// schedule's step time, the bound and the GPU efficiency, their ratio, and
// whose schedule cost_aware kept; then the scheduling time of both on the
// G = 512 batch. Prints the markdown tables of docs/cost_aware.md.
//
// Scheduling time is the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), the
// least over --repeats calls of each scheduler, alternated: on a shared
// machine wall time counts other processes' turns, and the least of several
// calls is the one least disturbed. Each batch is the CLI's
// (`dcpsched schedule <flags>`, seed 5154), generated the same way.
//
// Usage: cost_aware_bench [--repeats N]   (default 15)

#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "core/compact_schedule.h"
#include "core/cost_aware.h"
#include "core/cost_profile.h"
#include "core/gpu_time.h"
#include "core/packing_aware.h"
#include "bench/committed_batches.h"
#include "core/types.h"
#include "io/cost_profile_file.h"
#include "io/workload.h"

namespace dcpsched::bench {
namespace {

double ThreadSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

[[noreturn]] void Fail(absl::string_view what) {
  std::cerr << "cost_aware_bench: " << what << "\n";
  std::exit(1);
}

ScheduleTime Measure(const std::vector<Sample>& samples, const CompactSchedule& schedule,
                     const CostProfile& profile, std::int64_t mslpr) {
  absl::StatusOr<ScheduleTime> time = MeasureScheduleTime(
      samples, schedule, profile, GpuTimeOptions{.max_seq_len_per_rank = mslpr});
  if (!time.ok()) Fail(time.status().message());
  return *time;
}

void PrintQuality(const std::vector<Batch>& batches, const CostProfile& profile) {
  std::cout << absl::StrFormat("\n%s\n\n", profile.name);
  std::cout << "| batch (`dcpsched schedule` flags, seed 5154) | packing_aware ms | eff | "
               "cost_aware ms | eff | speed-up | kept |\n"
               "| --- | ---: | ---: | ---: | ---: | ---: | --- |\n";
  for (const Batch& batch : batches) {
    absl::StatusOr<std::vector<Sample>> samples = GenerateLognormalWorkload(batch.workload);
    if (!samples.ok()) Fail(samples.status().message());
    const DynamicCpOptions options{.total_gpus = batch.total_gpus,
                                   .max_seq_len_per_rank = batch.mslpr};
    absl::StatusOr<CompactSchedule> packing = ScheduleDynamicCpCompact(*samples, options);
    absl::StatusOr<CostAwareResult> cost = ScheduleCostAware(*samples, options, profile);
    if (!packing.ok()) Fail(packing.status().message());
    if (!cost.ok()) Fail(cost.status().message());
    const ScheduleTime upstream = Measure(*samples, *packing, profile, batch.mslpr);
    const ScheduleTime planned = Measure(*samples, cost->schedule, profile, batch.mslpr);
    std::cout << absl::StrFormat(
        "| `%s` | %.1f | %.3f | %.1f | %.3f | %.3fx | %s |\n", batch.flags,
        upstream.step_seconds * 1e3, upstream.gpu_efficiency, planned.step_seconds * 1e3,
        planned.gpu_efficiency, upstream.step_seconds / planned.step_seconds,
        CostAwareSourceName(cost->source));
  }
}

void PrintSchedulingTime(const Batch& batch, const CostProfile& profile, int repeats) {
  absl::StatusOr<std::vector<Sample>> samples = GenerateLognormalWorkload(batch.workload);
  if (!samples.ok()) Fail(samples.status().message());
  const DynamicCpOptions options{.total_gpus = batch.total_gpus,
                                 .max_seq_len_per_rank = batch.mslpr};
  double packing = std::numeric_limits<double>::infinity();
  double cost = std::numeric_limits<double>::infinity();
  for (int r = 0; r < repeats; ++r) {
    double start = ThreadSeconds();
    if (!ScheduleDynamicCpCompact(*samples, options).ok()) Fail("packing_aware failed");
    packing = std::min(packing, ThreadSeconds() - start);
    start = ThreadSeconds();
    if (!ScheduleCostAware(*samples, options, profile).ok()) Fail("cost_aware failed");
    cost = std::min(cost, ThreadSeconds() - start);
  }
  std::cout << absl::StrFormat(
      "\nscheduling time on `%s` (%s), thread CPU time, least of %d calls each\n\n"
      "| packing_aware ms | cost_aware ms | ratio |\n| ---: | ---: | ---: |\n"
      "| %.2f | %.2f | %.1fx |\n",
      batch.flags, profile.name, repeats, packing * 1e3, cost * 1e3, cost / packing);
}

}  // namespace
}  // namespace dcpsched::bench

int main(int argc, char** argv) {
  using namespace dcpsched;
  int repeats = 15;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--repeats" && i + 1 < argc) {
      repeats = std::max(1, std::atoi(argv[++i]));
    } else {
      bench::Fail("usage: cost_aware_bench [--repeats N]");
    }
  }
  const std::vector<bench::Batch> batches = bench::CommittedBatches();
  for (const char* name : {"h200-llama3-8b", "h200-llama3-70b-tp8"}) {
    absl::StatusOr<CostProfile> profile = LoadCostProfile(name);
    if (!profile.ok()) bench::Fail(profile.status().message());
    bench::PrintQuality(batches, *profile);
    if (std::string_view(name) == "h200-llama3-8b") {
      bench::PrintSchedulingTime(batches.back(), *profile, repeats);
    }
  }
  return 0;
}
