// Benchmarks of the packing-aware scheduler, ScheduleDynamicCp, on one
// global batch of upstream's DCP benchmark workload, next to its two
// yardsticks on the same input:
//   core/...    dcpsched::ScheduleDynamicCp (core/packing_aware.h);
//   oracle/...  dcpsched::oracle::ReferenceScheduleDynamicCp, the naive
//               reference (oracle/reference_oracle.h), where it finishes in
//               reasonable time (see OracleRunsAt);
//   sort/...    copying the batch and stable-sorting it by length,
//               longest first: reading and ordering the input, the floor
//               any scheduler of this kind pays.
//
// All three live in this one binary on purpose: docs/performance.md reports
// the ratios core/sort and oracle/core, and a ratio is only meaningful when
// both sides ran in the same process, on the same machine state (CPU
// frequency, cache, other load), one right after the other. Each point
// registers its core, oracle and sort benchmarks next to each other.
//
// Benchmark names: <what>/<workload>/G:<total_gpus>/n:<samples>. Time is
// Google Benchmark's CPU time (the thread's), which for this single-threaded
// code is the wall time minus any time other processes took the CPU.
// Counters (see docs/performance.md):
//   per_sample    CPU time per sample (seconds; the batch time over n);
//   microbatches  microbatches in the schedule (a sanity value: core and
//                 oracle must agree);
//   peak_MiB      peak heap growth during one call, result included
//                 (core and sort; counted by bench/heap_tracker.h in a
//                 separate, untimed call);
//   allocs        operator new calls in that call.
//
// The benchmarks of the compact form (adversarial batches, the per-rank
// call against the full call) are registered from bench/compact_bench.h.
//
// Besides Google Benchmark's flags, the binary takes
//   --oracle_points=auto|all|none   where the oracle runs (default auto:
//                                   the points of OracleRunsAt).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "bench/compact_bench.h"
#include "bench/heap_tracker.h"
#include "benchmark/benchmark.h"
#include "core/packing_aware.h"
#include "core/types.h"
#include "io/workload.h"
#include "oracle/reference_oracle.h"

