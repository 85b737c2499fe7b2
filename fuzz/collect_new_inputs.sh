#!/usr/bin/env bash
# Collects what a fuzzing run found that corpus/ lacks, in the corpus/ layout,
# ready to review and copy into the repository.
#
#   fuzz/collect_new_inputs.sh [--build DIR] [--crashes DIR] FROM DEST
#
#   FROM           corpora, one directory per target: a scratch copy of
#                  corpus/ (the nightly tier) or ClusterFuzzLite's corpus
#                  directory (cifuzz-corpus/<target>/, the batch workflow)
#   DEST           where to write (created; must not exist yet)
#   --crashes DIR  crash files as ClusterFuzzLite stores them
#                  (DIR/<target>/<sanitizer>/<file>, with <file>.summary)
#   --build DIR    the fuzzers that found them, for fuzz/import_finding.sh
#
# Writes
#   DEST/corpus/<target>/<path>  every file of FROM/<target>/ whose contents no
#                  file under corpus/<target>/ has; coverage inputs keep their
#                  libFuzzer name (the SHA-1 of their contents), files in
#                  seeds/ and regressions/ keep their path;
#   DEST/corpus/<target>/regressions/<what-broke>-<hash>  each crash that
#                  reproduces with --build, minimized (fuzz/import_finding.sh);
#   DEST/unimported/<target>/  the other crashes as found, with their stack
#                  traces, for fuzz/import_finding.sh on a developer machine.
# Prints a count per target and where everything is. `cp -r DEST/corpus .`
# adds it all to the repository's corpus.
set -euo pipefail
cd "$(dirname "$0")/.."

build=""
crashes=""
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --crashes) crashes=$2; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
if (($# != 2)); then
  echo "usage: fuzz/collect_new_inputs.sh [--build DIR] [--crashes DIR] FROM DEST" >&2
  exit 2
fi
from=$1 dest=$2
if [[ -e $dest ]]; then
  echo "collect_new_inputs: $dest exists; name a new directory" >&2
  exit 2
fi
mkdir -p "$dest/corpus"

total_new=0
total_crashes=0
for target_dir in "$from"/*/; do
  target=$(basename "$target_dir")
  [[ $target == fuzz_* ]] || continue
  known=$(mktemp)
  if [[ -d corpus/$target ]]; then
    find "corpus/$target" -type f -exec sha1sum {} + | cut -d' ' -f1 | sort -u >"$known"
  fi
  new=0
  while IFS= read -r -d '' file; do
    rel=${file#"$target_dir"}
    [[ $(basename "$rel") == .gitkeep ]] && continue
    sum=$(sha1sum "$file" | cut -d' ' -f1)
    grep -qx "$sum" "$known" && continue
    [[ $rel == */* ]] || rel=$sum
    mkdir -p "$dest/corpus/$target/$(dirname "$rel")"
    cp "$file" "$dest/corpus/$target/$rel"
    echo "$sum" >>"$known"
    new=$((new + 1))
  done < <(find "$target_dir" -type f -print0 | sort -z)
  rm -f "$known"
  ((new == 0)) || echo "collect_new_inputs: $target: $new new inputs"
  total_new=$((total_new + new))
done

if [[ -n $crashes && -d $crashes ]]; then
  while IFS= read -r -d '' crash; do
    rel=${crash#"$crashes"/}
    target=${rel%%/*}
    total_crashes=$((total_crashes + 1))
    if [[ -n $build && -x $build/$target ]] &&
       fuzz/import_finding.sh --build "$build" --corpus-root "$dest/corpus" "$target" "$crash"; then
      continue
    fi
    mkdir -p "$dest/unimported/$target"
    cp "$crash" "$dest/unimported/$target/"
    [[ -f $crash.summary ]] && cp "$crash.summary" "$dest/unimported/$target/"
    echo "collect_new_inputs: $target: crash $rel kept as found in $dest/unimported/$target/"
  done < <(find "$crashes" -mindepth 3 -type f ! -name '*.summary' -print0 | sort -z)
fi

echo "collect_new_inputs: $total_new new inputs, $total_crashes crashes; in the corpus/ layout under $dest/corpus"
