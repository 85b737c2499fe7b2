#!/usr/bin/env bash
# Checks that fuzz/run_fuzzers.sh works as a user's CI would call it: asked
# for one target, in a build directory that does not exist yet, it builds
# that target alone (with the compiler it was given) and fuzzes it.
#
#   fuzz/run_fuzzers_test.sh [SCRATCH]     (default build/run-fuzzers-test)
#
# SCRATCH is emptied first. Runs
#   DCPSCHED_FUZZ_BUILD=SCRATCH/build fuzz/run_fuzzers.sh -t SECONDS
#     --no-merge --cxx clang++-14 --corpus-root SCRATCH/corpus fuzz_packing_aware
# (SECONDS: $DCPSCHED_FUZZ_ONE_SECONDS, default 5; SCRATCH/corpus holds
# three small seeds of corpus/fuzz_packing_aware/seeds, SEEDS below, so
# corpus/ is never written, and the run is seconds of fuzzing, not a pass
# over the whole corpus, which takes minutes in this build) and checks that
#   - it exits 0 and reports the target ok with some runs;
#   - SCRATCH/build holds fuzz_packing_aware and no other fuzz target;
#   - the build used the compiler given (CMakeCache.txt).
# Closes with "run_fuzzers_test: N passed, M failed"; exit status 1 if any
# check failed.
set -euo pipefail
cd "$(dirname "$0")/.."

scratch=${1:-build/run-fuzzers-test}
seconds=${DCPSCHED_FUZZ_ONE_SECONDS:-5}
target=fuzz_packing_aware
seeds=(benchmark_128_samples_g8_mslpr2048 review_g14_two_halves vpp4_g8_mixed)
rm -rf "$scratch"
mkdir -p "$scratch/corpus/$target"
scratch=$(cd "$scratch" && pwd)
for seed in "${seeds[@]}"; do
  cp "corpus/$target/seeds/$seed" "$scratch/corpus/$target/"
done

passed=0
failed=0
check() {  # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
    echo "ok: $what"
  else
    failed=$((failed + 1))
    echo "FAILED: $what"
  fi
}

status=0
DCPSCHED_FUZZ_BUILD="$scratch/build" fuzz/run_fuzzers.sh -t "$seconds" --no-merge \
  --cxx clang++-14 --corpus-root "$scratch/corpus" "$target" >"$scratch/run.log" 2>&1 ||
  status=$?
sed 's/^/  | /' "$scratch/run.log" | tail -n 8
check "run_fuzzers.sh exits 0" test "$status" -eq 0
check "$target fuzzed (ok, some runs)" grep -qE "^$target: ok \\([1-9][0-9]* runs\\)" \
  "$scratch/run.log"
built=$(find "$scratch/build" -maxdepth 1 -type f -executable -name 'fuzz_*' -printf '%f\n' |
  sort | tr '\n' ' ')
check "only $target built (built: ${built:-nothing})" test "$built" = "$target "
check "built with clang++-14" grep -qE '^CMAKE_CXX_COMPILER:[A-Z]+=.*clang\+\+-14$' \
  "$scratch/build/CMakeCache.txt"
echo "run_fuzzers_test: $passed passed, $failed failed"
((failed == 0))
