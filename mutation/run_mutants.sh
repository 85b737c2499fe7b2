#!/usr/bin/env bash
# Mutation testing of the core, scored per layer of the suite (docs/mutation.md).
#
#   mutation/run_mutants.sh [OPTIONS] [MUTANT...]
#
# Builds the core with each mutant of mutation/mutants/ (all, or those named)
# and runs every layer of the suite on it separately:
#
#   unit        ctest label unit, without golden_test and mutant_files
#   properties  ctest label properties (RapidCheck)
#   corpus      ctest label corpus (every stored fuzz input, replayed)
#   fuzz        the core's five libFuzzer targets (clang-14, ASan+UBSan),
#               each for --fuzz-seconds from its committed corpus (new inputs
#               go to a scratch directory), two at a time; the layer stops
#               at the first crash
#   golden      golden_test (all upstream golden vectors)
#
# A layer kills a mutant when any of its tests fails (ctest layers stop at
# the first failure) or any fuzz target crashes. The table (mutant x layer:
# killed after how many seconds, or survived) is printed and written to
# mutation/results.md. The unmutated core runs first as a control: every
# layer must pass on it, or the run stops.
#
# Options:
#   --list                print the mutants (name, file, description) and exit
#   --layers LIST         comma-separated layers to run (default
#                         unit,properties,corpus,fuzz,golden)
#   --fuzz-seconds N      time per fuzz target (default 20)
#   --fuzz-from WHAT      what fuzzing starts from: "corpus" (default: all of
#                         corpus/fuzz_<t>/, as CI) or "seeds" (only the named
#                         seeds in corpus/fuzz_<t>/seeds/, no coverage corpus
#                         and no regressions: do the fuzzers find it anew?)
#   --seed N              RapidCheck and libFuzzer seed (default 1), so that a
#                         rerun reproduces the table; "random" for a fresh one
#   --property-cases N    RapidCheck cases per property (default 1000, as ctest)
#   -j, --jobs N          build and test parallelism (default 2)
#   --build-root DIR      build directories (default build/mutants)
#   --out FILE            where the table goes (default mutation/results.md)
#   --no-baseline         skip the unmutated control run
#   -h, --help            this text
#
# Builds are cached: one g++ test build and one clang fuzz build, each
# reconfigured per mutant (-DDCPSCHED_MUTANT=<name>), so a mutant costs one
# compiled file and the relinks. corpus/ is never written to: fuzzing reads
# it and writes new inputs and crashes to a scratch directory.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }

all_layers=(unit properties corpus fuzz golden)
layers_arg=$(IFS=,; echo "${all_layers[*]}")
fuzz_seconds=20
fuzz_from=corpus
seed=1
property_cases=1000
jobs=2
root=build/mutants
out=mutation/results.md
baseline=1
list_only=0
selected=()
while (($#)); do
  case $1 in
    --list) list_only=1; shift ;;
    --layers) layers_arg=$2; shift 2 ;;
    --fuzz-seconds) fuzz_seconds=$2; shift 2 ;;
    --fuzz-from) fuzz_from=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --property-cases) property_cases=$2; shift 2 ;;
    -j|--jobs) jobs=$2; shift 2 ;;
    --build-root) root=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --no-baseline) baseline=0; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
    *) selected+=("$1"); shift ;;
  esac
done

field() {  # field <mutant-file> <key>: the value of a "key: value" header line
  sed -n "s/^$2: *//p" "$1" | head -n1
}

mapfile -t mutant_files < <(find mutation/mutants -name '*.mutant' | sort)
if ((list_only)); then
  for f in "${mutant_files[@]}"; do
    printf '%-32s %-22s %s\n' "$(basename "$f" .mutant)" "$(field "$f" file)" \
      "$(field "$f" description)"
  done
  exit 0
fi

IFS=, read -r -a layers <<<"$layers_arg"
for layer in "${layers[@]}"; do
  [[ " ${all_layers[*]} " == *" $layer "* ]] || {
    echo "unknown layer '$layer' (layers: ${all_layers[*]})" >&2; exit 2; }
done
has_layer() { [[ " ${layers[*]} " == *" $1 "* ]]; }

