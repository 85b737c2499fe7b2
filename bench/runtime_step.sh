#!/bin/bash
# Builds runtime_step_bench in Release (build/opt) and prints the tables of
# docs/runtime_step.md: every scheduler's modelled step on the committed
# batches under the barrier model, without pipelining, with 1F1B at P = 2, 4
# and 8, and interleaved at P = 4, V = 2, under both shipped 8B profiles.
#   bench/runtime_step.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build/opt -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
ninja -C build/opt runtime_step_bench > /dev/null
build/opt/bench/runtime_step_bench "$@"
