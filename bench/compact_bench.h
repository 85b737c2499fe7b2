// Benchmarks of the compact form (core/compact_schedule.h), registered into
// packing_aware_bench so that their figures come from the same run as the
// rest of docs/performance.md:
//   compact/<distribution>/G:<G>/n:<n>   the compact scheduler on an
//       adversarial batch (bench/adversarial_batches.h): time and peak heap;
//   rank_view/benchmark/G:<G>/n:<n>      the per-rank call: the compact
//       schedule, then one rank's lists (RankIds), as each rank of a
//       Megatron-LM job needs them;
//   full/benchmark/G:<G>/n:<n>           the full call: the per-rank
//       Schedule of every rank (ScheduleDynamicCp), on the same batch.
// Counters as in packing_aware_bench.cc (per_sample, microbatches,
// peak_MiB, allocs), plus groups: CP groups in the schedule.

#ifndef DCPSCHED_BENCH_COMPACT_BENCH_H_
#define DCPSCHED_BENCH_COMPACT_BENCH_H_

namespace dcpsched::bench {

void RegisterCompactBenchmarks();

}  // namespace dcpsched::bench

#endif  // DCPSCHED_BENCH_COMPACT_BENCH_H_
