#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build script.
#
# The infrastructure sets $CC, $CXX, $CFLAGS, $CXXFLAGS (sanitizer and
# coverage flags included), $LIB_FUZZING_ENGINE, $SRC and $OUT. This builds
# every target (fuzz/fuzz_*.cc -> fuzz_<what>) with them, and copies each
# target's seed corpus (corpus/fuzz_<what>/, seeds and regressions included)
# as $OUT/fuzz_<what>_seed_corpus.zip and its dictionary as
# $OUT/fuzz_<what>.dict. The image needs Debian/Ubuntu packages cmake,
# ninja-build, libabsl-dev (20220623 or newer), nlohmann-json3-dev, zip.
src=${SRC:-$(cd "$(dirname "$0")/.." && pwd)}/dcpsched
[[ -d $src ]] || src=$(cd "$(dirname "$0")/.." && pwd)
build=${WORK:-/tmp}/dcpsched-oss-fuzz

cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DDCPSCHED_BUILD_TESTS=OFF -DDCPSCHED_WERROR=OFF \
  -DDCPSCHED_FUZZ=ON -DDCPSCHED_FUZZ_SANITIZE=OFF \
  -DDCPSCHED_FUZZ_ENGINE="$LIB_FUZZING_ENGINE" \
  -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_CXX_FLAGS="$CXXFLAGS"
cmake --build "$build"

for target in "$build"/fuzz_*; do
  name=$(basename "$target")
  [[ -x $target && $name != *_replay && $name != fuzz_write_seeds ]] || continue
  cp "$target" "$OUT/"
  if [[ -d $src/corpus/$name ]]; then
    (cd "$src/corpus/$name" && zip -q -r "$OUT/${name}_seed_corpus.zip" . -x '.gitkeep')
  fi
  if [[ -f $src/corpus/$name.dict ]]; then
    cp "$src/corpus/$name.dict" "$OUT/$name.dict"
  fi
done
