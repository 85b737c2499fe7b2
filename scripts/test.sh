#!/usr/bin/env bash
# The project's test command (README "Run the tests"; .ci/run calls it).
#
#   scripts/test.sh             the default tier: every push, CI
#   scripts/test.sh --nightly   the default tier, then the nightly additions
#   scripts/test.sh --nightly --shard K/12   one shard of the nightly tier
#   scripts/test.sh --nightly --report DIR   one mutation report over the
#                                            mutation shards' caches under DIR
#
# Default tier, in build directories under $DCPSCHED_BUILD_ROOT (default
# build/). Its stages run in three lanes at once, each a chain of stages
# (the 2 cores are kept busy while one lane links or waits on a long test):
#   lane release:  release
#   lane asan:     asan, coverage-gate
#   lane fuzz:     oss-fuzz, import, fuzz, nightly-builds
#   release       g++ release build with -Werror (ci-release); every ctest
#                 test: unit, golden, properties, corpus replay, CLI, Python,
#                 install consumer, benchmark smoke, the CI configuration
#                 test and schedule_digest
#   asan          the same built with clang-14 under AddressSanitizer +
#                 UndefinedBehaviorSanitizer (ci-asan), without the
#                 benchmarks, with each property at 300 cases (release:
#                 1000), and with clang's source-based coverage; the
#                 unit, properties, corpus and golden layers run through
#                 scripts/coverage.sh (one profile each; the unit_tests
#                 program as $jobs processes, not one per test,
#                 scripts/gtest_program.py), the other tests in one more
#                 ctest run; it is also the clang-14 build of
#                 schedule_digest (the specification's invariant 9 across
#                 compilers)
#   coverage-gate core/'s coverage without golden from those profiles
#                 (scripts/coverage.sh --no-run): no uncovered line that
#                 scripts/coverage_unreachable.txt does not name, and at least
#                 98% of the recordable branch outcomes; one check
#   oss-fuzz      .clusterfuzzlite/build.sh run as the OSS-Fuzz builder runs
#                 it, and its $OUT checked as check_build does
#                 (fuzz/oss_fuzz_build_test.sh, oss-fuzz/)
#   import        fuzz/import_finding.sh on a planted failing input
#                 (fuzz/import_finding_test.sh, in the oss-fuzz/ build tree)
#   nightly-builds  core/ compiled as one translation unit
#                 (dcpsched_core_compile_check, nothing run) with the
#                 compiler and flags of each nightly build the default tier
#                 does not already make: asan-gcc, digest-builds' clang-14
#                 release and g++ -O0 Debug (these two front end only:
#                 -fsyntax-only, all their warnings), nightly-fuzz's instrumented
#                 clang-14 and coverage-mcdc's clang-19 MC/DC
#                 (nightly-builds/; coverage's clang-14 build has the asan
#                 stage's flags); one check each, so a change that breaks a
#                 nightly build fails here
#   fuzz          every libFuzzer target in that $OUT (ASan) for
#                 $DCPSCHED_FUZZ_SECONDS (default 30) each, two at a time,
#                 corpus/ untouched; a finding fails the run and is stored,
#                 minimized, under corpus/<target>/regressions/. The
#                 fuzzers share the cores with the other lanes' builds and
#                 tests: each runs its time, with fewer inputs than alone
# Nightly additions:
#   nightly-fuzz  every target, built with ASan + UBSan (ci-fuzz), for
#                 $DCPSCHED_NIGHTLY_FUZZ_SECONDS (default 600) each, merging
#                 into a scratch copy of the corpus (nightly/corpus); what it
#                 found that corpus/ lacks goes to nightly/new/corpus/ in the
#                 corpus/ layout (fuzz/collect_new_inputs.sh)
#   properties    every RapidCheck property at $DCPSCHED_NIGHTLY_PROPERTY_CASES
#                 (default 100000) cases, from the release build's
#                 property_tests, in as many GoogleTest shards at once as
#                 there are cores
#   asan-gcc      the default tier's asan stage built with g++ (ci-asan-gcc)
#   fuzz-one      fuzz/run_fuzzers.sh asked for one target in a new build
#                 directory, as a user's CI calls it: builds that one alone
#                 (ASan + UBSan, clang++-14 given by --cxx) and fuzzes it for
#                 5 s (fuzz/run_fuzzers_test.sh, run-fuzzers-test/); nightly,
#                 since the build from nothing takes about 2 minutes on 2 cores
#   digest-builds schedule_digest alone in a clang-14 release build
#                 (ci-clang) and a g++ -O0 Debug build (ci-debug)
#   distributed   the distributed harness's tests with W = 8 and W = 12 gloo
#                 processes (python/tests/test_distributed.py,
#                 DCPSCHED_NIGHTLY_DISTRIBUTED=1; 12: G not a power of two),
#                 from the release build
#   exhaustive    tests/exhaustive_check.cc at the nightly sets
#                 (properties/problem_enumerator.h kNightlySets, 32355936
#                 problems), $jobs processes each a --part of them, from
#                 the release build; one pass or one failure per process
#   coverage      scripts/coverage.sh, when it exists
#   coverage-mcdc scripts/coverage.sh --mcdc: MC/DC with clang-19
#                 (build/coverage-mcdc)
#   mutation      the kill matrix (mutation/run_mutants.py --matrix, layers
#                 unit, properties, corpus, fuzz at
#                 $DCPSCHED_MUTATION_FUZZ_SECONDS, default 10, per target, and
#                 fuzz-empty, the targets from an empty corpus, at
#                 $DCPSCHED_MUTATION_FUZZ_EMPTY_SECONDS, default 60) of
#                 one of 3 disjoint stratified slices of the generated mutants
#                 (about 770 each; the slice is $DCPSCHED_MUTATION_SLICE, K/3,
#                 by default the day number mod 3 plus 1, so three nights in a
#                 row cover every mutant); report build/mutation-results*.md
#                 and its mutation-testing-elements JSON beside it
#
# --shard K/N (N = 12, the only count defined) runs one part of the nightly
# tier, each at most about 60 minutes on 2 cores (README "Nightly shards"):
#   1       the default tier, properties, digest-builds, distributed,
#           exhaustive
#   2       asan-gcc, fuzz-one, coverage, coverage-mcdc
#   3, 4    nightly-fuzz, each with every second fuzz target (sorted by name,
#           shard 3 the first)
#   5..12   mutation, shard K-4 of 8 of the night's slice (--shard, a disjoint
#           stratified part of it)
# Without --shard, --nightly runs all of it in one go.
#
# --report DIR runs only the mutation-report stage: every kill-matrix cache
# (<core hash>.matrix.jsonl) found under DIR, as the mutation shards leave
# them in build/mutation/cache, merged (mutation/run_mutants.py --merge-cache,
# same core only) into one report of every mutant that has a row for every
# layer at the shards' settings (--cache-only: nothing is built or run),
# build/mutation-results.md and its JSON; its selection line says how many of
# the generated mutants it covers.
#
# Every stage runs even if an earlier one failed (a stage whose build fails
# counts as one failure). The run ends with the stage table: each stage's
# wall and CPU time, for a build its compile and link time (ninja's steps,
# summed), for a test run its ten slowest tests; then the line
# "total: N passed, M failed" (ctest tests, the coverage gate, OSS-Fuzz
# targets checked, import checks, nightly builds, fuzz targets; nightly:
# properties, distributed, coverage, mutation), and it exits 1 if anything
# failed. Each lane's output is in <root>/lane-<name>.log, printed whole
# when the lane ends.
set -euo pipefail
cd "$(dirname "$0")/.."

