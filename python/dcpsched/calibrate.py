"""Measures a cost profile on this machine's GPU: python3 -m dcpsched.calibrate.

    python3 -m dcpsched.calibrate --model llama3-8b --output my.json
    python3 -m dcpsched.calibrate --hidden 4096 --q-heads 32 --kv-heads 8 \\
        --head-dim 128 --ffn 14336 --output my.json [--quick]

Times one layer of the given per-GPU shape (dcpsched.layer), forward plus
backward, in bf16 on the CUDA device, and writes a dcpsched.cost_profile.v1
document (dcpsched.cost_profile):

1. attention per sequence, causal and full, at lengths 64 .. 65536 (powers
   of two): scaled_dot_product_attention with the flash backend, a batch of
   equal-length sequences filling --token-budget tokens, divided by the
   batch size;
2. the rest of the layer (two RMSNorms, the QKV and output projections, the
   SwiGLU MLP, residual adds, weight gradients) at 128 .. 131072 tokens;
3. random THD packs (lognormal lengths filling 4096, 16384 and 65536-token
   budgets, and one sequence of each budget) timed as whole layers with
   varlen flash attention; the model's relative error on them
   (dcpsched.cost_model: lin(sum lens) + sum causal(len)) goes into
   `validation`.

Each time is the median of --repeats runs timed with CUDA events after
--warmup runs (dcpsched.timing.CudaEventTimer). Tables are raised to their
running maximum, each raised point recorded in provenance.raised_points, as
scripts/make_cost_profiles.py does. Progress goes to stdout.

Without a CUDA device it exits 2: real figures need the GPU the profile is
for. `--device cpu` runs the same pipeline on the CPU in float32 with the
wall clock (tiny shapes; for trying the pipeline, never a profile to use;
the profile says so). When the flash kernel or a varlen kernel is missing
it says so, uses the fallback (dcpsched.attention_kernels) and records it
in the profile's `software` block.

Exit status: 0 written; 2 no CUDA device or a bad command line; 3 the
measurement failed (a message and traceback). Needs torch; run from a
source tree with PYTHONPATH=python, the compiled extension is not needed.
"""

from __future__ import annotations

import argparse
import datetime
import math
import pathlib
import random
import sys
import traceback
from typing import Callable, Dict, List, Optional, Sequence

from dcpsched.cost_model import CostModel, validation_figures
from dcpsched.cost_profile import dump_profile, parse_profile, running_maximum

SCHEMA = "dcpsched.cost_profile.v1"


def powers_of_two(low: int, high: int) -> List[int]:
    """low, 2 low, 4 low, ... up to high (low and high powers of two or not)."""
    points, point = [], low
    while point <= high:
        points.append(point)
        point *= 2
    return points


def random_packs(budgets: Sequence[int], per_budget: int, min_length: int, seed: int
                 ) -> List[List[int]]:
    """THD packs to validate with: per budget, per_budget - 1 packs of lognormal
    lengths (median budget / 16, at least min_length) filling the budget, and
    one sequence of the whole budget."""
    rng = random.Random(seed)
    packs = []
    for budget in budgets:
        for _ in range(per_budget - 1):
            pack, left, misses = [], budget, 0
            while misses < 20:
                length = max(min_length, int(math.exp(rng.gauss(math.log(budget / 16), 1.2))))
                if length <= left:
                    pack.append(length)
                    left -= length
                else:
                    misses += 1
            packs.append(pack or [budget])
        if per_budget:
            packs.append([budget])
    return packs