namespace dcpsched::bench {
namespace {

// Upstream's benchmark setting (benchmark_dcp.sh): a 2048-token budget per
// rank, no minimum CP size beyond 1, no virtual pipeline.
constexpr std::int64_t kMaxSeqLenPerRank = 2048;

constexpr double kBytesPerMiB = 1024.0 * 1024.0;

// One benchmark point: a workload preset, G and n.
struct BenchPoint {
  std::string workload_name;   // "benchmark" or "skewed"
  LognormalWorkload workload;  // num_samples is n
  std::int64_t total_gpus = 0;
};

std::int64_t SampleCount(const BenchPoint& point) {
  return point.workload.num_samples;
}

BenchPoint MakePoint(std::string workload_name, LognormalWorkload workload,
                     std::int64_t total_gpus, std::int64_t num_samples) {
  workload.num_samples = num_samples;
  return {std::move(workload_name), workload, total_gpus};
}

// n for one G: the grid's 2G, 8G, 16384 and 65536, plus 2048 and 8192, the
// batch sizes upstream quotes its own times for. Sorted, without repeats.
std::vector<std::int64_t> SampleCountsFor(std::int64_t total_gpus) {
  std::vector<std::int64_t> counts = {2 * total_gpus, 8 * total_gpus, 2048,
                                      8192,           16384,          65536};
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

// Every G x n of the grid on the benchmark workload, then a few points of
// the skewed workload (mean 768, sigma 1.8).
std::vector<BenchPoint> BenchmarkGrid() {
  std::vector<BenchPoint> points;
  for (const std::int64_t total_gpus : {8, 64, 512, 4096}) {
    for (const std::int64_t num_samples : SampleCountsFor(total_gpus)) {
      points.push_back(MakePoint("benchmark", DcpBenchmarkWorkload(),
                                 total_gpus, num_samples));
    }
  }
  const std::pair<std::int64_t, std::int64_t> skewed_points[] = {
      {64, 2048}, {512, 8192}, {4096, 65536}};
  for (const auto& [total_gpus, num_samples] : skewed_points) {
    points.push_back(MakePoint("skewed", SkewedDcpBenchmarkWorkload(),
                               total_gpus, num_samples));
  }
  return points;
}

// The oracle's skip rule: it runs where one call takes at most ~20 s of CPU
// time on the development machine. Its cost grows about as n^2 at small G
// and faster still with G; measured (docs/performance.md, "Method"), the
// largest such n is 65536 up to G = 64 (17 s), 16384 at G = 512 (7 s; 41 s
// at 65536) and 2048 at G = 4096 (4.4 s; 38 s at 8192).
std::int64_t OracleMaxSamples(std::int64_t total_gpus) {
  if (total_gpus <= 64) return 65536;
  if (total_gpus <= 512) return 16384;
  return 2048;
}

bool OracleRunsAt(const BenchPoint& point) {
  return SampleCount(point) <= OracleMaxSamples(point.total_gpus);
}

DynamicCpOptions OptionsFor(const BenchPoint& point) {
  DynamicCpOptions options;
  options.total_gpus = point.total_gpus;
  options.max_seq_len_per_rank = kMaxSeqLenPerRank;
  options.min_cp_size = 1;
  return options;
}

std::string BenchmarkName(std::string_view what, const BenchPoint& point) {
  return absl::StrFormat("%s/%s/G:%d/n:%d", what, point.workload_name,
                         point.total_gpus, SampleCount(point));
}

// The point's batch, or an error already reported to `state`.
absl::StatusOr<std::vector<Sample>> GenerateBatch(benchmark::State& state,
                                                  const BenchPoint& point) {
  absl::StatusOr<std::vector<Sample>> batch =
      GenerateLognormalWorkload(point.workload);
  if (!batch.ok()) state.SkipWithError(batch.status().ToString().c_str());
  return batch;
}

void SetPerSampleCounter(benchmark::State& state, const BenchPoint& point) {
  state.counters["per_sample"] =
      benchmark::Counter(static_cast<double>(SampleCount(point)),
                         benchmark::Counter::kIsIterationInvariantRate |
                             benchmark::Counter::kInvert);
}

void SetHeapCounters(benchmark::State& state, const HeapUsage& usage) {
  state.counters["peak_MiB"] =
      static_cast<double>(usage.peak_bytes) / kBytesPerMiB;
  state.counters["allocs"] = static_cast<double>(usage.allocations);
}

void SetMicrobatchCounter(benchmark::State& state, const Schedule& schedule) {
  state.counters["microbatches"] =
      static_cast<double>(schedule.microbatches.size());
}

// Times `schedule_batch` (samples, options) -> StatusOr<Schedule> on the
// point's batch. With `measure_heap`, one extra untimed call first measures
// its heap use.
template <typename ScheduleBatch>
void TimeScheduler(benchmark::State& state, const BenchPoint& point,
                   ScheduleBatch schedule_batch, bool measure_heap) {
  const absl::StatusOr<std::vector<Sample>> batch = GenerateBatch(state, point);
  if (!batch.ok()) return;
  const DynamicCpOptions options = OptionsFor(point);
  if (measure_heap) {
    SetHeapCounters(state, MeasureHeapUsage([&] {
                      absl::StatusOr<Schedule> result =
                          schedule_batch(*batch, options);
                      benchmark::DoNotOptimize(result);
                    }));
  }
  absl::StatusOr<Schedule> schedule;
  for (auto _ : state) {
    schedule = schedule_batch(*batch, options);
    benchmark::DoNotOptimize(schedule);
  }
  if (!schedule.ok()) {
    state.SkipWithError(schedule.status().ToString().c_str());
    return;
  }
  SetMicrobatchCounter(state, *schedule);
  SetPerSampleCounter(state, point);
}

void BM_Core(benchmark::State& state, const BenchPoint& point) {
  TimeScheduler(
      state, point,
      [](absl::Span<const Sample> samples, const DynamicCpOptions& options) {
        return ScheduleDynamicCp(samples, options);
      },
      /*measure_heap=*/true);
}

void BM_Oracle(benchmark::State& state, const BenchPoint& point) {
  TimeScheduler(
      state, point,
      [](absl::Span<const Sample> samples, const DynamicCpOptions& options) {
        return oracle::ReferenceScheduleDynamicCp(samples, options);
      },
      /*measure_heap=*/false);
}

// The floor: copy the batch and order it longest first, equal lengths in
// input order (the order every step of the scheduler consumes).
std::vector<Sample> SortedLongestFirst(const std::vector<Sample>& batch) {
  std::vector<Sample> sorted = batch;
  std::stable_sort(
      sorted.begin(), sorted.end(),
      [](const Sample& a, const Sample& b) { return a.len > b.len; });
  return sorted;
}

void BM_Sort(benchmark::State& state, const BenchPoint& point) {
  const absl::StatusOr<std::vector<Sample>> batch = GenerateBatch(state, point);
  if (!batch.ok()) return;
  SetHeapCounters(state, MeasureHeapUsage([&] {
                    std::vector<Sample> sorted = SortedLongestFirst(*batch);
                    benchmark::DoNotOptimize(sorted.data());
                  }));
  for (auto _ : state) {
    std::vector<Sample> sorted = SortedLongestFirst(*batch);
    benchmark::DoNotOptimize(sorted.data());
    benchmark::ClobberMemory();
  }
  SetPerSampleCounter(state, point);
}

enum class OraclePoints { kAuto, kAll, kNone };

using BenchFunction = void (*)(benchmark::State&, const BenchPoint&);

void Register(std::string_view what, BenchFunction function,
              const BenchPoint& point) {
  benchmark::RegisterBenchmark(
      BenchmarkName(what, point).c_str(),
      [function, point](benchmark::State& state) { function(state, point); })
      ->Unit(benchmark::kMicrosecond);
}

void RegisterAll(OraclePoints oracle_points) {
  for (const BenchPoint& point : BenchmarkGrid()) {
    Register("core", BM_Core, point);
    const bool with_oracle =
        oracle_points == OraclePoints::kAll ||
        (oracle_points == OraclePoints::kAuto && OracleRunsAt(point));
    if (with_oracle) Register("oracle", BM_Oracle, point);
    Register("sort", BM_Sort, point);
  }
}

constexpr std::string_view kOraclePointsFlag = "--oracle_points=";

// Takes --oracle_points=... out of argv. False (with a message) when its
// value is not auto, all or none.
bool ParseOraclePoints(int& argc, char** argv, OraclePoints& oracle_points) {
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view argument = argv[i];
    if (!argument.starts_with(kOraclePointsFlag)) {
      argv[kept++] = argv[i];
      continue;
    }
    const std::string_view value = argument.substr(kOraclePointsFlag.size());
    if (value == "auto") {
      oracle_points = OraclePoints::kAuto;
    } else if (value == "all") {
      oracle_points = OraclePoints::kAll;
    } else if (value == "none") {
      oracle_points = OraclePoints::kNone;
    } else {
      std::cerr << "packing_aware_bench: --oracle_points is '" << value
                << "'; it must be auto, all or none\n";
      return false;
    }
  }
  argc = kept;
  return true;
}

}  // namespace
}  // namespace dcpsched::bench

int main(int argc, char** argv) {
  dcpsched::bench::OraclePoints oracle_points =
      dcpsched::bench::OraclePoints::kAuto;
  if (!dcpsched::bench::ParseOraclePoints(argc, argv, oracle_points)) return 2;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  dcpsched::bench::RegisterAll(oracle_points);
  dcpsched::bench::RegisterCompactBenchmarks();
  // Zero when the filter matched nothing (Google Benchmark says so).
  const std::size_t benchmarks_run = benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return benchmarks_run == 0 ? 1 : 0;
}
