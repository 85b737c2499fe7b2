#!/usr/bin/env bash
# Runs fuzz targets for a bounded time each and keeps what they find.
#
#   fuzz/run_fuzzers.sh [-t SECONDS] [-p PARALLEL] [-j JOBS] [--no-merge] [TARGET...]
#
#   -t SECONDS   time per target (default $DCPSCHED_FUZZ_SECONDS or 60)
#   -p PARALLEL  targets run at once (default $DCPSCHED_FUZZ_PARALLEL or 1)
#   -j JOBS      libFuzzer -fork=JOBS workers per target (default 1: no fork)
#   --no-merge   do not add new coverage to corpus/ (CI)
#   TARGET       fuzz_<what> names (default: every target built)
#
# New inputs that add coverage are merged into corpus/<target>/ with
# -merge=1, so the corpus stays minimal. A crash, leak, timeout or sanitizer
# report is minimized (-minimize_crash=1), stored as
# corpus/<target>/regressions/<what-broke>-<hash>, and the one-line command
# that reproduces it is printed. Exit status 1 if any target found anything.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${DCPSCHED_FUZZ_SECONDS:-60}
parallel=${DCPSCHED_FUZZ_PARALLEL:-1}
jobs=1
merge=1
targets=()
while (($#)); do
  case $1 in
    -t) seconds=$2; shift 2 ;;
    -p) parallel=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    --no-merge) merge=0; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done

build=$(fuzz/build_fuzzers.sh)
if ((${#targets[@]} == 0)); then
  mapfile -t targets < <(find "$build" -maxdepth 1 -type f -executable -name 'fuzz_*' \
    ! -name '*_replay' ! -name 'fuzz_write_seeds' -printf '%f\n' | sort)
fi
work=$(mktemp -d /tmp/dcpsched-fuzz.XXXXXX)
echo "fuzzing ${#targets[@]} targets for ${seconds}s each ($parallel at a time); logs in $work"

# A short name for what broke, from the fuzzer's log.
what_broke() {
  local log=$1 line
  line=$(grep -m1 -oE 'dcpsched [a-z_]+: [^:]+' "$log" | sed 's/^dcpsched [a-z_]*: //' || true)
  [[ -z $line ]] && line=$(grep -m1 -oE 'SUMMARY: [A-Za-z]+Sanitizer: [a-z-]+' "$log" | awk '{print $3}' || true)
  [[ -z $line ]] && grep -q 'ERROR: libFuzzer: timeout' "$log" && line=timeout
  [[ -z $line ]] && grep -q 'out-of-memory' "$log" && line=out-of-memory
  [[ -z $line ]] && grep -q 'detected memory leaks' "$log" && line=leak
  [[ -z $line ]] && line=crash
  echo "$line" | tr 'A-Z' 'a-z' | tr -cs 'a-z0-9' '-' | sed 's/^-//; s/-$//' | cut -c1-48
}

fuzz_one() {
  local target=$1 corpus=corpus/$1 new=$work/$1.new artifacts=$work/$1.artifacts log=$work/$1.log
  mkdir -p "$corpus/regressions" "$new" "$artifacts"
  local options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
                 -artifact_prefix="$artifacts/")
  [[ -f corpus/$target.dict ]] && options+=(-dict="corpus/$target.dict")
  ((jobs > 1)) && options+=(-fork="$jobs")
  if "$build/$target" "${options[@]}" "$new" "$corpus" >"$log" 2>&1; then
    if ((merge)); then
      "$build/$target" -merge=1 "$corpus" "$new" >>"$log" 2>&1
    fi
    echo "$target: ok ($(grep -m1 -oE 'stat::number_of_executed_units: [0-9]+' "$log" | awk '{print $2}') runs)"
    return 0
  fi
  local artifact
  artifact=$(find "$artifacts" -type f | head -n1)
  if [[ -z $artifact ]]; then
    echo "$target: FAILED without an artifact; see $log"
    return 1
  fi
  local minimized=$work/$target.minimized
  "$build/$target" -minimize_crash=1 -runs=20000 -timeout=10 \
    -exact_artifact_path="$minimized" "$artifact" >>"$log" 2>&1 || true
  [[ -s $minimized ]] || minimized=$artifact
  local name
  name="$(what_broke "$log")-$(sha1sum "$minimized" | cut -c1-10)"
  cp "$minimized" "$corpus/regressions/$name"
  echo "$target: FOUND $(what_broke "$log"); stored corpus/$target/regressions/$name"
  echo "  reproduce: $build/$target corpus/$target/regressions/$name"
  return 1
}

failed=0
running=0
for target in "${targets[@]}"; do
  if ((running >= parallel)); then
    wait -n || failed=1
    running=$((running - 1))
  fi
  fuzz_one "$target" &
  running=$((running + 1))
done
while ((running > 0)); do
  wait -n || failed=1
  running=$((running - 1))
done
if ((failed)); then
  echo "fuzzing found problems (logs in $work)"
  exit 1
fi
echo "fuzzing: no findings"
