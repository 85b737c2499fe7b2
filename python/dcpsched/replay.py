"""Runs a schedule's rank loads on one GPU and sets them against the cost model.

    python3 -m dcpsched.replay --cost-profile h200-llama3-8b SCHEDULE.json
        [--max-microbatches N] [--ranks K] [--time-limit SECONDS]
        [--json OUT] [--warmup W] [--repeats R] [--model NAME | shape numbers]

SCHEDULE.json is what `dcpsched schedule --format json` writes
(dcpsched.schedule_run.v1, or .v2 with --compact; dcpsched.schedule.v1
too), read by dcpsched.schedule_document. For each microbatch, each
distinct rank load (the (length, cp) samples a rank holds; equal loads
cost the same, so each is timed once for the whole run) runs as a real
layer, forward plus backward, on this GPU (dcpsched.layer.Layer.rank_work):
the non-attention part on the rank's tokens and, per sample, causal varlen
attention (cp = 1) or ring attention's (2cp - 1) full and 2 causal blocks
on zigzag halves of ceil(L / 2cp) tokens (cp > 1). The layer shape is the
profile's `model` block unless --model or the five numbers say otherwise.

It prints, per microbatch, the slowest rank's measured time against the
model's (dcpsched.cost_model with the profile), and for the step (the sum
over the microbatches replayed) measured against modelled and the relative
error (modelled - measured) / measured. Communication is not replayed (one
GPU); a profile with a `communication` block models it, and the report
says the measured side lacks it.

Bounding the run on big schedules: --max-microbatches N replays N
microbatches spread evenly over the schedule; --ranks K times only the K
distinct loads of each microbatch the model prices highest (the slowest
rank by the model is always timed; a rank the model underprices badly may
be missed); --time-limit stops after the microbatch that crosses it. The
report says how many microbatches it covers; the step figures compare only
those. --json OUT writes every figure (schema dcpsched.replay.v1).

Without a CUDA device it exits 2: real figures need the GPU. --device cpu
runs the pipeline on the CPU (float32, wall clock; tiny shapes only, not
figures to judge a model by). Exit status: 0 done; 2 no CUDA device, a bad
command line, profile or schedule; 3 the run failed. Needs torch; the
compiled extension is not needed (PYTHONPATH=python works).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
import traceback
from typing import Callable, Dict, List, Optional, Sequence

from dcpsched.cost_model import CostModel
from dcpsched.cost_profile import Profile, ProfileError, load_profile
from dcpsched.schedule_document import RankGroup, Schedule, ScheduleError, read_schedule

REPORT_SCHEMA = "dcpsched.replay.v1"


def spread(count: int, wanted: Optional[int]) -> List[int]:
    """`wanted` indices of range(count) spread evenly, first and last included."""
    if wanted is None or wanted >= count:
        return list(range(count))
    if wanted <= 1:
        return [0][:wanted]
    return sorted({round(i * (count - 1) / (wanted - 1)) for i in range(wanted)})


def describe_load(load) -> str:
    """A rank load in words: samples, CP size, tokens."""
    cps = sorted({cp for _, cp in load})
    tokens = sum(length / cp for length, cp in load)
    return (f"{len(load)} sample{'s' if len(load) != 1 else ''}, cp "
            f"{'/'.join(map(str, cps))}, {tokens:.0f} tokens")


def _relative(modelled: float, measured: float) -> Optional[float]:
    return (modelled - measured) / measured if measured > 0 else None


class Replayer:
    """Times rank loads (each distinct one once) and prices them with the model."""

    def __init__(self, model: CostModel, layer, timer, progress: Callable[[str], None] = print):
        self.model, self.layer, self.timer, self.progress = model, layer, timer, progress
        self.measured: Dict[tuple, float] = {}

    def measure(self, load) -> float:
        """Seconds of one rank running `load`, timed once per distinct load."""
        from dcpsched.timing import Measurement
        if not load:
            return 0.0
        if load not in self.measured:
            work = self.layer.rank_work(load)
            self.measured[load] = self.timer.time(work, Measurement("layer", samples=load))
            del work
        return self.measured[load]

    def microbatch(self, index: int, groups: Sequence[RankGroup], ranks: Optional[int]
                   ) -> Dict[str, object]:
        """One microbatch's figures: slowest rank measured and modelled."""
        if not groups:
            raise ValueError(f"microbatch {index} has no ranks")
        priced = sorted(((self.model.rank_seconds(g.load), g) for g in groups),
                        key=lambda item: -item[0])
        distinct, seen = [], set()
        for modelled, group in priced:
            if group.load not in seen:
                seen.add(group.load)
                distinct.append((modelled, group))
        timed = distinct if ranks is None else distinct[:ranks]
        measured = [(self.measure(group.load), group) for _, group in timed]
        slowest_time, slowest = max(measured, key=lambda item: item[0])
        modelled = priced[0][0] if priced else 0.0
        return {"index": index, "measured_s": slowest_time, "modelled_s": modelled,
                "relative_error": _relative(modelled, slowest_time),
                "slowest_rank": slowest.first_rank,
                "slowest_load": [list(sample) for sample in slowest.load],
                "groups": len(groups), "loads_timed": len(timed)}


