#!/usr/bin/env bash
# Runs .clusterfuzzlite/build.sh the way the OSS-Fuzz builder does, without
# Docker, then checks $OUT the way OSS-Fuzz's check_build does.
#
#   fuzz/oss_fuzz_build_test.sh [ROOT]     (default build/oss-fuzz)
#
# Build, in scratch directories under ROOT (emptied first):
#   ROOT/src/dcpsched  a copy of the repository (its tracked and untracked,
#                      not ignored, files), as the Dockerfile's COPY makes it
#   ROOT/src/build.sh  .clusterfuzzlite/build.sh, run with bash -eu from
#                      ROOT/src/dcpsched (the Dockerfile's WORKDIR)
#   ROOT/work, ROOT/out  $WORK and $OUT
# with the environment OSS-Fuzz's compile step sets for SANITIZER=address and
# FUZZING_ENGINE=libfuzzer: CC/CXX clang-14 (the image has its own clang),
# CFLAGS = OSS-Fuzz's base flags, its address sanitizer flags and
# -fsanitize=fuzzer-no-link, CXXFLAGS = CFLAGS -stdlib=libc++,
# LIB_FUZZING_ENGINE=-fsanitize=fuzzer.
#
# Checks, per fuzz target in $OUT (like check_build, which runs each target
# briefly):
#   - its name is one ClusterFuzzLite runs (letters, digits, _ and -);
#   - it is built with AddressSanitizer and libFuzzer's coverage counters;
#   - every shared library it needs resolves, and outside $OUT/lib only to
#     the C and C++ runtime that OSS-Fuzz's runner image has;
#   - it runs every input of its fuzz_<what>_seed_corpus.zip without a crash;
#   - its fuzz_<what>.dict, if any, loads (libFuzzer parses it at start-up).
# Prints one line per target and exits 1 if any check failed. ROOT/out is
# left for the caller (scripts/test.sh fuzzes with those binaries).
set -euo pipefail
cd "$(dirname "$0")/.."

root=${1:-build/oss-fuzz}
rm -rf "$root"
mkdir -p "$root/src/dcpsched" "$root/work" "$root/out"
root=$(cd "$root" && pwd)
SRC=$root/src WORK=$root/work OUT=$root/out

# The Dockerfile: COPY . $SRC/dcpsched; COPY .clusterfuzzlite/build.sh $SRC/.
git ls-files -z --cached --others --exclude-standard |
  tar --null --files-from=- --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$SRC/dcpsched"
cp .clusterfuzzlite/build.sh "$SRC/build.sh"

# infra/base-images/base-clang/Dockerfile (CFLAGS) and base-builder/Dockerfile
# (SANITIZER_FLAGS_address, COVERAGE_FLAGS), combined as base-builder/compile
# does.
oss_fuzz_cflags="-O1 -fno-omit-frame-pointer -gline-tables-only \
-Wno-error=incompatible-function-pointer-types -Wno-error=int-conversion \
-Wno-error=deprecated-declarations -Wno-error=implicit-function-declaration \
-Wno-error=implicit-int -Wno-error=unknown-warning-option -Wno-error=vla-cxx-extension \
-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION"
sanitizer_flags="-fsanitize=address -fsanitize-address-use-after-scope"
coverage_flags="-fsanitize=fuzzer-no-link"
cflags="$oss_fuzz_cflags $sanitizer_flags $coverage_flags"

echo "oss_fuzz_build: building with .clusterfuzzlite/build.sh in $SRC/dcpsched"
if ! (cd "$SRC/dcpsched" &&
      env CC=clang-14 CXX=clang++-14 CCC=clang++-14 CFLAGS="$cflags" \
        CXXFLAGS="$cflags -stdlib=libc++" LIB_FUZZING_ENGINE=-fsanitize=fuzzer \
        SANITIZER=address FUZZING_ENGINE=libfuzzer FUZZING_LANGUAGE=c++ ARCHITECTURE=x86_64 \
        SRC="$SRC" WORK="$WORK" OUT="$OUT" \
        bash -eu "$SRC/build.sh" >"$root/build.log" 2>&1); then
  tail -n 30 "$root/build.log"
  echo "oss_fuzz_build: FAILED: .clusterfuzzlite/build.sh exited non-zero (log $root/build.log)"
  exit 1
