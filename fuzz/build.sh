#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build script (.clusterfuzzlite/build.sh calls it).
#
# The infrastructure sets $CC, $CXX, $CFLAGS, $CXXFLAGS (sanitizer and
# coverage flags included), $LIB_FUZZING_ENGINE, $SRC, $WORK and $OUT. This
# builds every target (fuzz/fuzz_*.cc -> fuzz_<what>), and only them (CMake
# target `fuzzers`; core/ too as a unity build, which compiles in a third of
# the time), with them in $WORK/dcpsched-oss-fuzz, and copies into $OUT each target, its seed corpus
# (corpus/fuzz_<what>/, seeds and regressions included) as
# fuzz_<what>_seed_corpus.zip and its dictionary as fuzz_<what>.dict.
#
# The image needs the Debian/Ubuntu packages cmake, ninja-build, g++ (for
# libstdc++), libabsl-dev (20220623 or newer), nlohmann-json3-dev,
# librapidcheck-dev and zip (.clusterfuzzlite/Dockerfile installs them).
# Those libraries are built against libstdc++, so the -stdlib=libc++ that
# OSS-Fuzz puts in $CXXFLAGS is dropped: ASan, UBSan and coverage builds need
# no instrumented C++ library (MemorySanitizer would, and is not supported).
#
# The fuzzers run in another image (OSS-Fuzz's base-runner), which has none
# of the -dev packages: the Abseil shared libraries they link go to $OUT/lib,
# and the fuzzers find them there through their RUNPATH $ORIGIN/lib.
src=${SRC:-$(cd "$(dirname "$0")/.." && pwd)}/dcpsched
[[ -d $src ]] || src=$(cd "$(dirname "$0")/.." && pwd)
build=${WORK:-/tmp}/dcpsched-oss-fuzz
cxxflags=${CXXFLAGS//-stdlib=libc++/}

cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DDCPSCHED_BUILD_TESTS=OFF -DDCPSCHED_WERROR=OFF \
  -DDCPSCHED_FUZZ=ON -DDCPSCHED_FUZZ_SANITIZE=OFF -DCMAKE_UNITY_BUILD=ON \
  -DDCPSCHED_FUZZ_ENGINE="$LIB_FUZZING_ENGINE" \
  -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_CXX_FLAGS="$cxxflags" \
  -DCMAKE_BUILD_RPATH='$ORIGIN/lib'
cmake --build "$build" --target fuzzers -j "${DCPSCHED_JOBS:-$(nproc)}"

for target in "$build"/fuzz_*; do
  name=$(basename "$target")
  [[ -f $target && -x $target && $name != *_replay && $name != fuzz_write_seeds ]] || continue
  cp "$target" "$OUT/"
  mkdir -p "$OUT/lib"
  ldd "$target" | awk '$1 ~ /^libabsl_/ && $3 ~ /^\// {print $3}' | xargs -r cp -L -t "$OUT/lib"
  if [[ -d $src/corpus/$name ]]; then
    rm -f "$OUT/${name}_seed_corpus.zip"
    (cd "$src/corpus/$name" && zip -q -r "$OUT/${name}_seed_corpus.zip" . -x '.gitkeep' -x '*/.gitkeep')
  fi
  if [[ -f $src/corpus/$name.dict ]]; then
    cp "$src/corpus/$name.dict" "$OUT/$name.dict"
  fi
done
