#!/usr/bin/env bash
# Re-minimizes and prunes every corpus, and re-checks every regression.
#
#   fuzz/regenerate_corpora.sh [TARGET...]
#
# For each target, the coverage corpus (the files directly in
# corpus/<target>/) is merged into an empty directory with -merge=1, keeping
# only inputs that add coverage, and replaces the old one. Named seeds
# (corpus/<target>/seeds/) and regressions (corpus/<target>/regressions/)
# are never pruned; every regression is run once more and must pass.
# Exit status 1 if a regression fails again.
set -euo pipefail
cd "$(dirname "$0")/.."

build=$(fuzz/build_fuzzers.sh)
targets=("$@")
if ((${#targets[@]} == 0)); then
  mapfile -t targets < <(find corpus -mindepth 1 -maxdepth 1 -type d -name 'fuzz_*' -printf '%f\n' | sort)
fi
failed=0
for target in "${targets[@]}"; do
  corpus=corpus/$target
  before=$(find "$corpus" -maxdepth 1 -type f | wc -l)
  input=$(mktemp -d) pruned=$(mktemp -d)
  find "$corpus" -maxdepth 1 -type f -exec cp {} "$input/" \;
  seeds=()
  [[ -d $corpus/seeds ]] && seeds=("$corpus/seeds")
  "$build/$target" -merge=1 "$pruned" "${seeds[@]}" "$input" >/dev/null 2>&1
  # Keep only what the seeds do not already cover.
  find "$corpus" -maxdepth 1 -type f -delete
  find "$pruned" -type f -exec cp {} "$corpus/" \;
  for seed in "$corpus"/seeds/*; do
    [[ -f $seed ]] && rm -f "$corpus/$(sha1sum "$seed" | cut -d' ' -f1)"
  done
  after=$(find "$corpus" -maxdepth 1 -type f | wc -l)
  echo "$target: corpus $before -> $after files"
  mapfile -t regressions < <(find "$corpus/regressions" -type f ! -name '.gitkeep' 2>/dev/null)
  if ((${#regressions[@]})); then
    if "$build/$target" "${regressions[@]}" >/dev/null 2>&1; then
      echo "$target: ${#regressions[@]} regressions pass"
    else
      echo "$target: a regression FAILS again: $build/$target ${regressions[*]}"
      failed=1
    fi
  fi
  rm -rf "$input" "$pruned"
done
exit "$failed"
