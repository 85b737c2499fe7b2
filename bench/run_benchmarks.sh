#!/usr/bin/env bash
# Builds the benchmark suite in Release in its own build directory, runs
# every benchmark once and prints the markdown table of docs/performance.md.
#
#   bench/run_benchmarks.sh [packing_aware_bench flags...]
#
# e.g. bench/run_benchmarks.sh --benchmark_filter='G:64/'
#      bench/run_benchmarks.sh --benchmark_filter='^(compact|rank_view|full)/'
#                                           (the compact form's tables only)
#      bench/run_benchmarks.sh --benchmark_repetitions=5   (table: medians)
#      bench/run_benchmarks.sh --oracle_points=all          (oracle everywhere)
#
# Progress (Google Benchmark's console output) goes to stderr, the table to
# stdout, so `bench/run_benchmarks.sh > table.md` keeps just the table. The
# raw results stay in $DCPSCHED_BENCH_OUT.
#
# Environment: DCPSCHED_BENCH_BUILD (default build/bench-release),
# DCPSCHED_BENCH_OUT (default $DCPSCHED_BENCH_BUILD/packing_aware_bench.json),
# DCPSCHED_JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."

build=${DCPSCHED_BENCH_BUILD:-build/bench-release}
out=${DCPSCHED_BENCH_OUT:-$build/packing_aware_bench.json}

echo "=== $build: configure and build (Release)" >&2
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DDCPSCHED_BENCH=ON -DDCPSCHED_BUILD_TESTS=OFF >&2
cmake --build "$build" -j "${DCPSCHED_JOBS:-$(nproc)}" \
  --target packing_aware_bench bench_results_table >&2

echo "=== run: results in $out" >&2
"$build/bench/packing_aware_bench" --benchmark_out="$out" \
  --benchmark_out_format=json "$@" >&2

"$build/bench/bench_results_table" "$out"
