// The cost-aware scheduler against packing-aware on the committed set of
// batches (docs/cost_aware.md): per batch and shipped profile, each
// schedule's step as Megatron-LM dev runs it without pipelining (the
// runtime cost_aware minimises by default, core/runtime_step.h), their
// ratio, each one's barrier step (the sum over microbatches of the slowest
// rank) and whose microbatches cost_aware kept; then the scheduling time of
// both on the G = 512 batch, without pipelining and at P = 4. Prints the
// markdown tables of docs/cost_aware.md.
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
#include "core/runtime_step.h"
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

// The step of `schedule`, timed as `time`, on dev without pipelining.
double DevStepSeconds(const CompactSchedule& schedule, const ScheduleTime& time) {
  absl::StatusOr<RuntimeStep> step = MeasureRuntimeStep(schedule, time, RuntimeConfig{});
  if (!step.ok()) Fail(step.status().message());
  return step->step_seconds;
}

void PrintQuality(const std::vector<Batch>& batches, const CostProfile& profile) {
  std::cout << absl::StrFormat("\n%s\n\n", profile.name);
  std::cout << "| batch (`dcpsched schedule` flags, seed 5154) | packing_aware ms | "
               "cost_aware ms | speed-up | barrier ms: packing_aware | cost_aware | kept |\n"
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
    const double upstream_step = DevStepSeconds(*packing, upstream);
    const double planned_step = DevStepSeconds(cost->schedule, planned);
    std::cout << absl::StrFormat("| `%s` | %.1f | %.1f | %.3fx | %.1f | %.1f | %s |\n",
                                 batch.flags, upstream_step * 1e3, planned_step * 1e3,
                                 upstream_step / planned_step, upstream.step_seconds * 1e3,
                                 planned.step_seconds * 1e3, CostAwareSourceName(cost->source));
  }
}

void PrintSchedulingTime(const Batch& batch, const CostProfile& profile, int repeats) {
  absl::StatusOr<std::vector<Sample>> samples = GenerateLognormalWorkload(batch.workload);
  if (!samples.ok()) Fail(samples.status().message());
  const DynamicCpOptions options{.total_gpus = batch.total_gpus,
                                 .max_seq_len_per_rank = batch.mslpr};
  CostAwareOptions pipelined;
  pipelined.runtime.pipeline.stages = 4;
  double packing = std::numeric_limits<double>::infinity();
  double cost = std::numeric_limits<double>::infinity();
  double cost_pipelined = std::numeric_limits<double>::infinity();
  for (int r = 0; r < repeats; ++r) {
    double start = ThreadSeconds();
    if (!ScheduleDynamicCpCompact(*samples, options).ok()) Fail("packing_aware failed");
    packing = std::min(packing, ThreadSeconds() - start);
    start = ThreadSeconds();
    if (!ScheduleCostAware(*samples, options, profile).ok()) Fail("cost_aware failed");
    cost = std::min(cost, ThreadSeconds() - start);
    start = ThreadSeconds();
    if (!ScheduleCostAware(*samples, options, profile, pipelined).ok()) {
      Fail("cost_aware failed at P = 4");
    }
    cost_pipelined = std::min(cost_pipelined, ThreadSeconds() - start);
  }
  std::cout << absl::StrFormat(
      "\nscheduling time on `%s` (%s), thread CPU time, least of %d calls each\n\n"
      "| packing_aware ms | cost_aware ms, no pipelining | ratio | cost_aware ms, P = 4 | "
      "ratio |\n| ---: | ---: | ---: | ---: | ---: |\n"
      "| %.2f | %.2f | %.1fx | %.2f | %.1fx |\n",
      batch.flags, profile.name, repeats, packing * 1e3, cost * 1e3, cost / packing,
      cost_pipelined * 1e3, cost_pipelined / packing);
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
