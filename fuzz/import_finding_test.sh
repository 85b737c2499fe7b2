#!/usr/bin/env bash
# Checks fuzz/import_finding.sh on a planted failing input.
#
#   fuzz/import_finding_test.sh FUZZ_BUILD_DIR [CLEAN_FUZZERS_DIR]
#
# FUZZ_BUILD_DIR is a configured libFuzzer build tree (-DDCPSCHED_FUZZ=ON,
# e.g. the $WORK tree of fuzz/oss_fuzz_build_test.sh or build/fuzz). It is
# reconfigured with the mutant fill_step_skipped (mutation/mutants/: the
# schedule leaves ranks empty), which rebuilds one core file and
# fuzz_packing_aware, and set back to no mutant on exit. The planted input is
# the seed review_g14_two_halves behind 64 bytes that the decoder never reads
# (FuzzedDataProvider reads integers from the end), so there is something to
# minimize. The test checks that import_finding.sh
#   - stores it under <corpus-root>/fuzz_packing_aware/regressions/, named
#     after what broke ("schedule breaks an invariant") and smaller than the
#     planted file, and prints a reproducer that crashes again;
#   - recognizes the same crash imported a second time, also from a .zip
#     artifact with a ClusterFuzzLite .summary beside it;
#   - refuses an input that does not crash (the seed itself, on the
#     unmutated fuzzers in CLEAN_FUZZERS_DIR, if given), with exit status 1;
# and that the stored regression passes on the unmutated fuzzer.
# Closes with "import_finding_test: N passed, M failed".
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:?usage: fuzz/import_finding_test.sh FUZZ_BUILD_DIR [CLEAN_FUZZERS_DIR]}
clean=${2:-}
target=fuzz_packing_aware
mutant=fill_step_skipped
seed=corpus/$target/seeds/review_g14_two_halves
scratch=$(mktemp -d /tmp/dcpsched-import-test.XXXXXX)
restore() {
  cmake -DDCPSCHED_MUTANT= "$build" >/dev/null 2>&1 || true
  rm -rf "$scratch"
}
trap restore EXIT

passed=0
failed=0
check() {
  local what=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
    echo "import_finding_test: ok: $what"
  else
    failed=$((failed + 1))
    echo "import_finding_test: FAILED: $what"
  fi
}

echo "import_finding_test: building $target with the mutant $mutant in $build"
cmake -DDCPSCHED_MUTANT="$mutant" "$build" >/dev/null
cmake --build "$build" --target "$target" -j "${DCPSCHED_JOBS:-$(nproc)}" >"$scratch/build.log" 2>&1 ||
  { tail -n 20 "$scratch/build.log"; exit 1; }

planted=$scratch/planted
head -c 64 /dev/zero | tr '\0' 'x' >"$planted"
cat "$seed" >>"$planted"
root=$scratch/corpus

fuzz/import_finding.sh --build "$build" --corpus-root "$root" "$target" "$planted" \
  >"$scratch/import.log" 2>&1 && import_status=0 || import_status=$?
sed 's/^/  | /' "$scratch/import.log"
check "the planted input is imported (exit 0)" test "$import_status" -eq 0
mapfile -t stored < <(find "$root/$target/regressions" -type f 2>/dev/null)
check "one regression is stored" test "${#stored[@]}" -eq 1
regression=${stored[0]:-/nonexistent}
check "it is named after what broke: $(basename "$regression")" \
  grep -qE '^schedule-breaks-an-invariant-[0-9a-f]{10}$' <<<"$(basename "$regression")"
check "it is minimized ($(stat -c %s "$planted") -> $(stat -c %s "$regression" 2>/dev/null) bytes)" \
  test "$(stat -c %s "$regression" 2>/dev/null || echo 999999)" -lt "$(stat -c %s "$planted")"
reproducer=$(grep -m1 -oE 'reproduce: .*' "$scratch/import.log" | sed 's/^reproduce: //' || true)
check "the printed reproducer names the stored file" test "${reproducer##* }" = "$regression"
reproduces() { ! $reproducer >/dev/null 2>&1; }
check "the printed reproducer crashes again" reproduces

fuzz/import_finding.sh --build "$build" --corpus-root "$root" "$target" "$planted" \
  >"$scratch/again.log" 2>&1 && again_status=0 || again_status=$?
check "a second import succeeds (exit 0)" test "$again_status" -eq 0
check "and finds it already stored" grep -q "already stored as $regression" "$scratch/again.log"
check "and stores nothing new" test "$(find "$root/$target/regressions" -type f | wc -l)" -eq 1

# As a downloaded artifact: a zip with the crash and ClusterFuzzLite's summary.
echo "stack trace" >"$scratch/planted.summary"
(cd "$scratch" && zip -q artifact.zip planted planted.summary)
fuzz/import_finding.sh --build "$build" --corpus-root "$root" "$target" "$scratch/artifact.zip" \
  >"$scratch/zip.log" 2>&1 && zip_status=0 || zip_status=$?
check "a zip artifact is read, its .summary skipped (exit 0, one file)" \
  test "$zip_status" -eq 0 -a "$(grep -c 'already stored' "$scratch/zip.log")" -eq 1

if [[ -n $clean ]]; then
  fuzz/import_finding.sh --build "$clean" --corpus-root "$root" "$target" "$seed" \
    >"$scratch/clean.log" 2>&1 && clean_status=0 || clean_status=$?
  check "an input that does not crash is refused with exit status 1" test "$clean_status" -eq 1
  check "and reported as not reproducing" grep -q 'does not reproduce' "$scratch/clean.log"
  runs_cleanly() { "$@" >/dev/null 2>&1; }
  check "the stored regression passes on the unmutated fuzzer" \
    runs_cleanly "$clean/$target" -runs=1 "$regression"
fi
echo "import_finding_test: $passed passed, $failed failed"
((failed == 0))