mutants=()
if ((${#selected[@]})); then
  for name in "${selected[@]}"; do
    [[ -f mutation/mutants/$name.mutant ]] || {
      echo "no mutant '$name' (see --list)" >&2; exit 2; }
    mutants+=("$name")
  done
else
  for f in "${mutant_files[@]}"; do mutants+=("$(basename "$f" .mutant)"); done
fi
[[ $fuzz_from == corpus || $fuzz_from == seeds ]] || {
  echo "--fuzz-from takes corpus or seeds, not '$fuzz_from'" >&2; exit 2; }
if [[ $seed == random ]]; then seed=$((RANDOM * 32768 + RANDOM)); fi

gcc_dir=$root/gcc
fuzz_dir=$root/fuzz
mkdir -p "$root"
work=$(mktemp -d /tmp/dcpsched-mutants.XXXXXX)
# The fuzzers running now (fuzz_layer empties it before it returns): however
# the script ends, they are stopped and the scratch directory goes.
pids=()
cleanup() {
  if ((${#pids[@]})); then
    kill -KILL "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
logs=$root/logs
mkdir -p "$logs"
run_start=$(date +%s.%N)

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# The core's fuzz targets, the likeliest killer first for the mutated file.
fuzz_targets_for() {
  case $1 in
    core/vpp_align.cc)
      echo fuzz_vpp_align fuzz_packing_aware_differential fuzz_packing_aware fuzz_legacy \
        fuzz_dp_balanced ;;
    core/dp_balanced.cc)
      echo fuzz_dp_balanced fuzz_packing_aware_differential fuzz_packing_aware \
        fuzz_vpp_align fuzz_legacy ;;
    core/legacy.cc|core/group_layout.cc)
      echo fuzz_legacy fuzz_packing_aware_differential fuzz_packing_aware fuzz_vpp_align \
        fuzz_dp_balanced ;;
    *)
      echo fuzz_packing_aware_differential fuzz_packing_aware fuzz_vpp_align fuzz_legacy \
        fuzz_dp_balanced ;;
  esac
}
all_fuzz_targets=(fuzz_packing_aware_differential fuzz_packing_aware fuzz_vpp_align
                  fuzz_legacy fuzz_dp_balanced)

# configure <dir> <mutant> <cmake args...>: (re)configures, quietly.
configure() {
  local dir=$1 mutant=$2
  shift 2
  if ! cmake -S . -B "$dir" -G Ninja -DDCPSCHED_MUTANT="$mutant" "$@" \
       >"$logs/configure-$(basename "$dir").log" 2>&1; then
    cat "$logs/configure-$(basename "$dir").log" >&2
    return 1
  fi
}

# Both builds link with lld: a mutant relinks every test program, and lld
# does that three times faster than ld.bfd here. The property cases carry a
# fixed RapidCheck seed (RC_PARAMS="max_success=N seed=S").
build_gcc() {  # build_gcc <mutant>
  configure "$gcc_dir" "$1" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=g++ \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DDCPSCHED_BENCH=OFF -DDCPSCHED_PYTHON=OFF \
    "-DDCPSCHED_PROPERTY_CASES=$property_cases seed=$seed" &&
    cmake --build "$gcc_dir" -j "$jobs" >"$logs/build-gcc.log" 2>&1
}

build_fuzz() {  # build_fuzz <mutant>
  CC=clang-14 CXX=clang++-14 configure "$fuzz_dir" "$1" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DDCPSCHED_FUZZ=ON -DDCPSCHED_BUILD_TESTS=OFF \
    -DDCPSCHED_PYTHON=OFF &&
    cmake --build "$fuzz_dir" -j "$jobs" --target "${all_fuzz_targets[@]}" \
      >"$logs/build-fuzz.log" 2>&1
}

# A ctest layer: sets `result` to "killed <s>" or "survived <s>" and
# `detail` to the failing tests. ctest stops at the first failure.
ctest_layer() {  # ctest_layer <name> <ctest selection args...>
  local name=$1 log=$logs/$mutant-$1.log start
  shift
  start=$(now)
  if ctest --test-dir "$gcc_dir" "$@" -j "$jobs" --timeout 300 --stop-on-failure \
       --output-on-failure >"$log" 2>&1; then
    if ! grep -qE '100% tests passed, 0 tests failed out of [1-9]' "$log"; then
      echo "layer $name ran no tests; see $log" >&2
      exit 1
    fi
    result="survived $(since "$start")"
    detail=""
  else
    result="killed $(since "$start")"
    detail=$(sed -n '/The following tests FAILED/,$p' "$log" | grep -oE '^\s+[0-9]+ - [^ ]+' |
             awk '{print $3}' | head -n3 | paste -sd' ' -)
    [[ -n $detail ]] || detail="(see $log)"
  fi
}

# The fuzz layer: the targets for the mutated file, $jobs at a time, each
# from a scratch copy of its committed corpus for $fuzz_seconds. Stops at the
# first crash; notes whether it came from the stored corpus (before
# libFuzzer's INITED line) or from a new input.
fuzz_layer() {  # fuzz_layer <mutated file>
  local start targets names=() target scratch log
  pids=()
  start=$(now)
  read -r -a targets <<<"$(fuzz_targets_for "$1")"
  result="" detail=""
  local next=0 running=0 crashed=""
  launch() {
    local target=$1
    scratch=$work/$mutant-$target
    rm -rf "$scratch"
    mkdir -p "$scratch/new" "$scratch/artifacts"
    local options=(-max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048
                   -seed="$seed" -artifact_prefix="$scratch/artifacts/")
    [[ -f corpus/$target.dict ]] && options+=(-dict="corpus/$target.dict")
    # New inputs go to the first directory (scratch); corpus/ is only read.
    local from=corpus/$target
    [[ $fuzz_from == seeds ]] && from=corpus/$target/seeds
    "$fuzz_dir/$target" "${options[@]}" "$scratch/new" "$from" \
      >"$logs/$mutant-$target.log" 2>&1 &
    pids+=($!)
    names+=("$target")
  }
  while ((next < ${#targets[@]} && running < jobs)); do
    launch "${targets[next]}"; next=$((next + 1)); running=$((running + 1))
  done
  while ((running > 0)); do
    local finished_pid status=0
    wait -n -p finished_pid "${pids[@]}" || status=$?
    running=$((running - 1))
    local i
    for i in "${!pids[@]}"; do
      [[ ${pids[i]} == "$finished_pid" ]] || continue
      target=${names[i]}
      unset 'pids[i]' 'names[i]'
      pids=("${pids[@]}") names=("${names[@]}")
      break
    done
    if ((status != 0)); then
      crashed=$target
      break
    fi
    if ((next < ${#targets[@]})); then
      launch "${targets[next]}"; next=$((next + 1)); running=$((running + 1))
    fi
  done
  if [[ -n $crashed ]]; then
    result="killed $(since "$start")"
    # SIGKILL: a libFuzzer process stopped with SIGTERM can hang in its exit
    # handlers, and its output is not needed.
    local pid
    for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    log=$logs/$mutant-$crashed.log
    local when="new input"
    # libFuzzer prints "INITED" once the stored inputs have run.
    grep -q 'INITED' "$log" || when="stored $fuzz_from"
    local what
    what=$(grep -m1 -oE 'dcpsched [a-z_]+: [^:;]+' "$log" | sed 's/^dcpsched [a-z_]*: //' || true)
    [[ -n $what ]] || what=$(grep -m1 -oE 'SUMMARY: [A-Za-z]+Sanitizer: [a-z-]+' "$log" |
                             awk '{print $3}' || true)
    [[ -n $what ]] || what=$(grep -m1 -oE 'ERROR: libFuzzer: [a-z-]+' "$log" |
                             awk '{print $3}' || true)
    detail="$crashed ($when): ${what:-crash}"
  else
    result="survived $(since "$start")"
  fi
  pids=()
}

cell() {  # cell "killed 12.3" -> "**killed** 12.3 s"
  case $1 in
    killed*) echo "killed ${1#killed } s" ;;
    survived*) echo "survived (${1#survived } s)" ;;
    *) echo "$1" ;;
  esac
}

declare -A table details
rows=()
run_one() {  # run_one <mutant or ""> <label>
  mutant=${1:-baseline}
  local label=$2 file="" start layer
  [[ -n $1 ]] && file=$(field "mutation/mutants/$1.mutant" file)
  echo "=== $label${file:+ ($file)}"
  start=$(now)
  # The two builds overlap: each spends most of its time compiling one file.
  local fuzz_pid="" fuzz_status=0
  if has_layer fuzz; then
    build_fuzz "$1" &
    fuzz_pid=$!
  fi
  local needs_gcc=0
  for layer in unit properties corpus golden; do has_layer "$layer" && needs_gcc=1; done
  if ((needs_gcc)) && ! build_gcc "$1"; then
    [[ -z $fuzz_pid ]] || wait "$fuzz_pid" || true
    echo "g++ build of $label failed; see $logs/build-gcc.log" >&2
    tail -n 30 "$logs/build-gcc.log" >&2
    exit 1
  fi
  [[ -z $fuzz_pid ]] || wait "$fuzz_pid" || fuzz_status=$?
  if ((fuzz_status != 0)); then
    echo "clang fuzz build of $label failed; see $logs/build-fuzz.log" >&2
    tail -n 30 "$logs/build-fuzz.log" >&2
    exit 1
  fi
  table[$mutant,build]=$(since "$start")
  echo "    built in ${table[$mutant,build]} s"
  for layer in "${all_layers[@]}"; do
    has_layer "$layer" || { table[$mutant,$layer]="-"; continue; }
    case $layer in
      unit) ctest_layer unit -L '^unit$' -E '^(golden_test|mutant_files)$' ;;
      properties) ctest_layer properties -L properties ;;
      corpus) ctest_layer corpus -L corpus ;;
      golden) ctest_layer golden -R '^golden_test$' ;;
      fuzz) fuzz_layer "${file:-core/packing_aware.cc}" ;;
    esac
    table[$mutant,$layer]=$result
    details[$mutant,$layer]=$detail
    printf '    %-10s %s%s\n' "$layer" "$result" "${detail:+  [$detail]}"
  done
  rows+=("$mutant")
}

if ((baseline)); then
  run_one "" "baseline (no mutant)"
  for layer in "${layers[@]}"; do
    if [[ ${table[baseline,$layer]} == killed* ]]; then
      echo "the unmutated core fails layer $layer (${details[baseline,$layer]}); fix that first" >&2
      exit 1
    fi
  done
fi
for name in "${mutants[@]}"; do run_one "$name" "mutant $name"; done
total=$(since "$run_start")

# --- the table -------------------------------------------------------------
{
  echo "# Mutation testing results"
  echo
  echo "Written by \`mutation/run_mutants.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'), core at"
  echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown) ($(nproc) cores, load average" \
       "$(cut -d' ' -f1-3 /proc/loadavg) at the end). Seed $seed, fuzz ${fuzz_seconds} s per target from the stored $fuzz_from," \
       "$jobs jobs. Total wall time $(awk -v t="$total" 'BEGIN { printf "%d min %d s", t / 60, t % 60 }')."
  echo
  echo "Each cell: killed after how many seconds of that layer (ctest layers stop at"
  echo "the first failing test; fuzz stops at the first crash), or survived (the"
  echo "layer's whole run time). **P/F** says whether the properties or the fuzzers"
  echo "killed the mutant on their own."
  echo
  echo "| mutant | file | build s | unit | properties | corpus | fuzz | golden | P/F |"
  echo "| --- | --- | ---: | --- | --- | --- | --- | --- | --- |"
  killed_pf=0
  count=0
  for m in "${rows[@]}"; do
    f="-"
    [[ $m != baseline ]] && f=$(field "mutation/mutants/$m.mutant" file)
    pf="no"
    if [[ ${table[$m,properties]} == killed* || ${table[$m,fuzz]} == killed* ]]; then pf="yes"; fi
    if [[ $m == baseline ]]; then
      pf="(control)"
    else
      count=$((count + 1))
      [[ $pf == yes ]] && killed_pf=$((killed_pf + 1))
    fi
    echo "| \`$m\` | ${f#core/} | ${table[$m,build]} | $(cell "${table[$m,unit]}") |" \
         "$(cell "${table[$m,properties]}") | $(cell "${table[$m,corpus]}") |" \
         "$(cell "${table[$m,fuzz]}") | $(cell "${table[$m,golden]}") | $pf |"
  done
  echo
  echo "Killed by the properties or the fuzzers: $killed_pf of $count mutants."
  echo
  echo "## What killed each mutant"
  echo
  echo "First failing tests per ctest layer (at most three), and the fuzz target"
  echo "that crashed first, whether on an input of its stored corpus or on a new"
  echo "one it generated, and what it reported."
  echo
  for m in "${rows[@]}"; do
    [[ $m == baseline ]] && continue
    echo "- \`$m\`: $(field "mutation/mutants/$m.mutant" description)"
    for layer in "${all_layers[@]}"; do
      [[ -n ${details[$m,$layer]:-} ]] && echo "  - $layer: ${details[$m,$layer]}"
    done
  done
} >"$out"

sed -n '/^| mutant/,/^Killed by/p' "$out"
echo "table written to $out; logs in $logs; total wall time $total s"