class Calibration:
    """The measuring pipeline: a layer, a timer and a progress printer."""

    def __init__(self, layer, timer, progress: Callable[[str], None] = print):
        self.layer, self.timer, self.progress = layer, timer, progress

    def attention(self, mask: str, lengths: Sequence[int], token_budget: int) -> List[float]:
        """Seconds per sequence at each length."""
        from dcpsched.timing import Measurement
        seconds = []
        for length in lengths:
            batch = max(1, token_budget // length)
            work = self.layer.attention_work(mask, length, batch)
            total = self.timer.time(work, Measurement("attention", mask=mask, length=length,
                                                      batch=batch))
            del work
            seconds.append(total / batch)
            self.progress(f"  attention {mask:6} L={length:6d} x{batch:<5d} "
                          f"{seconds[-1] * 1e3:10.4f} ms per sequence")
        return seconds

    def non_attention(self, tokens: Sequence[int]) -> List[float]:
        """Seconds of the rest of the layer at each token count."""
        from dcpsched.timing import Measurement
        seconds = []
        for count in tokens:
            work = self.layer.non_attention_work(count)
            seconds.append(self.timer.time(work, Measurement("non_attention", tokens=count)))
            del work
            self.progress(f"  non-attention T={count:7d} {seconds[-1] * 1e3:10.4f} ms")
        return seconds

    def packs(self, packs: Sequence[Sequence[int]]) -> List[float]:
        """Whole-layer seconds of each THD pack on one rank."""
        from dcpsched.timing import Measurement
        seconds = []
        for lengths in packs:
            samples = tuple((length, 1) for length in lengths)
            work = self.layer.rank_work(samples)
            seconds.append(self.timer.time(work, Measurement("layer", samples=samples)))
            del work
            self.progress(f"  pack of {len(lengths):3d} sequences, {sum(lengths):6d} tokens: "
                          f"{seconds[-1] * 1e3:10.4f} ms")
        return seconds


def build_profile(calibration: Calibration, *, name: str, description: str,
                  device: Dict[str, object], software: Dict[str, object],
                  model: Dict[str, object], dtype: str, lengths: Sequence[int],
                  tokens: Sequence[int], token_budget: int, packs: Sequence[Sequence[int]],
                  source: str, note: str) -> Dict[str, object]:
    """Measures everything and returns the profile document."""
    progress = calibration.progress
    tables, raised = {}, []
    for mask in ("causal", "full"):
        progress(f"attention, {mask} ({len(lengths)} lengths)")
        seconds, more = running_maximum(f"attention.{mask}", lengths,
                                        calibration.attention(mask, lengths, token_budget))
        tables[mask] = {"lengths": list(lengths), "seconds": seconds}
        raised += more
    progress(f"non-attention part ({len(tokens)} token counts)")
    lin, more = running_maximum("non_attention", tokens, calibration.non_attention(tokens))
    raised += more
    for point in raised:
        progress(f"  raised {point['table']} at {point['at']} from {point['measured']:.6g} s "
                 f"to {point['raised_to']:.6g} s (running maximum)")
    document = {
        "schema": SCHEMA, "name": name, "description": description, "device": device,
        "software": software, "model": model, "dtype": dtype, "passes": "forward+backward",
        "interpolation": "log-log",
        "attention": {"causal": tables["causal"], "full": tables["full"]},
        "non_attention": {"tokens": list(tokens), "seconds": lin},
        "communication": None,
    }
    progress(f"validation: {len(packs)} THD packs as whole layers")
    measured = calibration.packs(packs)
    model_ = CostModel(parse_profile(document, name))
    figures = validation_figures(model_, zip(packs, measured))
    for lengths, seconds in zip(packs, measured):
        modelled = model_.pack_seconds(lengths)
        progress(f"  {sum(lengths):6d} tokens in {len(lengths):3d}: measured "
                 f"{seconds * 1e3:9.3f} ms, modelled {modelled * 1e3:9.3f} ms "
                 f"({(modelled - seconds) / seconds:+.1%})")
    document["validation"] = {
        "method": (f"whole-layer time of {len(packs)} random THD packs (varlen attention "
                   f"{software.get('varlen_kernel', '?')}, causal) against the model, each "
                   "pack on one rank: lin(sum lens) + sum causal(len); relative error "
                   "|model - measured| / measured"),
        **figures,
    }
    document["provenance"] = {"source": source,
                              "measured": datetime.date.today().isoformat(),
                              "raised_points": raised, "note": note}
    return document


def parse_arguments(argv: Optional[Sequence[str]]):
    """The command line (see the module docstring)."""
    from dcpsched.layer import MODELS
    parser = argparse.ArgumentParser(
        prog="python3 -m dcpsched.calibrate",
        description="Measure a dcpsched cost profile (one layer, forward+backward) on the "
                    "local CUDA GPU; real figures need CUDA.")
    shape = parser.add_argument_group("layer shape (per GPU): --model, or all five numbers")
    shape.add_argument("--model", choices=sorted(MODELS), help="a known shape")
    for flag in ("--hidden", "--q-heads", "--kv-heads", "--head-dim", "--ffn"):
        shape.add_argument(flag, type=int)
    shape.add_argument("--tensor-parallel", type=int, default=1,
                       help="recorded in the profile; give heads and ffn per GPU")
    parser.add_argument("--output", type=pathlib.Path, required=True, help="profile file")
    parser.add_argument("--name", help="profile name (default: <device>-<model>)")
    parser.add_argument("--min-length", type=int, default=64)
    parser.add_argument("--max-length", type=int, default=65536)
    parser.add_argument("--min-tokens", type=int, default=128)
    parser.add_argument("--max-tokens", type=int, default=131072)
    parser.add_argument("--token-budget", type=int, default=65536,
                        help="tokens per attention batch (sequences of one length)")
    parser.add_argument("--pack-budgets", default="4096,16384,65536",
                        help="comma-separated token budgets of the validation packs")
    parser.add_argument("--packs-per-budget", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true",
                        help="lengths to 16384, tokens to 32768, budgets 4096 and 16384, "
                             "2 warm-up runs and 5 repeats")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"),
                        help="cpu: try the pipeline on a tiny shape (float32, wall clock); "
                             "its figures are not a GPU's")
    args = parser.parse_args(argv)
    args.command_line = list(sys.argv[1:] if argv is None else argv)
    numbers = [args.hidden, args.q_heads, args.kv_heads, args.head_dim, args.ffn]
    if args.model and any(n is not None for n in numbers):
        parser.error("give --model or the five numbers, not both")
    if not args.model and any(n is None for n in numbers):
        parser.error("give --model NAME or all of --hidden --q-heads --kv-heads --head-dim --ffn")
    if args.quick:
        args.max_length = min(args.max_length, 16384)
        args.max_tokens = min(args.max_tokens, 32768)
        args.pack_budgets = ",".join(b for b in args.pack_budgets.split(",")
                                     if int(b) <= 16384) or "4096"
        args.warmup, args.repeats = min(args.warmup, 2), min(args.repeats, 5)
    return parser, args