NIGHTLY_SHARDS=12
usage() {
  echo "usage: scripts/test.sh [--nightly [--shard K/$NIGHTLY_SHARDS | --report DIR]]" >&2
  exit 2
}
nightly=0
shard=0
report_dir=
case ${1:-} in
  "") ;;
  --nightly) nightly=1 ;;
  -h|--help) sed -n '2,80p' "$0"; exit 0 ;;
  *) usage ;;
esac
if [[ ${2:-} == --shard ]]; then
  ((nightly && $# == 3)) || usage
  [[ ${3:-} =~ ^([0-9]+)/([0-9]+)$ ]] || usage
  shard=${BASH_REMATCH[1]}
  if ((BASH_REMATCH[2] != NIGHTLY_SHARDS || shard < 1 || shard > NIGHTLY_SHARDS)); then
    echo "scripts/test.sh: --shard K/$NIGHTLY_SHARDS, 1 <= K <= $NIGHTLY_SHARDS" \
         "(the shards are laid out for $NIGHTLY_SHARDS)" >&2
    exit 2
  fi
elif [[ ${2:-} == --report ]]; then
  ((nightly && $# == 3)) || usage
  report_dir=$3
  if [[ ! -d $report_dir ]]; then
    echo "scripts/test.sh: --report DIR: $report_dir is not a directory" >&2
    exit 2
  fi
elif (($# > 1)); then
  usage
fi

root=${DCPSCHED_BUILD_ROOT:-build}
jobs=${DCPSCHED_JOBS:-$(nproc)}
mkdir -p "$root"
# Every compile of this run, in every lane and in the builds its tests make,
# first takes one of $jobs slots (scripts/compile_slot.sh, CMake's compiler
# launcher): the lanes' builds share the cores instead of running three
# times as many compilers as there are cores, each slower for it. A
# launcher the caller set (ccache, say) is kept, without the slots.
if [[ -z ${CMAKE_CXX_COMPILER_LAUNCHER:-} ]]; then
  compile_slots=$(realpath "$root")/compile-slots
  rm -f "$compile_slots"
  mkfifo "$compile_slots"
  exec {compile_slots_fd}<>"$compile_slots"
  printf "%${jobs}s" "" | tr ' ' '+' >&"$compile_slots_fd"
  export DCPSCHED_COMPILE_SLOTS_FIFO=$compile_slots
  export CMAKE_CXX_COMPILER_LAUNCHER=$PWD/scripts/compile_slot.sh
fi
# Each compile's CPU time (scripts/compile_slot.sh logs it, where it is the
# launcher), for the stage table.
compile_cpu_log=$(realpath "$root")/compile-cpu.tsv
: >"$compile_cpu_log"
export DCPSCHED_COMPILE_CPU_LOG=$compile_cpu_log
passed=0
failed=0
run_start=$SECONDS
# One line per finished stage: name, wall s, CPU s, passed, failed, and the
# build and test details (stage_detail) of the stage table.
stage_results=$root/stage-results.tsv
: >"$stage_results"

# Adds the counts of one "... N passed, M failed" line of a log.
count_line() {
  local line
  line=$(grep -oE '[0-9]+ (targets )?passed, [0-9]+ failed' "$1" | tail -n1)
  if [[ -z $line ]]; then
    failed=$((failed + 1))
    return
  fi
  passed=$((passed + $(awk '{print $1}' <<<"$line")))
  failed=$((failed + $(grep -oE '[0-9]+ failed' <<<"$line" | awk '{print $1}')))
}

# Adds the counts of a ctest log; a log without a summary is one failure.
count_ctest() {
  local summary total failures
  summary=$(grep -oE '[0-9]+ tests failed out of [0-9]+' "$1" | tail -n1)
  if [[ -z $summary ]]; then
    failed=$((failed + 1))
    return
  fi
  failures=$(awk '{print $1}' <<<"$summary")
  total=$(awk '{print $6}' <<<"$summary")
  passed=$((passed + total - failures))
  failed=$((failed + failures))
}

# CPU seconds (user + system) of every finished child process of this shell
# so far, into the variable cpu. `times` must run in the shell that waited
# for them (a lane's subshell counts its own); the file is per shell.
children_cpu() {
  local file=$root/.times-$BASHPID
  times >"$file"
  cpu=$(tail -n1 "$file" | awk '{
    total = 0
    for (i = 1; i <= 2; i++) { split($i, t, "m"); total += t[1] * 60 + t[2] }
    printf "%d", total }')
  rm -f "$file"
}

# stage_detail KIND FILE...: what the stage table says of a stage besides
# its times, into $detail_file (stage sets it): for `build DIR`, the CPU time
# of its compiles (scripts/compile_slot.sh's log) and its link time (the
# durations of ninja's link steps in DIR/.ninja_log, summed); for `tests LOG...`,
# the ten slowest tests of those ctest logs.
stage_detail() {
  local kind=$1
  shift
  case $kind in
    build)
      [[ -f $1/.ninja_log ]] || return 0
      local dir
      dir=$(realpath "$1")
      awk -F'\t' 'FILENAME == cpu_log { if (index($2 "/", dir "/") == 1) { cpu += $1 / 100; n++ }; next }
        !/^#/ { d[$4] = ($2 - $1) / 1000 }
        END { for (o in d) if (o !~ /\.o$/) l += d[o]
              compile = n ? sprintf("compile %d s CPU (%d compiles)", cpu, n) \
                          : "compile time not logged (the caller'"'"'s compiler launcher)"
              printf "build %s: %s, link %d s (ninja steps summed)\n", name, compile, l }' \
        name="$1" dir="$dir" cpu_log="$compile_cpu_log" "$compile_cpu_log" "$1/.ninja_log" \
        >>"$detail_file"
      ;;
    tests)
      local logs=()
      for log in "$@"; do [[ -f $log ]] && logs+=("$log"); done
      ((${#logs[@]})) || return 0
      { echo "slowest tests:"
        grep -hE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: ' "${logs[@]}" |
          sed -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) .* ([0-9.]+) sec$/\2 \1/' |
          sort -rn | head -n 10 | awk '{printf "  %8.2f s  %s\n", $1, $2}'
      } >>"$detail_file"
      ;;
  esac
}

# stage NAME COMMAND...: runs COMMAND, records its wall and CPU time (the CPU
# time tells what the stage costs on a quiet machine when others build), its
# counts and its details in $stage_results.
stage() {
  local name=$1 start=$SECONDS cpu_start passed_start=$passed failed_start=$failed
  children_cpu
  cpu_start=$cpu
  shift
  detail_file=$root/.detail-$name
  rm -f "$detail_file"
  echo "=== $name"
  "$@" || true
  children_cpu
  local wall=$((SECONDS - start)) used=$((cpu - cpu_start)) detail=
  [[ -f $detail_file ]] && detail=$(tr '\n' '\r' <"$detail_file")
  rm -f "$detail_file"
  printf '%s\t%d\t%d\t%d\t%d\t%s\n' "$name" "$wall" "$used" \
    $((passed - passed_start)) $((failed - failed_start)) "$detail" >>"$stage_results"
  echo "=== $name: $wall s wall, $used s CPU"
}

# lane NAME STAGE_FUNCTION: runs the function (a chain of stages) in the
# background, its output into $root/lane-NAME.log. wait_lanes waits for
# every lane and prints each one's log when it ends.
lane_pids=()
lane_names=()
lane() {
  local name=$1
  shift
  ("$@") >"$root/lane-$name.log" 2>&1 &
  lane_pids+=($!)
  lane_names+=("$name")
  echo "=== lane $name started (log: $root/lane-$name.log)"
}

wait_lanes() {
  local remaining=${#lane_pids[@]} i
  while ((remaining)); do
    local live=()
    for i in "${!lane_pids[@]}"; do [[ -n ${lane_pids[i]} ]] && live+=("${lane_pids[i]}"); done
    wait -n "${live[@]}" 2>/dev/null || true
    for i in "${!lane_pids[@]}"; do
      [[ -n ${lane_pids[i]} ]] || continue
      if ! kill -0 "${lane_pids[i]}" 2>/dev/null; then
        wait "${lane_pids[i]}" 2>/dev/null || true
        echo "=== lane ${lane_names[i]} ended at $((SECONDS - run_start)) s:"
        cat "$root/lane-${lane_names[i]}.log"
        lane_pids[i]=
        remaining=$((remaining - 1))
      fi
    done
  done
  lane_pids=()
  lane_names=()
}

# configure_build DIR [--target TARGET] CMAKE_ARGS...: configures and builds
# DIR (one target, or all); a failure is counted and returns 1.
configure_build() {
  local dir=$1 targets=()
  shift
  if [[ ${1:-} == --target ]]; then
    targets=(--target "$2")
    shift 2
  fi
  mkdir -p "$(dirname "$dir")"
  if ! cmake -S . -B "$dir" -G Ninja -DDCPSCHED_WERROR=ON "$@" >"$dir.configure.log" 2>&1 ||
     ! cmake --build "$dir" -j "$jobs" "${targets[@]}"; then
    tail -n 20 "$dir.configure.log"
    echo "FAILED: configure or build of $dir"
    failed=$((failed + 1))
    stage_detail build "$dir"
    return 1
  fi
  stage_detail build "$dir"
}

# run_ctest DIR LOG CTEST_ARGS...: runs the selected tests of DIR and counts them.
run_ctest() {
  local dir=$1 log=$2
  shift 2
  ctest --test-dir "$dir" -j "$jobs" --output-on-failure --timeout 600 "$@" | tee "$log" || true
  count_ctest "$log"
  stage_detail tests "$log"
}

# configure_build_test DIR [--tests REGEX] [--target TARGET] CMAKE_ARGS...
configure_build_test() {
  local dir=$1 ctest_args=()
  shift
  if [[ ${1:-} == --tests ]]; then
    ctest_args=(-R "$2")
    shift 2
  fi
  configure_build "$dir" "$@" || return 0
  run_ctest "$dir" "$dir/ctest.log" "${ctest_args[@]}"
}

# The CMake arguments of each build, here once: the default tier's builds and
# the nightly ones (the default tier compiles core/ with each of those too,
# nightly_builds).
# Debug information: line tables only (-g1), enough for backtraces and
# sanitizer reports and much cheaper to compile than -g.
release_args=(-DCMAKE_CXX_COMPILER=g++ -DCMAKE_BUILD_TYPE=RelWithDebInfo
              -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG")
# -O1: the optimization sanitizers are usually run with; it halves the
# compile time of an instrumented build. clang-14 compiles this tree about a
# third faster than g++ does, so the default tier's sanitizer build is
# clang's and the nightly tier adds g++'s. scripts/coverage.sh's clang-14
# build uses these flags too: keep the two the same.
sanitized_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG"
                -DDCPSCHED_SANITIZE=ON -DDCPSCHED_BENCH=OFF)
# The default tier's sanitized build also carries clang's source-based
# coverage: the coverage gate reads its profiles, so no build of its own.
# Its properties run at 300 cases each (the release build's at the default
# 1000, the nightly tier's at 100000): under ASan a case costs several times
# as much, and the sanitizers look at the code each case runs, which 300
# cases of every property already reach (the coverage gate reads these
# profiles). DCPSCHED_PROPERTY_CASES in the environment still sets both.
asan_args=("${sanitized_args[@]}" -DCMAKE_CXX_COMPILER=clang++-14 -DDCPSCHED_COVERAGE=ON
           -DDCPSCHED_PROPERTY_CASES=300)
asan_gcc_args=("${sanitized_args[@]}" -DCMAKE_CXX_COMPILER=g++)
digest_args=(-DDCPSCHED_BENCH=OFF -DDCPSCHED_PYTHON=OFF)
clang_release_args=("${digest_args[@]}" -DCMAKE_CXX_COMPILER=clang++-14
                    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG")
debug_args=("${digest_args[@]}" -DCMAKE_CXX_COMPILER=g++ -DCMAKE_BUILD_TYPE=Debug
            -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1")

release() {
  configure_build_test "$root/ci-release" "${release_args[@]}"
}

# asan: the sanitized build with coverage. The four coverage layers run
# through scripts/coverage.sh (each with its own profile; their ctest logs
# are counted here), then every other test in one ctest run.
asan() {
  local dir=$root/ci-asan layer logs=()
  configure_build "$dir" "${asan_args[@]}" || return 0
  scripts/coverage.sh --no-build --no-report --build-dir "$dir" || true
  for layer in unit unit-unit_tests properties corpus golden; do
    count_ctest "$dir/profiles/$layer.log"
    logs+=("$dir/profiles/$layer.log")
  done
  LLVM_PROFILE_FILE=$dir/profiles/other-%m.profraw \
    ctest --test-dir "$dir" -j "$jobs" --output-on-failure --timeout 600 \
      -LE '^(unit|properties|corpus)$' | tee "$dir/ctest-other.log" || true
  count_ctest "$dir/ctest-other.log"
  rm -f "$dir"/profiles/other-*.profraw
  stage_detail tests "${logs[@]}" "$dir/ctest-other.log"
}

# coverage_gate: core/'s coverage without golden, from asan's profiles.
coverage_gate() {
  if scripts/coverage.sh --no-build --no-run --no-docs --build-dir "$root/ci-asan"; then
    passed=$((passed + 1))
  else
    echo "FAILED: the coverage gate (scripts/coverage.sh on $root/ci-asan)"
    failed=$((failed + 1))
  fi
}

asan_gcc() {
  configure_build_test "$root/ci-asan-gcc" "${asan_gcc_args[@]}"
}

# schedule_digest DIR CMAKE_ARGS...: that test alone in a build of its own.
schedule_digest() {
  local dir=$1
  shift
  configure_build_test "$dir" --tests '^schedule_digest$' --target schedule_digest "$@"
}

digest_builds() {
  schedule_digest "$root/ci-clang" "${clang_release_args[@]}"
  schedule_digest "$root/ci-debug" "${debug_args[@]}"
}

# compile_core NAME COMMAND...: one check, that COMMAND (a build of
# dcpsched_core_compile_check) succeeds; its output goes to nightly-builds/NAME.log.
compile_core() {
  local name=$1 log=$root/nightly-builds/$1.log
  shift
  mkdir -p "$root/nightly-builds"
  if "$@" >"$log" 2>&1; then
    echo "nightly-builds: $name: compiles"
    passed=$((passed + 1))
  else
    tail -n 30 "$log"
    echo "FAILED: nightly-builds: $name: core/ does not compile with that build's flags (log $log)"
    failed=$((failed + 1))
  fi
  stage_detail build "$root/nightly-builds/$name"
}

# nightly_builds: core/ with the compiler and flags of every nightly build
# that the default tier's builds do not already make (the nightly stages
# use the same arguments and scripts).
nightly_builds() {
  local dir=$root/nightly-builds
  compile_core asan-gcc cmake_core "$dir/asan-gcc" "${asan_gcc_args[@]}"
  # Front end only where that build's warnings all come from it
  # (CMakeLists.txt, DCPSCHED_COMPILE_CHECK_SYNTAX_ONLY).
  compile_core clang-release cmake_core "$dir/clang-release" "${clang_release_args[@]}" \
    -DDCPSCHED_COMPILE_CHECK_SYNTAX_ONLY=ON
  compile_core debug cmake_core "$dir/debug" "${debug_args[@]}" \
    -DDCPSCHED_COMPILE_CHECK_SYNTAX_ONLY=ON
  compile_core fuzz env DCPSCHED_FUZZ_BUILD="$dir/fuzz" fuzz/build_fuzzers.sh dcpsched_core_compile_check
  compile_core coverage-mcdc scripts/coverage.sh --mcdc --build-dir "$dir/coverage-mcdc" \
    --target dcpsched_core_compile_check
}

# cmake_core DIR CMAKE_ARGS...: configures DIR and builds
# dcpsched_core_compile_check alone.
cmake_core() {
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja -DDCPSCHED_WERROR=ON "$@" >/dev/null &&
    cmake --build "$dir" -j "$jobs" --target dcpsched_core_compile_check
}

oss_fuzz() {
  fuzz/oss_fuzz_build_test.sh "$root/oss-fuzz" | tee "$root/oss-fuzz.log" || true
  count_line "$root/oss-fuzz.log"
}

import() {
  fuzz/import_finding_test.sh "$root/oss-fuzz/work/dcpsched-oss-fuzz" "$root/oss-fuzz/out" \
    | tee "$root/import.log" || true
  count_line "$root/import.log"
}

fuzz_one() {
  fuzz/run_fuzzers_test.sh "$root/run-fuzzers-test" | tee "$root/fuzz-one.log" || true
  count_line "$root/fuzz-one.log"
}

# Counts a fuzz/run_fuzzers.sh log: a target ok, or not.
count_fuzz() {
  local ok bad
  ok=$(grep -c ': ok (' "$1" || true)
  bad=$(grep -cE ': (FOUND|FAILED)' "$1" || true)
  passed=$((passed + ok))
  failed=$((failed + bad))
  ((ok + bad > 0)) || failed=$((failed + 1))
}

fuzz() {
  if [[ ! -d $root/oss-fuzz/out ]]; then
    echo "FAILED: no fuzzers in $root/oss-fuzz/out"
    failed=$((failed + 1))
    return
  fi
  fuzz/run_fuzzers.sh --no-merge --build "$root/oss-fuzz/out" \
    -t "${DCPSCHED_FUZZ_SECONDS:-30}" -p "${DCPSCHED_FUZZ_PARALLEL:-2}" | tee "$root/fuzz.log" || true
  count_fuzz "$root/fuzz.log"
}

# nightly_fuzz [PART PARTS]: every target, or the PART-th (1-based) of every
# PARTS-th target in name order.
nightly_fuzz() {
  local part=${1:-1} parts=${2:-1}
  local scratch=$root/nightly
  rm -rf "$scratch"
  mkdir -p "$scratch"
  cp -r corpus "$scratch/corpus"
  local build targets=() all=() i
  build=$(DCPSCHED_FUZZ_BUILD="$root/ci-fuzz" fuzz/build_fuzzers.sh)
  mapfile -t all < <(find "$build" -maxdepth 1 -type f -executable -name 'fuzz_*' \
    ! -name '*_replay' ! -name 'fuzz_write_seeds' -printf '%f\n' | sort)
  for i in "${!all[@]}"; do
    ((i % parts == part - 1)) && targets+=("${all[i]}")
  done
  echo "nightly-fuzz: part $part of $parts: ${targets[*]}"
  fuzz/run_fuzzers.sh --build "$build" --corpus-root "$scratch/corpus" \
    -t "${DCPSCHED_NIGHTLY_FUZZ_SECONDS:-600}" -p "${DCPSCHED_FUZZ_PARALLEL:-2}" \
    "${targets[@]}" | tee "$root/nightly-fuzz.log" || true
  count_fuzz "$root/nightly-fuzz.log"
  fuzz/collect_new_inputs.sh "$scratch/corpus" "$scratch/new" | tee "$scratch/new.log"
  echo "nightly: fuzzed corpus in $scratch/corpus; what corpus/ lacks in $scratch/new/corpus"
  echo "nightly: findings: $(find "$scratch/new/corpus" -path '*/regressions/*' -type f | wc -l)" \
       "(cp -r $scratch/new/corpus . keeps everything)"
}

# The properties of the release build (property_tests), run directly so
# that RC_PARAMS is not ctest's (which fixes the default number of cases), in
# $jobs GoogleTest shards at once (each single-threaded); then each shard's
# result.
properties() {
  local cases=${DCPSCHED_NIGHTLY_PROPERTY_CASES:-100000} exe=$root/ci-release/property_tests
  local index log
  echo "properties: $cases cases per property, $jobs shards of $exe at a time"
  for ((index = 0; index < jobs; index++)); do
    RC_PARAMS="max_success=$cases" GTEST_TOTAL_SHARDS=$jobs GTEST_SHARD_INDEX=$index \
      "$exe" >"$root/nightly-properties-$index.log" 2>&1 &
  done
  wait || true
  for ((index = 0; index < jobs; index++)); do
    log=$root/nightly-properties-$index.log
    echo "property_tests shard $((index + 1)) of $jobs: $cases cases per property"
    grep -E '^\[  (PASSED|FAILED)  \]|^\[  FAILED  \] .*\.' "$log" || true
    local ok bad
    ok=$(grep -oE '^\[  PASSED  \] [0-9]+' "$log" | awk '{print $4}')
    bad=$(grep -oE '^\[  FAILED  \] [0-9]+ tests?' "$log" | awk '{print $4}')
    passed=$((passed + ${ok:-0}))
    failed=$((failed + ${bad:-0}))
    [[ -n $ok || -n $bad ]] || failed=$((failed + 1))
  done
}

# The distributed harness at W = 8 and W = 12 (the default tier's ctest runs
# W = 2, 4 and 6), and its step check's nightly runs (W = 16, and
# interleaving at W = 8): one pass or one failure.
distributed_w8() {
  if DCPSCHED_NIGHTLY_DISTRIBUTED=1 PYTHONPATH=$root/ci-release/python PYTHONDONTWRITEBYTECODE=1 \
     /usr/bin/python3 -m pytest -q -p no:cacheprovider -k "w8 or w12 or nightly" \
     python/tests/test_distributed.py python/tests/test_distributed_step.py; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
}

# exhaustive: every problem of the nightly sets through every check
# (tests/exhaustive_check.cc) in the release build, $jobs processes each
# checking every $jobs-th problem (--part). One pass or one failure per
# process.
exhaustive() {
  local exe=$root/ci-release/exhaustive_check part logs=()
  if [[ ! -x $exe ]]; then
    echo "FAILED: no $exe (the release stage builds it)"
    failed=$((failed + 1))
    return
  fi
  for ((part = 1; part <= jobs; part++)); do
    "$exe" --sets=nightly --part="$part/$jobs" >"$root/exhaustive-$part.log" 2>&1 &
    logs+=("$root/exhaustive-$part.log")
  done
  wait || true
  for log in "${logs[@]}"; do
    grep -E '^exhaustive |^  |^FAILED|^  problem:' "$log" || true
    if grep -q '^\[  PASSED  \] 3 tests' "$log"; then
      passed=$((passed + 1))
    else
      failed=$((failed + 1))
    fi
  done
}

# Runs a tool of another issue if it is there: one pass or one failure.
optional_tool() {
  local tool=$1
  shift
  if [[ ! -x $tool ]]; then
    echo "$tool: not in this tree; skipped"
    return
  fi
  if "$tool" "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}

# mutation [SHARD SHARDS]: the kill matrix of the night's slice, or of one
# shard of it.
#
# The fuzz-empty layer runs at 60 s per target, as mutation/run_mutants.py's
# default and the time-to-kill figures ask: a killed mutant stops at its
# first kill, a survivor pays every target of its file the full 60 s (1.44
# targets a mutant on average). The slice (about 773 mutants) is cut into 8
# shards of about 97. Each mutant runs only the unit, property and corpus
# programs that reach its point (docs/mutation.md), 7.5 s a mutant in the
# sample that checked that skip; the fuzz layer about 3 s and fuzz-empty
# about 20 s a mutant in shard 7 of the earlier layout of 20. So a shard is
# about 10 min of schemata builds + 97 x 30.5 / 2 / 60 = 25 min of mutants
# at two at a time, 35 min (README "Nightly shards" has the measured times).
mutation_settings=(--matrix --seed 1 --layers unit,properties,corpus,fuzz,fuzz-empty
                   --fuzz-seconds "${DCPSCHED_MUTATION_FUZZ_SECONDS:-10}"
                   --fuzz-empty-seconds "${DCPSCHED_MUTATION_FUZZ_EMPTY_SECONDS:-60}")
mutation() {
  local slice=${DCPSCHED_MUTATION_SLICE:-$(($(date -u +%s) / 86400 % 3 + 1))/3}
  local args=("${mutation_settings[@]}" --slice "$slice" -j "$jobs")
  local out=$root/mutation-results.md
  if (($# == 2)); then
    args+=(--shard "$1/$2")
    out=$root/mutation-results-shard-$1.md
  fi
  optional_tool mutation/run_mutants.py "${args[@]}" --out "$out"
}

# mutation_report DIR: one report over the kill-matrix caches under DIR, at
# the settings mutation() runs the shards with (the rows of other settings
# do not count). Not a slice: every mutant the caches cover.
mutation_report() {
  local caches=()
  mapfile -t caches < <(find "$1" -name '*.matrix.jsonl' -type f | sort)
  if ((${#caches[@]} == 0)); then
    echo "mutation-report: no kill-matrix cache (*.matrix.jsonl) under $1"
    failed=$((failed + 1))
    return
  fi
  optional_tool mutation/run_mutants.py "${mutation_settings[@]}" \
    --merge-cache "${caches[@]}" --cache-only --out "$root/mutation-results.md"
}

# in_shard N...: whether this run includes a part of shard N (every part
# without --shard).
in_shard() {
  local k
  ((shard == 0)) && return 0
  for k in "$@"; do ((k == shard)) && return 0; done
  return 1
}

if [[ -n $report_dir ]]; then
  stage mutation-report mutation_report "$report_dir"
elif in_shard 1; then
  release_lane() { stage release release; }
  asan_lane() { stage asan asan; stage coverage-gate coverage_gate; }
  fuzz_lane() {
    stage oss-fuzz oss_fuzz
    stage import import
    stage fuzz fuzz
    stage nightly-builds nightly_builds
  }
  lane release release_lane
  lane asan asan_lane
  lane fuzz fuzz_lane
  wait_lanes
fi
if ((nightly)) && [[ -z $report_dir ]]; then
  if ((shard == 0)); then
    stage nightly-fuzz nightly_fuzz
  elif in_shard 3 4; then
    stage nightly-fuzz nightly_fuzz $((shard - 2)) 2
  fi
  in_shard 1 && stage properties properties
  in_shard 2 && stage asan-gcc asan_gcc
  in_shard 2 && stage fuzz-one fuzz_one
  in_shard 1 && stage digest-builds digest_builds
  in_shard 1 && stage distributed distributed_w8
  in_shard 1 && stage exhaustive exhaustive
  in_shard 2 && stage coverage optional_tool scripts/coverage.sh
  in_shard 2 && stage coverage-mcdc optional_tool scripts/coverage.sh --mcdc
  if ((shard == 0)); then
    stage mutation mutation
  elif ((shard >= 5)); then
    stage mutation mutation $((shard - 4)) $((NIGHTLY_SHARDS - 4))
  fi
fi

tier=default
((nightly)) && tier=nightly
((shard)) && tier="nightly shard $shard/$NIGHTLY_SHARDS"
[[ -n $report_dir ]] && tier="nightly mutation report"
children_cpu
echo "=== $tier tier, stage table (lanes run at once: their stages overlap)"
printf '  %-16s %8s %8s %8s %8s\n' stage "wall s" "CPU s" passed failed
total_passed=0
total_failed=0
while IFS=$'\t' read -r name wall used stage_passed stage_failed detail; do
  printf '  %-16s %8d %8d %8d %8d\n' "$name" "$wall" "$used" "$stage_passed" "$stage_failed"
  [[ -n $detail ]] && tr '\r' '\n' <<<"$detail" | sed '/^$/d; s/^/      /'
  total_passed=$((total_passed + stage_passed))
  total_failed=$((total_failed + stage_failed))
done <"$stage_results"
echo "=== $tier tier: $((SECONDS - run_start)) s wall, $cpu s CPU on $(nproc) cores"
echo "total: $total_passed passed, $total_failed failed"
((total_failed == 0))
