#!/bin/bash
# Builds cost_aware_bench in Release (build/opt) and prints the tables of
# docs/cost_aware.md: step times of packing_aware and cost_aware on the
# committed batches under h200-llama3-8b and h200-llama3-70b-tp8, and the
# scheduling time of both on the G = 512 batch.
#   bench/cost_aware.sh [--repeats N]
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build/opt -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
ninja -C build/opt cost_aware_bench > /dev/null
build/opt/bench/cost_aware_bench "$@"