fi

# The C/C++ runtime libraries OSS-Fuzz's runner image provides.
runtime_libs='^(linux-vdso\.so|ld-linux-x86-64\.so|libc\.so|libm\.so|libpthread\.so|libdl\.so|librt\.so|libstdc\+\+\.so|libgcc_s\.so)'

# Checks one target; prints what is wrong, or nothing.
check_target() {
  local fuzzer=$1 name
  name=$(basename "$fuzzer")
  [[ $name =~ ^[A-Za-z0-9_-]+$ ]] || echo "name $name has characters ClusterFuzzLite skips"
  grep -qa '__asan_report_load' "$fuzzer" || echo "not built with AddressSanitizer"
  local libs
  libs=$(ldd "$fuzzer")
  grep 'not found' <<<"$libs" | sed 's/^[[:space:]]*/library /' || true
  awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' <<<"$libs" | while read -r lib path; do
    [[ $path == "$OUT/lib/"* || $lib =~ $runtime_libs ]] ||
      echo "needs $lib from $path, which the runner image does not have"
  done
  local seeds=$OUT/${name}_seed_corpus.zip unpacked=$WORK/check/$name
  if [[ ! -f $seeds ]]; then
    echo "no ${name}_seed_corpus.zip"
    return
  fi
  mkdir -p "$unpacked"
  unzip -q -o "$seeds" -d "$unpacked"
  local count options=(-runs=0 -timeout=10 -rss_limit_mb=2048) log=$WORK/check/$name.log
  # libFuzzer skips empty files when it reads a corpus.
  count=$(find "$unpacked" -type f -size +0 | wc -l)
  [[ -f $OUT/$name.dict ]] && options+=(-dict="$OUT/$name.dict")
  if ! "$fuzzer" "${options[@]}" "$unpacked" >"$log" 2>&1; then
    echo "crashes on its seed corpus (log $log)"
    return
  fi
  grep -q 'INFO: Loaded 1 modules .*inline 8-bit counters' "$log" ||
    echo "no libFuzzer coverage counters (log $log)"
  grep -q "INFO: seed corpus: files: $count " "$log" ||
    echo "did not read the $count files of its seed corpus (log $log)"
  if [[ -f $OUT/$name.dict ]] && ! grep -qE '^Dictionary: [1-9][0-9]* entries' "$log"; then
    echo "its dictionary did not load (log $log)"
  fi
}

passed=0
failed=0
mapfile -t fuzzers < <(find "$OUT" -maxdepth 1 -type f -executable | sort)
if ((${#fuzzers[@]} == 0)); then
  echo "oss_fuzz_build: FAILED: no fuzz target in $OUT"
  exit 1
fi
for fuzzer in "${fuzzers[@]}"; do
  name=$(basename "$fuzzer")
  problems=$(check_target "$fuzzer")
  if [[ -z $problems ]]; then
    passed=$((passed + 1))
    echo "oss_fuzz_build: $name: ok ($(find "$WORK/check/$name" -type f -size +0 | wc -l) seed inputs$(
      grep -m1 -oE '^Dictionary: [0-9]+ entries' "$WORK/check/$name.log" | sed 's/^D/, d/'))"
  else
    failed=$((failed + 1))
    echo "oss_fuzz_build: $name: FAILED"
    sed 's/^/  /' <<<"$problems"
  fi
done
for dict in "$OUT"/*.dict; do
  [[ -e $dict ]] || continue
  if [[ ! -x ${dict%.dict} ]]; then
    failed=$((failed + 1))
    echo "oss_fuzz_build: $(basename "$dict"): FAILED: no fuzz target of that name"
  fi
done
echo "oss_fuzz_build: $passed targets passed, $failed failed (\$OUT is $OUT)"
((failed == 0))
