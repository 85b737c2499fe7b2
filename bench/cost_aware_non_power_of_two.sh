#!/bin/bash
# Lognormal batches at G that packing-aware's runtime groups handle badly
# (G = 14 and G = 6, vpp 4): for seeds 1..50 of `dcpsched schedule
# --total-gpus G --vpp 4 --samples 256` (upstream's benchmark workload,
# mslpr 2048), how many packing-aware refuses or fails, and whether
# cost_aware's schedule of each passes `dcpsched verify` (invariant 11
# included). Prints one line per G (docs/cost_aware.md).
#   bench/cost_aware_non_power_of_two.sh [DCPSCHED]
set -uo pipefail
dcpsched=${1:-build/rel/dcpsched}
for gpus in 14 6; do
  refused=0 verified=0 planned=0
  for seed in $(seq 1 50); do
    flags=(--total-gpus "$gpus" --vpp 4 --samples 256 --seed "$seed")
    if ! "$dcpsched" schedule "${flags[@]}" --format json --compact > /dev/null 2>&1; then
      refused=$((refused + 1))
      if "$dcpsched" schedule "${flags[@]}" --scheduler cost_aware \
           --cost-profile h200-llama3-8b --format json --compact 2> /dev/null |
         "$dcpsched" verify - > /dev/null 2>&1; then
        verified=$((verified + 1))
      fi
    fi
  done
  echo "G=$gpus vpp=4: packing_aware refuses or fails $refused of 50; cost_aware's schedule passes verify on $verified of those $refused"
done
