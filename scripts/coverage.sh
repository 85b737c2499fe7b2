#!/usr/bin/env bash
# Source-based coverage of core/, layer by layer (docs/coverage.md).
#
# Builds the suite with clang-14 -fprofile-instr-generate -fcoverage-mapping
# (only the functions core/ defines are instrumented: CMakeLists.txt,
# -fprofile-list) into build/coverage, with the flags of the test command's
# sanitized build
# (ASan + UBSan, -O1 -g1: scripts/test.sh asan_args, so the default tier's
# asan stage compiles exactly what this build compiles), runs each layer of the suite on its own with its own
# LLVM_PROFILE_FILE, merges each layer's profiles with llvm-profdata-14 and
# reports core/'s line, branch and region coverage with llvm-cov-14:
#
#   unit        ctest label unit, without golden_test: the unit_tests
#               program as a few processes (scripts/gtest_program.py: under
#               ASan and coverage a process per test costs more than most
#               of these tests take), the other tests through ctest
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
# The test command (scripts/test.sh) enforces the same gate on every run: its
# sanitized clang-14 build also carries the coverage instrumentation
# (-DDCPSCHED_COVERAGE=ON), and it runs this script on that build with
# --no-build --no-docs. This script's own build, and the MC/DC run, are
# nightly (scripts/test.sh --nightly); the test command compiles core/ with
# the MC/DC flags (--target dcpsched_core_compile_check: core/ as one
# translation unit) so that a change that breaks that
# build fails at once.
#
#   scripts/coverage.sh                  # build, run every layer, report, write docs
#   scripts/coverage.sh --no-build       # reuse the build in build/coverage
#   scripts/coverage.sh --no-docs        # report only, leave docs/coverage.md alone
#   scripts/coverage.sh --build-dir DIR  # another build directory
#   scripts/coverage.sh --mcdc           # MC/DC with clang-19 (build/coverage-mcdc)
#   scripts/coverage.sh --target T       # configure and build target T alone; run nothing
#   scripts/coverage.sh --no-report      # build and run the layers, no report
#   scripts/coverage.sh --no-run         # report on the profiles of an earlier run
#
# Every layer runs even if an earlier one failed; each layer's ctest log is
# PROFILES/<layer>.log (PROFILES is BUILD/profiles), and unit_tests' log
# PROFILES/unit-unit_tests.log.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=
do_build=1
build_target=
do_run=1
do_report=1
mcdc=0
docs_args=(--docs docs/coverage.md)
jobs=${DCPSCHED_JOBS:-$(nproc)}

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}

while (($#)); do
  case $1 in
    --no-build) do_build=0 ;;
    --no-run) do_run=0 ;;
    --no-report) do_report=0 ;;
    --mcdc) mcdc=1 ;;
    --no-docs) docs_args=() ;;
    --target)
      [[ $# -ge 2 ]] || { echo "coverage: --target needs a target name" >&2; exit 2; }
      build_target=$2
      shift
      ;;
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
  coverage=MCDC
  build_flags=()
  what="clang-$llvm source-based coverage with MC/DC"
else
  llvm=14
  : "${build_dir:=build/coverage}"
  coverage=ON
  # scripts/test.sh's sanitized_args: keep the two the same.
  build_flags=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DDCPSCHED_SANITIZE=ON)
  what="clang-$llvm source-based coverage (ASan + UBSan build)"
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
    "${build_flags[@]}" -DDCPSCHED_COVERAGE=$coverage >/dev/null
  if [[ -n $build_target ]]; then
    exec cmake --build "$build_dir" -j "$jobs" --target "$build_target"
  fi
  cmake --build "$build_dir" -j "$jobs"
elif [[ -n $build_target ]]; then
  echo "coverage: --target builds; it does not go with --no-build" >&2
  exit 2
fi

profiles=$(realpath -m "$build_dir")/profiles

# run_layer NAME [--program PROGRAM] CTEST-SELECTION...: runs the selected
# tests, with --program those of the GoogleTest program PROGRAM of the build
# as $jobs processes (scripts/gtest_program.py; its log NAME-PROGRAM.log) and
# the others through ctest, each
# process merging its counts into a pool of 4 raw profiles per binary (%4m:
# the profile runtime's online merging, under a file lock), then merges
# those into NAME.profdata. One raw profile per process would write and
# merge several megabytes for each of the hundreds of test processes.
run_layer() {
  local layer=$1 program=
  shift
  if [[ ${1:-} == --program ]]; then
    program=$2
    shift 2
  fi
  echo "=== layer $layer: ctest $*${program:+, $program as $jobs processes}"
  mkdir -p "$profiles/$layer"
  local log=$profiles/$layer.log
  if [[ -n $program ]]; then
    # ctest runs the selection's other tests; the program runs its own.
    set -- "$@" -R "$(scripts/gtest_program.py --others-in "$build_dir" \
      "$build_dir/$program" "$@")"
  fi
  if ! LLVM_PROFILE_FILE="$profiles/$layer/%4m.profraw" \
    ctest --test-dir "$build_dir" -j "$jobs" --output-on-failure --timeout 900 "$@" \
    >"$log" 2>&1; then
    grep -E '^[0-9]+% tests passed|\(Failed\)|\(Timeout\)|\(SEGFAULT\)|\*\*\*' "$log" | tail -n 40
    echo "coverage: layer $layer failed (log: $log)" >&2
    layers_failed=$((layers_failed + 1))
  fi
  grep -E 'tests passed|tests failed' "$log"
  if [[ -n $program ]]; then
    local program_log=$profiles/$layer-$program.log
    if ! LLVM_PROFILE_FILE="$profiles/$layer/%4m.profraw" \
      scripts/gtest_program.py --shards "$jobs" --timeout 900 "$build_dir/$program" \
      >"$program_log" 2>&1; then
      grep -E '^[0-9]+% tests passed|\*\*\*Failed|no result' "$program_log" | tail -n 40
      echo "coverage: layer $layer failed in $program (log: $program_log)" >&2
      layers_failed=$((layers_failed + 1))
    fi
    grep -E 'tests passed|tests failed' "$program_log"
  fi
  local raw=("$profiles/$layer"/*.profraw)
  if [[ ! -e ${raw[0]} ]]; then
    echo "coverage: layer $layer wrote no profile" >&2
    layers_failed=$((layers_failed + 1))
    return
  fi
  "$profdata" merge -sparse "${raw[@]}" -o "$profiles/$layer.profdata"
  rm -rf "${profiles:?}/$layer"
}

# run_layers: every layer, each even if an earlier one failed.
run_layers() {
  rm -rf "$profiles"
  mkdir -p "$profiles"
  layers_failed=0
  run_layer unit --program unit_tests -L '^unit$' -E '^golden_test$'
  run_layer properties -L '^properties$'
  run_layer corpus -L '^corpus$'
  run_layer golden -R '^golden_test$'
  if ((layers_failed)); then
    echo "coverage: $layers_failed layer(s) failed; no report" >&2
    exit 1
  fi
}

if ((do_run)); then run_layers; fi
((do_report)) || exit 0
for layer in unit properties corpus golden; do
  [[ -f $profiles/$layer.profdata ]] || {
    echo "coverage: no profile of layer $layer in $profiles (run the layers first)" >&2
    exit 1
  }
done
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
