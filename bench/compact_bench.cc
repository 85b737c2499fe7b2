#include "bench/compact_bench.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "bench/adversarial_batches.h"
#include "bench/heap_tracker.h"
#include "benchmark/benchmark.h"
#include "core/compact_schedule.h"
#include "core/packing_aware.h"
#include "core/types.h"
#include "io/workload.h"

namespace dcpsched::bench {
namespace {

constexpr std::int64_t kMaxSeqLenPerRank = 2048;
constexpr double kBytesPerMiB = 1024.0 * 1024.0;

DynamicCpOptions OptionsFor(std::int64_t total_gpus) {
  DynamicCpOptions options;
  options.total_gpus = total_gpus;
  options.max_seq_len_per_rank = kMaxSeqLenPerRank;
  return options;
}

void SetHeapCounters(benchmark::State& state, const HeapUsage& usage) {
  state.counters["peak_MiB"] =
      static_cast<double>(usage.peak_bytes) / kBytesPerMiB;
  state.counters["allocs"] = static_cast<double>(usage.allocations);
}

void SetPerSampleCounter(benchmark::State& state, std::size_t num_samples) {
  state.counters["per_sample"] =
      benchmark::Counter(static_cast<double>(num_samples),
                         benchmark::Counter::kIsIterationInvariantRate |
                             benchmark::Counter::kInvert);
}

void SetShapeCounters(benchmark::State& state,
                      const CompactSchedule& schedule) {
  double groups = 0.0;
  for (const CompactMicrobatch& microbatch : schedule.microbatches) {
    groups += static_cast<double>(microbatch.groups.size());
  }
  state.counters["microbatches"] =
      static_cast<double>(schedule.microbatches.size());
  state.counters["groups"] = groups;
}

// Times `call` () -> StatusOr<T> on one batch, after one untimed call under
// the heap tracker. Returns the last result.
template <typename Call>
auto TimeCall(benchmark::State& state, std::size_t num_samples, Call call)
    -> decltype(call()) {
  SetHeapCounters(state, MeasureHeapUsage([&] {
                    auto result = call();
                    benchmark::DoNotOptimize(result);
                  }));
  decltype(call()) result;
  for (auto _ : state) {
    result = call();
    benchmark::DoNotOptimize(result);
  }
  if (!result.ok()) {
    state.SkipWithError(result.status().ToString().c_str());
  } else {
    SetPerSampleCounter(state, num_samples);
  }
  return result;
}

void BM_Adversarial(benchmark::State& state, Distribution distribution,
                    std::int64_t total_gpus, std::int64_t num_samples) {
  const std::vector<Sample> batch =
      AdversarialBatch(distribution, num_samples, kMaxSeqLenPerRank);
  const DynamicCpOptions options = OptionsFor(total_gpus);
  const absl::StatusOr<CompactSchedule> schedule =
      TimeCall(state, batch.size(),
               [&] { return ScheduleDynamicCpCompact(batch, options); });
  if (schedule.ok()) SetShapeCounters(state, *schedule);
}

// The benchmark workload's batch of n samples (upstream's DCP benchmark).
std::vector<Sample> BenchmarkBatch(std::int64_t num_samples) {
  LognormalWorkload workload = DcpBenchmarkWorkload();
  workload.num_samples = num_samples;
  return GenerateLognormalWorkload(workload).value();
}

void BM_RankView(benchmark::State& state, std::int64_t total_gpus,
                 std::int64_t num_samples) {
  const std::vector<Sample> batch = BenchmarkBatch(num_samples);
  const DynamicCpOptions options = OptionsFor(total_gpus);
  const std::int64_t rank = total_gpus / 2;
  // The result is judged inside TimeCall; only its time matters here.
  static_cast<void>(TimeCall(
      state, batch.size(),
      [&]() -> absl::StatusOr<std::vector<std::vector<SampleId>>> {
             absl::StatusOr<CompactSchedule> schedule =
                 ScheduleDynamicCpCompact(batch, options);
             if (!schedule.ok()) return schedule.status();
             return RankIds(*schedule, rank);
      }));
}

void BM_Full(benchmark::State& state, std::int64_t total_gpus,
             std::int64_t num_samples) {
  const std::vector<Sample> batch = BenchmarkBatch(num_samples);
  const DynamicCpOptions options = OptionsFor(total_gpus);
  static_cast<void>(TimeCall(
      state, batch.size(), [&] { return ScheduleDynamicCp(batch, options); }));
}

std::string PointName(std::string_view what, std::string_view workload,
                      std::int64_t total_gpus, std::int64_t num_samples) {
  return absl::StrFormat("%s/%s/G:%d/n:%d", what, workload, total_gpus,
                         num_samples);
}

template <typename Function>
void Register(const std::string& name, Function function) {
  benchmark::RegisterBenchmark(name.c_str(), std::move(function))
      ->Unit(benchmark::kMillisecond);
}

}  // namespace

void RegisterCompactBenchmarks() {
  // Every distribution at G = 4096 with 16 samples per rank; the batch of
  // issue 14 (4096 samples of up to 2^26 tokens) at G = 65536.
  for (const Distribution distribution : kAllDistributions) {
    const bool huge = distribution == Distribution::kHuge;
    const std::int64_t total_gpus = huge ? 65536 : 4096;
    const std::int64_t num_samples = huge ? 4096 : 65536;
    Register(PointName("compact", DistributionName(distribution), total_gpus,
                       num_samples),
             [=](benchmark::State& state) {
               BM_Adversarial(state, distribution, total_gpus, num_samples);
             });
  }
  // The per-rank call against the full call, 8 samples per rank.
  for (const std::int64_t total_gpus : {4096, 16384, 65536}) {
    const std::int64_t num_samples = 8 * total_gpus;
    Register(PointName("rank_view", "benchmark", total_gpus, num_samples),
             [=](benchmark::State& state) {
               BM_RankView(state, total_gpus, num_samples);
             });
    Register(PointName("full", "benchmark", total_gpus, num_samples),
             [=](benchmark::State& state) {
               BM_Full(state, total_gpus, num_samples);
             });
  }
}

}  // namespace dcpsched::bench
