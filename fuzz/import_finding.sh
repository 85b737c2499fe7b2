#!/usr/bin/env bash
# Turns crash files from anywhere (a CI artifact, ClusterFuzzLite, a
# colleague, fuzz/run_fuzzers.sh) into named, minimized regressions.
#
#   fuzz/import_finding.sh [--build DIR] [--corpus-root DIR] TARGET FILE_OR_ARTIFACT...
#
#   TARGET          fuzz_<what>: the target that crashed
#   FILE_OR_ARTIFACT  a crash file, a directory of them (searched recursively,
#                   e.g. an unpacked ClusterFuzzLite artifact) or a .zip of
#                   them (a downloaded GitHub Actions artifact); *.summary
#                   files (ClusterFuzzLite's stack traces) and .gitkeep are
#                   skipped
#   --build DIR     where the libFuzzer binaries are (default: build them with
#                   fuzz/build_fuzzers.sh TARGET, ASan + UBSan, into build/fuzz)
#   --corpus-root DIR  store under DIR/<target>/regressions/ (default corpus)
#
# Each file is run once through the target. If it crashes, it is minimized
# (-minimize_crash=1, seed 1), named <what-broke>-<sha1 prefix> after the first
# report line of the crash ("dcpsched <target>: <what>: ...", else the
# sanitizer's summary, timeout, out-of-memory, leak or crash), and stored as
# <corpus-root>/<target>/regressions/<name>. Then the one-line command that
# reproduces it is printed. The corpus replay test (ctest label "corpus")
# runs every stored regression in every build from then on.
# Exit status: 0 if every file crashed and is stored (or was already); 1 if
# some file did not reproduce; 2 on a usage error.
set -euo pipefail
cd "$(dirname "$0")/.."

build=""
root=corpus
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --corpus-root) root=$2; shift 2 ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
if (($# < 2)); then
  echo "usage: fuzz/import_finding.sh [--build DIR] [--corpus-root DIR] TARGET FILE_OR_ARTIFACT..." >&2
  exit 2
fi
target=$1
shift
[[ -n $build ]] || build=$(fuzz/build_fuzzers.sh "$target")
if [[ ! -x $build/$target ]]; then
  echo "import_finding: no fuzz target $build/$target" >&2
  exit 2
fi
work=$(mktemp -d /tmp/dcpsched-import.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Every crash file named on the command line, one a line.
crash_files() {
  local source unpacked n=0
  for source in "$@"; do
    if [[ -d $source ]]; then
      find "$source" -type f ! -name '*.summary' ! -name '.gitkeep' | sort
    elif [[ $source == *.zip ]]; then
      n=$((n + 1))
      unpacked=$work/zip$n
      mkdir -p "$unpacked"
      unzip -q "$source" -d "$unpacked"
      find "$unpacked" -type f ! -name '*.summary' ! -name '.gitkeep' | sort
    elif [[ -f $source ]]; then
      echo "$source"
    else
      echo "import_finding: no such file or directory: $source" >&2
      return 1
    fi
  done
}

# A short name for what broke, from a crash log.
what_broke() {
  local log=$1 line
  line=$(grep -m1 -oE 'dcpsched [a-z_]+: [^:]+' "$log" | sed 's/^dcpsched [a-z_]*: //' || true)
  [[ -z $line ]] && line=$(grep -m1 -oE 'SUMMARY: [A-Za-z]+Sanitizer: [a-z-]+' "$log" | awk '{print $3}' || true)
  [[ -z $line ]] && grep -q 'ERROR: libFuzzer: timeout' "$log" && line=timeout
  [[ -z $line ]] && grep -q 'out-of-memory' "$log" && line=out-of-memory
  [[ -z $line ]] && grep -q 'detected memory leaks' "$log" && line=leak
  [[ -z $line ]] && line=crash
  echo "$line" | tr 'A-Z' 'a-z' | tr -cs 'a-z0-9' '-' | sed 's/^-//; s/-$//' | cut -c1-48
}

fuzzer_options=(-timeout=10 -rss_limit_mb=2048)

# Reproduces, minimizes and stores one file; 1 if it does not crash.
import_one() {
  local file=$1 log=$work/run.log minimized=$work/minimized
  if "$build/$target" "${fuzzer_options[@]}" -runs=1 "$file" >"$log" 2>&1; then
    echo "$target: $file does not reproduce (runs cleanly); not stored"
    return 1
  fi
  local broke
  broke=$(what_broke "$log")
  rm -f "$minimized"
  # A fixed seed: the same crash minimizes to the same file, so importing it
  # twice is noticed.
  "$build/$target" "${fuzzer_options[@]}" -minimize_crash=1 -runs=20000 -seed=1 \
    -exact_artifact_path="$minimized" "$file" >"$work/minimize.log" 2>&1 || true
  # Keep the minimized file only if it still breaks the same way.
  if [[ ! -s $minimized ]] ||
     "$build/$target" "${fuzzer_options[@]}" -runs=1 "$minimized" >"$work/check.log" 2>&1 ||
     [[ $(what_broke "$work/check.log") != "$broke" ]]; then
    cp "$file" "$minimized"
  fi
  local dir=$root/$target/regressions
  mkdir -p "$dir"
  local existing
  existing=$(find "$dir" -maxdepth 1 -type f -exec cmp -s "$minimized" {} \; -print -quit)
  if [[ -n $existing ]]; then
    echo "$target: $file: $broke; already stored as $existing"
  else
    local name
    name="$broke-$(sha1sum "$minimized" | cut -c1-10)"
    cp "$minimized" "$dir/$name"
    existing=$dir/$name
    echo "$target: $file: $broke; stored $existing ($(stat -c %s "$file") -> $(stat -c %s "$minimized") bytes)"
  fi
  grep -m1 -E "^dcpsched $target: " "$log" | sed 's/^/  /' || true
  echo "  reproduce: $build/$target $existing"
}

mapfile -t files < <(crash_files "$@")
if ((${#files[@]} == 0)); then
  echo "import_finding: no crash files in $*" >&2
  exit 2
fi
status=0
for file in "${files[@]}"; do
  import_one "$file" || status=1
done
exit "$status"
