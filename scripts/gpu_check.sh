#!/bin/bash
# The cost model's GPU check: run ONCE on a rented CUDA GPU (an H200), from
# the source tree, with nothing compiled (Python 3 and torch with CUDA only;
# no network needed):
#
#   OUT=/path/to/results bash scripts/gpu_check.sh
#
# 1. environment: GPU, torch, CUDA, and which attention kernels work
#    (dcpsched.attention_kernels: flash SDPA, varlen_attn / flash_attn);
# 2. calibrate: python3 -m dcpsched.calibrate --model llama3-8b, the full
#    grid (attention 64..65536, the rest of the layer 128..131072 tokens,
#    12 validation packs), written to $OUT/calibrated-llama3-8b.json;
# 3. replay: python3 -m dcpsched.replay with the shipped h200-llama3-8b
#    profile on every bench/replay/*.json (schedules `dcpsched schedule
#    --format json` wrote), each bounded in microbatches and seconds,
#    reports to $OUT/replay-<name>.json.
#
# Every step has its own time limit and log ($OUT/<step>.log, also on
# stdout); a failed or timed-out step does not stop the others, and
# $OUT/steps.txt lists each step's exit status and seconds. The whole run
# stays under 7 minutes. Exit status: 0 if every step succeeded, else 1.
set -u
OUT=${OUT:?set OUT to the directory the results go to}
cd "$(dirname "$0")/.." || exit 1
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT"
: > "$OUT/steps.txt"
failed=0
started=$SECONDS

# step NAME LIMIT_SECONDS COMMAND...: runs COMMAND under a time limit, logs it.
step() {
  local name=$1 limit=$2 begin=$SECONDS rc
  shift 2
  echo "=== $name (limit ${limit} s): $*"
  if command -v timeout >/dev/null; then
    timeout --signal=INT --kill-after=15 "$limit" "$@" 2>&1 | tee "$OUT/$name.log"
  else
    "$@" 2>&1 | tee "$OUT/$name.log"
  fi
  rc=${PIPESTATUS[0]}
  echo "=== $name: exit $rc after $((SECONDS - begin)) s (total $((SECONDS - started)) s)"
  echo "$name exit=$rc seconds=$((SECONDS - begin))" >> "$OUT/steps.txt"
  [ "$rc" -eq 0 ] || failed=1
}

step environment 90 "$PYTHON" -c '
import platform, sys, torch
print("python", platform.python_version(), "torch", torch.__version__, "cuda", torch.version.cuda)
print("cuda available:", torch.cuda.is_available())
if not torch.cuda.is_available():
    sys.exit("no CUDA device: nothing to measure")
p = torch.cuda.get_device_properties(0)
print("device:", p.name, p.multi_processor_count, "SMs", round(p.total_memory / 2**30, 1), "GiB")
from dcpsched.attention_kernels import choose_kernels
k = choose_kernels(torch.device("cuda"), torch.bfloat16)
print("dense attention:", k.dense_name)
print("varlen attention:", k.varlen_name)
for note in k.notes:
    print("note:", note)
'

step calibrate 240 "$PYTHON" -m dcpsched.calibrate --model llama3-8b \
  --output "$OUT/calibrated-llama3-8b.json" --warmup 3 --repeats 10

shopt -s nullglob
schedules=(bench/replay/*.json)
if [ ${#schedules[@]} -eq 0 ]; then
  echo "=== replay: no bench/replay/*.json to replay"
  echo "replay exit=skipped (no bench/replay/*.json)" >> "$OUT/steps.txt"
else
  # What is left of 6 minutes, shared between the schedules (10..90 s of
  # replay each, plus start-up and the last microbatch); at most the 16 rank
  # loads the model prices highest per microbatch; every step ends (killed
  # if need be) by 6 min 40 s.
  left=$((360 - (SECONDS - started)))
  each=$((left / ${#schedules[@]} - 15))
  [ "$each" -gt 90 ] && each=90
  [ "$each" -lt 10 ] && each=10
  for schedule in "${schedules[@]}"; do
    name=$(basename "$schedule" .json)
    remaining=$((400 - 15 - (SECONDS - started)))
    limit=$((each + 30))
    [ "$limit" -gt "$remaining" ] && limit=$remaining
    if [ "$limit" -lt 30 ]; then
      echo "=== replay-$name: skipped, out of time"
      echo "replay-$name exit=skipped (out of time)" >> "$OUT/steps.txt"
      continue
    fi
    step "replay-$name" "$limit" "$PYTHON" -m dcpsched.replay \
      --cost-profile h200-llama3-8b "$schedule" --max-microbatches 16 --ranks 16 \
      --time-limit $((limit - 25)) --json "$OUT/replay-$name.json"
  done
fi

echo "=== done in $((SECONDS - started)) s; steps:"
cat "$OUT/steps.txt"
exit $failed
