#!/usr/bin/env bash
# Builds every libFuzzer target (fuzz/fuzz_*.cc -> fuzz_<what>) with clang-14,
# libFuzzer, ASan and UBSan into $DCPSCHED_FUZZ_BUILD (default build/fuzz),
# with fuzz_write_seeds (fuzz/README.md), and prints that directory.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${DCPSCHED_FUZZ_BUILD:-build/fuzz}
CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DDCPSCHED_FUZZ=ON -DDCPSCHED_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --target fuzzers fuzz_write_seeds -j "${DCPSCHED_JOBS:-$(nproc)}" >&2
echo "$build"
