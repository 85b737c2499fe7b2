#!/usr/bin/env bash
# Runs fuzz targets for a bounded time each and keeps what they find.
#
#   fuzz/run_fuzzers.sh [-t SECONDS] [-p PARALLEL] [-j JOBS] [--no-merge]
#                       [--build DIR] [--cc CC] [--cxx CXX]
#                       [--corpus-root DIR] [TARGET...]
#
#   -t SECONDS   time per target (default $DCPSCHED_FUZZ_SECONDS or 60)
#   -p PARALLEL  targets run at once (default $DCPSCHED_FUZZ_PARALLEL or 1)
#   -j JOBS      libFuzzer -fork=JOBS workers per target (default 1: no fork)
#   --no-merge   do not add new coverage to the corpus (CI)
#   --build DIR  run the fuzzers already built in DIR (e.g. the $OUT of
#                fuzz/oss_fuzz_build_test.sh) instead of building them with
#                fuzz/build_fuzzers.sh (which builds only the TARGETs named,
#                into $DCPSCHED_FUZZ_BUILD, default build/fuzz)
#   --cc CC, --cxx CXX  the compilers fuzz/build_fuzzers.sh builds with
#   --corpus-root DIR  read, merge into and store findings under
#                DIR/<target>/ instead of corpus/<target>/ (e.g. a scratch
#                copy of corpus/, as the nightly tier does)
#   TARGET       fuzz_<what> names (default: every target)
#
# New inputs that add coverage are merged into <corpus-root>/<target>/ with
# -merge=1, so the corpus stays minimal. A crash, leak, timeout or sanitizer
# report goes through fuzz/import_finding.sh: minimized, stored as
# <corpus-root>/<target>/regressions/<what-broke>-<hash>, and the one-line
# command that reproduces it is printed. Exit status 1 if any target found
# anything.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${DCPSCHED_FUZZ_SECONDS:-60}
parallel=${DCPSCHED_FUZZ_PARALLEL:-1}
jobs=1
merge=1
build=""
root=corpus
targets=()
compilers=()
while (($#)); do
  case $1 in
    -t) seconds=$2; shift 2 ;;
    -p) parallel=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    --no-merge) merge=0; shift ;;
    --build) build=$2; shift 2 ;;
    --corpus-root) root=$2; shift 2 ;;
    --cc|--cxx) compilers+=("$1" "$2"); shift 2 ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done

[[ -n $build ]] || build=$(fuzz/build_fuzzers.sh "${compilers[@]}" "${targets[@]}")
if ((${#targets[@]} == 0)); then
  mapfile -t targets < <(find "$build" -maxdepth 1 -type f -executable -name 'fuzz_*' \
    ! -name '*_replay' ! -name 'fuzz_write_seeds' -printf '%f\n' | sort)
fi
work=$(mktemp -d /tmp/dcpsched-fuzz.XXXXXX)
echo "fuzzing ${#targets[@]} targets for ${seconds}s each ($parallel at a time); logs in $work"

fuzz_one() {
  local target=$1 corpus=$root/$1 new=$work/$1.new artifacts=$work/$1.artifacts log=$work/$1.log
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
  echo "$target: FOUND a crash (log $log)"
  fuzz/import_finding.sh --build "$build" --corpus-root "$root" "$target" "$artifact" || true
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
