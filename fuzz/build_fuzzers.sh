#!/usr/bin/env bash
# Builds libFuzzer targets (fuzz/fuzz_*.cc -> fuzz_<what>) with clang,
# libFuzzer, ASan and UBSan into $DCPSCHED_FUZZ_BUILD (default build/fuzz),
# and prints that directory.
#
#   fuzz/build_fuzzers.sh [--cc CC] [--cxx CXX] [TARGET...]
#
#   TARGET     fuzz_<what> names: build only these (default: every target,
#              and fuzz_write_seeds, fuzz/README.md)
#   --cc CC, --cxx CXX
#              the compilers (default $DCPSCHED_FUZZ_CC and
#              $DCPSCHED_FUZZ_CXX, else clang-14 and clang++-14 where
#              installed, else clang and clang++). libFuzzer needs clang.
#              The plain CC and CXX of the environment are not read: a CI's
#              are often gcc. Changing the compiler of an existing build
#              directory reconfigures it from scratch.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${DCPSCHED_FUZZ_BUILD:-build/fuzz}
cc=${DCPSCHED_FUZZ_CC:-}
cxx=${DCPSCHED_FUZZ_CXX:-}
targets=()
while (($#)); do
  case $1 in
    --cc) cc=$2; shift 2 ;;
    --cxx) cxx=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    -*) echo "build_fuzzers: unknown flag $1 (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
if [[ -z $cc ]]; then
  cc=clang; command -v clang-14 >/dev/null && cc=clang-14
fi
if [[ -z $cxx ]]; then
  cxx=clang++; command -v clang++-14 >/dev/null && cxx=clang++-14
fi
((${#targets[@]})) || targets=(fuzzers fuzz_write_seeds)
# The project is C++ alone; CC is passed on for the C compiler CMake probes.
CC=$cc CXX=$cxx cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER="$cxx" -DDCPSCHED_FUZZ=ON -DDCPSCHED_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --target "${targets[@]}" -j "${DCPSCHED_JOBS:-$(nproc)}" >&2
echo "$build"
