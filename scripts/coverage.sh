#!/usr/bin/env bash
# Source-based coverage of core/, layer by layer (docs/coverage.md).
#
# Builds the suite with clang-14 -fprofile-instr-generate -fcoverage-mapping
# into build/coverage, runs each layer of the suite on its own with its own
# LLVM_PROFILE_FILE, merges each layer's profiles with llvm-profdata-14 and
# reports core/'s line, branch and region coverage with llvm-cov-14:
#
#   unit        ctest label unit, without golden_test and mutant_files
#   properties  ctest label properties (RapidCheck)
#   corpus      ctest label corpus (fuzz_*_replay: every stored fuzz input)
#   golden      golden_test (the upstream vectors)
#
# and every layer but golden together. The python, install and bench labels
# are not layers of this measurement: they run the core through the Python
# module, an installed copy or benchmarks, none of them instrumented here.
#
# Then it lists core/'s uncovered lines and branches without golden and
# writes the table to docs/coverage.md. Uncovered lines named in
# scripts/coverage_unreachable.txt are reported with their reason; any other
# uncovered line is a gap in the suite. Exit status 0: no gap, every entry
# of that file names uncovered code, and branch coverage without golden
# >= 98%; 1: otherwise, or a test failed; 2: bad usage or a missing tool.
#
# With --mcdc it measures modified condition/decision coverage instead: it
# builds with clang-19 -fprofile-instr-generate -fcoverage-mapping
# -fcoverage-mcdc into build/coverage-mcdc, runs the same layers, merges them
# with llvm-profdata-19 and reports (scripts/mcdc_report.py, llvm-cov-19)
# core/'s MC/DC without golden (unit + properties + corpus) and for
# properties + corpus alone, lists every condition not shown to flip its
# decision on its own, and rewrites the MC/DC section of docs/coverage.md.
# Conditions named in scripts/mcdc_unreachable.txt are reported with their
# reason. Exit status 0: no other uncovered condition and every entry of that
# file names one; 1: otherwise, or a test failed; 2: bad usage or a missing
# tool.
#
# Not part of scripts/test.sh: a nightly job, about 8 minutes on 2 cores from
# a fresh build directory and under a minute when the build is warm. With
# --mcdc, the fresh clang-19 build took 25 minutes (14 minutes of CPU) and a
# warm run 2 to 7 minutes, with other builds sharing the 2 cores.
#
#   scripts/coverage.sh                  # build, run every layer, report, write docs
#   scripts/coverage.sh --no-build       # reuse the build in build/coverage
#   scripts/coverage.sh --no-docs        # report only, leave docs/coverage.md alone
#   scripts/coverage.sh --build-dir DIR  # another build directory
#   scripts/coverage.sh --mcdc           # MC/DC with clang-19 (build/coverage-mcdc)
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=
do_build=1
mcdc=0
docs_args=(--docs docs/coverage.md)
jobs=${DCPSCHED_JOBS:-$(nproc)}

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}

while (($#)); do
  case $1 in
    --no-build) do_build=0 ;;
    --mcdc) mcdc=1 ;;
    --no-docs) docs_args=() ;;
    --build-dir)
      [[ $# -ge 2 ]] || { echo "coverage: --build-dir needs a directory" >&2; exit 2; }
      build_dir=$2
      shift
      ;;
    -h | --help) usage; exit 0 ;;
    *) echo "coverage: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

if ((mcdc)); then
  llvm=19
  : "${build_dir:=build/coverage-mcdc}"
  coverage_flags="-fprofile-instr-generate -fcoverage-mapping -fcoverage-mcdc"
  what="clang-$llvm source-based coverage with MC/DC"
else
  llvm=14
  : "${build_dir:=build/coverage}"
  coverage_flags="-fprofile-instr-generate -fcoverage-mapping"
  what="clang-$llvm source-based coverage"
fi
profdata=llvm-profdata-$llvm

for tool in "clang++-$llvm" "llvm-cov-$llvm" "$profdata"; do
  command -v "$tool" >/dev/null || {
    echo "coverage: $tool not found; run scripts/install_deps.sh (clang-$llvm, libclang-rt-$llvm-dev, llvm-$llvm)" >&2
    exit 2
  }
done

if ((do_build)); then
  echo "=== $build_dir: configure and build with $what"
  CC=clang-$llvm CXX=clang++-$llvm cmake -S . -B "$build_dir" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDCPSCHED_WERROR=ON \
    -DDCPSCHED_BENCH=OFF -DDCPSCHED_PYTHON=OFF \
    "-DCMAKE_CXX_FLAGS=$coverage_flags" \
    "-DCMAKE_EXE_LINKER_FLAGS=-fprofile-instr-generate" >/dev/null
  cmake --build "$build_dir" -j "$jobs"
fi

profiles=$(realpath -m "$build_dir")/profiles
rm -rf "$profiles"
mkdir -p "$profiles"

# run_layer NAME CTEST-SELECTION...: runs the selected tests with one raw
# profile per process (%p) and binary (%m), then merges them into NAME.profdata.
run_layer() {
  local layer=$1
  shift
  echo "=== layer $layer: ctest $*"
  mkdir -p "$profiles/$layer"
  local log=$profiles/$layer.log
  if ! LLVM_PROFILE_FILE="$profiles/$layer/%m-%p.profraw" \
    ctest --test-dir "$build_dir" -j "$jobs" --output-on-failure --timeout 900 "$@" \
    >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "coverage: layer $layer failed (log: $log)" >&2
    exit 1
  fi
  grep -E 'tests passed|tests failed' "$log"
  local raw=("$profiles/$layer"/*.profraw)
  [[ -e ${raw[0]} ]] || { echo "coverage: layer $layer wrote no profile" >&2; exit 1; }
  "$profdata" merge -sparse "${raw[@]}" -o "$profiles/$layer.profdata"
  rm -rf "${profiles:?}/$layer"
}

run_layer unit -L '^unit$' -E '^(golden_test|mutant_files)$'
run_layer properties -L '^properties$'
run_layer corpus -L '^corpus$'
run_layer golden -R '^golden_test$'
"$profdata" merge -sparse "$profiles"/{unit,properties,corpus}.profdata \
  -o "$profiles/without_golden.profdata"

# Every instrumented program of the build: the test, property and replay
# binaries and the dcpsched program that cli_test runs.
mapfile -t objects < <(find "$build_dir" -maxdepth 1 -type f -perm -u+x | sort)

if ((mcdc)); then
  "$profdata" merge -sparse "$profiles"/{properties,corpus}.profdata \
    -o "$profiles/properties_corpus.profdata"
  commit=$(git rev-parse --short HEAD 2>/dev/null || true)
  # The page this run rewrites (the clang-14 run may just have) is no change
  # of what is measured.
  if [[ -n $commit ]] && ! git diff --quiet HEAD -- . ':!docs/coverage.md' 2>/dev/null; then
    commit="$commit plus uncommitted changes"
  fi
  exec /usr/bin/python3 scripts/mcdc_report.py \
    --profiles "$profiles" --sources core --commit "$commit" \
    --unreachable scripts/mcdc_unreachable.txt "${docs_args[@]}" \
    -- "${objects[@]}"
fi

/usr/bin/python3 scripts/coverage_report.py \
  --profiles "$profiles" --sources core \
  --unreachable scripts/coverage_unreachable.txt "${docs_args[@]}" \
  -- "${objects[@]}"