def layer_shape(args):
    """The LayerShape the arguments name."""
    from dcpsched.layer import MODELS, LayerShape
    if args.model:
        return MODELS[args.model]
    return LayerShape(f"custom-h{args.hidden}-q{args.q_heads}-kv{args.kv_heads}-"
                      f"d{args.head_dim}-f{args.ffn}", args.hidden, args.q_heads, args.kv_heads,
                      args.head_dim, args.ffn, args.tensor_parallel)


def device_block(torch, device) -> Dict[str, object]:
    """The profile's "device" block for the device measured on."""
    if device.type != "cuda":
        return {"name": "cpu (not a GPU: pipeline trial only)", "sms": 0, "memory_gib": 0}
    props = torch.cuda.get_device_properties(device)
    return {"name": props.name, "sms": props.multi_processor_count,
            "memory_gib": round(props.total_memory / 2**30, 1)}


def main(argv: Optional[Sequence[str]] = None, timer=None) -> int:
    """The CLI; `timer` replaces the device's timer (tests inject a synthetic one)."""
    parser, args = parse_arguments(argv)
    try:
        import torch
    except ImportError:
        print("dcpsched.calibrate: needs torch (and a CUDA GPU for real figures)", file=sys.stderr)
        return 2
    if args.device == "cuda" and not torch.cuda.is_available():
        print("dcpsched.calibrate: no CUDA device: a cost profile needs real figures, "
              "measured on the CUDA GPU it is for. Run it on that machine "
              "(--device cpu only tries the pipeline on a tiny shape).", file=sys.stderr)
        return 2
    try:
        return run(args, torch, timer)
    except Exception:  # noqa: BLE001: report any failure as "not measured"
        traceback.print_exc()
        print("dcpsched.calibrate: the measurement failed; no profile written", file=sys.stderr)
        return 3


def run(args, torch, timer) -> int:
    """Measures and writes the profile for parsed arguments."""
    from dcpsched.layer_session import open_layer_session
    shape = layer_shape(args)
    session = open_layer_session("dcpsched.calibrate", args, torch, shape, timer)
    device, dtype, kernels = session.device, session.dtype, session.kernels
    layer, timer = session.layer, session.timer
    budgets = [int(b) for b in args.pack_budgets.split(",") if b]
    device_info = device_block(torch, device)
    name = args.name or (device_info["name"].lower().replace(" ", "-").split("(")[0].strip("-")
                         + "-" + shape.name)
    software = {"torch": torch.__version__, "cuda": torch.version.cuda,
                "attention_kernel": kernels.dense_name, "varlen_kernel": kernels.varlen_name}
    if kernels.notes:
        software["notes"] = kernels.notes
    document = build_profile(
        Calibration(layer, timer, lambda line: print(line, flush=True)),
        name=name,
        description=f"One {shape.name} layer on {device_info['name']}, measured by "
                    "python3 -m dcpsched.calibrate",
        device=device_info, software=software, model=shape.as_profile_model(),
        dtype="bf16" if dtype == torch.bfloat16 else "fp32",
        lengths=powers_of_two(args.min_length, args.max_length),
        tokens=powers_of_two(args.min_tokens, args.max_tokens),
        token_budget=args.token_budget,
        packs=random_packs(budgets, args.packs_per_budget, args.min_length, args.seed),
        source="python3 -m dcpsched.calibrate " + " ".join(args.command_line),
        note=(f"Medians of {args.repeats} runs after {args.warmup} warm-up runs "
              f"({type(timer).__name__}), random data. Communication is not measured."))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(dump_profile(document))
    figures = document["validation"]
    print(f"wrote {args.output}: profile {name}; validation on {figures['cases']} packs: max "
          f"relative error {figures['max_relative_error']}, mean "
          f"{figures['mean_relative_error']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