def replay(schedule: Schedule, profile: Profile, replayer: Replayer, *,
           max_microbatches: Optional[int] = None, ranks: Optional[int] = None,
           time_limit: Optional[float] = None, source: str = "schedule") -> Dict[str, object]:
    """Replays the schedule's chosen microbatches; returns the report document."""
    model, progress = replayer.model, replayer.progress
    chosen = spread(len(schedule.microbatches), max_microbatches)
    progress(f"replaying {len(chosen)} of {len(schedule.microbatches)} microbatches of "
             f"{source} (G = {schedule.total_gpus}) against profile {profile.name}")
    start = time.monotonic()
    rows, stopped = [], False
    for index in chosen:
        row = replayer.microbatch(index, schedule.microbatches[index], ranks)
        rows.append(row)
        error = row["relative_error"]
        progress(f"  microbatch {index:4d}: measured {row['measured_s'] * 1e3:9.3f} ms, "
                 f"modelled {row['modelled_s'] * 1e3:9.3f} ms"
                 + (f" ({error:+.1%})" if error is not None else "")
                 + f"; slowest rank {row['slowest_rank']} "
                 f"({describe_load(tuple(map(tuple, row['slowest_load'])))}); "
                 f"{row['loads_timed']} loads timed")
        if time_limit is not None and time.monotonic() - start > time_limit and \
                len(rows) < len(chosen):
            stopped = True
            progress(f"  time limit {time_limit:g} s reached after {len(rows)} microbatches")
            break
    measured = sum(row["measured_s"] for row in rows)
    modelled = sum(row["modelled_s"] for row in rows)
    everything = sum(model.microbatch_seconds(g.load for g in groups)
                     for groups in schedule.microbatches)
    step = {"measured_s": measured, "modelled_s": modelled,
            "relative_error": _relative(modelled, measured),
            "microbatches": len(rows), "microbatches_in_schedule": len(schedule.microbatches),
            "modelled_whole_schedule_s": everything, "stopped_by_time_limit": stopped}
    error = step["relative_error"]
    progress(f"step ({len(rows)} of {len(schedule.microbatches)} microbatches): measured "
             f"{measured * 1e3:.3f} ms, modelled {modelled * 1e3:.3f} ms, relative error "
             + (f"{error:+.2%}" if error is not None else "n/a")
             + f"; {len(replayer.measured)} distinct rank loads timed")
    notes = []
    if profile.communication is not None:
        notes.append("the profile models communication; the replay measures none (one GPU)")
    return {"schema": REPORT_SCHEMA, "profile": profile.name, "schedule": source,
            "format": schedule.format, "total_gpus": schedule.total_gpus,
            "microbatches": rows, "step": step,
            "distinct_loads_timed": len(replayer.measured), "notes": notes}


