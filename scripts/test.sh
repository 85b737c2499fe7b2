#!/usr/bin/env bash
# The project's test command (README "Run the tests"; .ci/run calls it).
#
# 1. Release build with warnings as errors; every ctest test.
# 2. The same under AddressSanitizer + UndefinedBehaviorSanitizer.
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
  ctest --test-dir "$dir" -j "$jobs" --output-on-failure --timeout 600
}

configure_build_test "$root/ci-release" -DCMAKE_BUILD_TYPE=RelWithDebInfo
configure_build_test "$root/ci-asan" -DCMAKE_BUILD_TYPE=Debug -DDCPSCHED_SANITIZE=ON

echo "=== all test stages passed"
