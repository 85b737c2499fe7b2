#!/usr/bin/env bash
# The project's test command (README "Run the tests"; .ci/run calls it).
#
# 1. Release build with warnings as errors; every ctest test (unit, golden,
#    properties, corpus replay).
# 2. The same under AddressSanitizer + UndefinedBehaviorSanitizer.
# 3. Every libFuzzer target for DCPSCHED_FUZZ_SECONDS (default 60) each, two
#    at a time, without touching corpus/; any finding fails the run and is
#    stored, minimized, under corpus/<target>/regressions/.
#
# Build directories: build/ci-release and build/ci-asan (override the root
# with DCPSCHED_BUILD_ROOT).
set -euo pipefail
cd "$(dirname "$0")/.."

root=${DCPSCHED_BUILD_ROOT:-build}
jobs=${DCPSCHED_JOBS:-$(nproc)}

configure_build_test() {
  local dir=$1
  shift
  echo "=== $dir: configure, build, test"
  cmake -S . -B "$dir" -G Ninja -DDCPSCHED_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
  ctest --test-dir "$dir" -j "$jobs" --output-on-failure --timeout 600 | tee "$dir/ctest.log"
  passed=$((passed + $(grep -oE 'tests failed out of [0-9]+' "$dir/ctest.log" | awk '{print $5}')))
}

passed=0

configure_build_test "$root/ci-release" -DCMAKE_BUILD_TYPE=RelWithDebInfo
configure_build_test "$root/ci-asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDCPSCHED_SANITIZE=ON

echo "=== fuzz: every target for ${DCPSCHED_FUZZ_SECONDS:-60}s"
DCPSCHED_FUZZ_BUILD="$root/ci-fuzz" fuzz/run_fuzzers.sh --no-merge \
  -t "${DCPSCHED_FUZZ_SECONDS:-60}" -p "${DCPSCHED_FUZZ_PARALLEL:-2}" | tee "$root/fuzz.log"
passed=$((passed + $(grep -c ': ok (' "$root/fuzz.log")))

echo "=== all test stages passed (ctest tests of both builds and fuzz targets)"
echo "total: $passed passed, 0 failed"