def parse_arguments(argv: Optional[Sequence[str]]):
    """The command line (see the module docstring)."""
    from dcpsched.layer import MODELS
    parser = argparse.ArgumentParser(
        prog="python3 -m dcpsched.replay",
        description="Run a schedule's rank loads as real layers on the local CUDA GPU and "
                    "compare with a cost profile's model; real figures need CUDA.")
    parser.add_argument("schedule", type=pathlib.Path, help="schedule JSON document")
    parser.add_argument("--cost-profile", required=True,
                        help="shipped profile name (h200-llama3-8b) or a profile file")
    shape = parser.add_argument_group("layer shape (default: the profile's model block)")
    shape.add_argument("--model", choices=sorted(MODELS))
    for flag in ("--hidden", "--q-heads", "--kv-heads", "--head-dim", "--ffn"):
        shape.add_argument(flag, type=int)
    parser.add_argument("--max-microbatches", type=int, help="replay N microbatches, spread")
    parser.add_argument("--ranks", type=int,
                        help="time the K distinct loads the model prices highest per microbatch")
    parser.add_argument("--time-limit", type=float, help="stop after this many seconds")
    parser.add_argument("--json", type=pathlib.Path, help="write the report here")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"),
                        help="cpu: try the pipeline on a tiny shape; not real figures")
    args = parser.parse_args(argv)
    numbers = [args.hidden, args.q_heads, args.kv_heads, args.head_dim, args.ffn]
    if args.model and any(n is not None for n in numbers):
        parser.error("give --model or the five numbers, not both")
    if any(n is not None for n in numbers) and any(n is None for n in numbers):
        parser.error("give all of --hidden --q-heads --kv-heads --head-dim --ffn")
    for flag in ("max_microbatches", "ranks"):
        if getattr(args, flag) is not None and getattr(args, flag) < 1:
            parser.error(f"--{flag.replace('_', '-')} must be at least 1")
    return args


def layer_shape(args, profile: Profile):
    """The shape to run: --model, the numbers, or the profile's model block."""
    from dcpsched.layer import MODELS, LayerShape
    if args.model:
        return MODELS[args.model]
    if args.hidden is not None:
        return LayerShape("custom", args.hidden, args.q_heads, args.kv_heads, args.head_dim,
                          args.ffn)
    block = profile.document.get("model") or {}
    try:
        return LayerShape(str(block.get("name", profile.name)), int(block["hidden"]),
                          int(block["q_heads"]), int(block["kv_heads"]), int(block["head_dim"]),
                          int(block["ffn"]), int(block.get("tensor_parallel", 1)))
    except (KeyError, TypeError, ValueError):
        raise ProfileError(f"profile {profile.name}: its model block does not give the layer "
                           "shape; pass --model or --hidden --q-heads --kv-heads --head-dim "
                           "--ffn") from None


def main(argv: Optional[Sequence[str]] = None, timer=None) -> int:
    """The CLI; `timer` replaces the device's timer (tests inject a synthetic one)."""
    args = parse_arguments(argv)
    try:
        profile = load_profile(args.cost_profile)
        schedule = read_schedule(args.schedule)
        shape = layer_shape(args, profile)
        shape.check()
    except (ProfileError, ScheduleError, ValueError, OSError) as error:
        print(f"dcpsched.replay: {error}", file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError:
        print("dcpsched.replay: needs torch (and a CUDA GPU for real figures)", file=sys.stderr)
        return 2
    if args.device == "cuda" and not torch.cuda.is_available():
        print("dcpsched.replay: no CUDA device: replay compares the model with real GPU "
              "time and needs the CUDA GPU the profile is for (--device cpu only tries the "
              "pipeline on a tiny shape).", file=sys.stderr)
        return 2
    try:
        return run(args, torch, profile, schedule, shape, timer)
    except Exception:  # noqa: BLE001: report any failure as "not replayed"
        traceback.print_exc()
        print("dcpsched.replay: the replay failed", file=sys.stderr)
        return 3


def run(args, torch, profile, schedule, shape, timer) -> int:
    """Replays and reports, for parsed arguments."""
    from dcpsched.layer_session import open_layer_session
    session = open_layer_session("dcpsched.replay", args, torch, shape, timer)
    device, kernels = session.device, session.kernels
    layer, timer = session.layer, session.timer
    replayer = Replayer(CostModel(profile), layer, timer, lambda line: print(line, flush=True))
    report = replay(schedule, profile, replayer, max_microbatches=args.max_microbatches,
                    ranks=args.ranks, time_limit=args.time_limit, source=str(args.schedule))
    report["layer"] = shape.as_profile_model()
    report["device"] = device.type if device.type != "cuda" else \
        torch.cuda.get_device_properties(device).name
    report["kernels"] = {"dense": kernels.dense_name, "varlen": kernels.varlen_name,
                         "notes": kernels.notes}
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1) + "\n")
        print(f"wrote {args.json}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
