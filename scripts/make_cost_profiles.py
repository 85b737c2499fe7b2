#!/usr/bin/python3
"""Makes the shipped cost profiles profiles/*.json from the raw H200 measurements.

    scripts/make_cost_profiles.py [--source DIR] [--output DIR] [--check]

Reads profiles/calibration/h200-llama3-2026-12-04.json (attention per
sequence, lin per token count, 12 whole-layer THD packs; eager) and
h200-llama3-lin-graphs-2026-12-04.json (lin again, eager and CUDA-graph
replay), see profiles/calibration/README.md, and writes four profiles in
the dcpsched.cost_profile.v1 format (python/dcpsched/cost_profile.py):

  h200-llama3-8b             attention + eager lin, Llama-3-8B tp1
  h200-llama3-70b-tp8        attention + eager lin, Llama-3-70B tp8 (per GPU)
  h200-llama3-8b-graphs      attention + CUDA-graph lin (graph_s column)
  h200-llama3-70b-tp8-graphs attention + CUDA-graph lin

Each table is made non-decreasing (running maximum) and every raised point
is recorded in provenance.raised_points. The validation figures are the
model's (dcpsched.cost_model) relative error on the 12 packs, each priced
on one rank as lin(sum lens) + sum causal(len). The same inputs always give
the same bytes; --check compares with the files in --output instead of
writing them and exits 1 if any differs (python/tests/test_cost_model.py
runs it so the committed profiles cannot drift).
"""

import argparse
import json
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

from dcpsched.cost_model import CostModel, validation_figures  # noqa: E402
from dcpsched.cost_profile import dump_profile, parse_profile, running_maximum  # noqa: E402

MEASUREMENTS = "h200-llama3-2026-12-04.json"
GRAPHS = "h200-llama3-lin-graphs-2026-12-04.json"
MEASURED_ON = "2026-12-04"

# Profile model names and their per-GPU shapes, by the raw files' config keys.
CONFIGS = {
    "llama3-8b-tp1": ("llama3-8b", 1),
    "llama3-70b-tp8": ("llama3-70b-tp8", 8),
}


def table(points_and_seconds):
    """Sorted (points, seconds) from a {"<int>": seconds} mapping."""
    items = sorted((int(point), seconds) for point, seconds in points_and_seconds.items())
    return [p for p, _ in items], [s for _, s in items]


def model_block(config_key, shape):
    name, tensor_parallel = CONFIGS[config_key]
    return {"name": name, "hidden": shape["h"], "q_heads": shape["hq"],
            "kv_heads": shape["hkv"], "head_dim": shape["d"], "ffn": shape["ffn"],
            "tensor_parallel": tensor_parallel}


def make_profile(raw, graphs, config_key, use_graphs):
    """One profile document from the raw measurements."""
    model_name, tensor_parallel = CONFIGS[config_key]
    name = f"h200-{model_name}" + ("-graphs" if use_graphs else "")
    raised = []
    tables = {}
    for mask in ("causal", "full"):
        points, seconds = table(raw["attn"][config_key][mask])
        seconds, more = running_maximum(f"attention.{mask}", points, seconds)
        tables[mask] = {"lengths": points, "seconds": seconds}
        raised += more
    if use_graphs:
        lin = {point: row["graph_s"] for point, row in graphs[config_key].items()}
        lin_source = (f"{GRAPHS} (graph_s: CUDA-graph replay of the non-attention part, "
                      "a second run on another H200)")
    else:
        lin = raw["lin"][config_key]
        lin_source = f"{MEASUREMENTS} (lin, eager)"
    points, seconds = table(lin)
    seconds, more = running_maximum("non_attention", points, seconds)
    raised += more
    env = raw["env"]
    mode = "CUDA-graph replay" if use_graphs else "eager"
    tp = f" tp{tensor_parallel}" if tensor_parallel > 1 else ""
    document = {
        "schema": "dcpsched.cost_profile.v1",
        "name": name,
        "description": (f"One {model_name.split('-tp')[0]}{tp} layer per GPU on an "
                        f"{env['gpu']}, bf16, forward+backward; non-attention part {mode}"),
        "device": {"name": env["gpu"], "sms": env["sms"], "memory_gib": env["mem_gib"]},
        "software": {"torch": env["torch"], "cuda": env["cuda"]},
        "model": model_block(config_key, raw["configs"][config_key]),
        "dtype": "bf16",
        "passes": "forward+backward",
        "interpolation": "log-log",
        "attention": {"causal": tables["causal"], "full": tables["full"]},
        "non_attention": {"tokens": points, "seconds": seconds},
        "communication": None,
    }
    cases = [(case["lens"], case["seconds"]) for case in raw["packs"][config_key]["cases"]]
    model = CostModel(parse_profile(document, name))
    document["validation"] = {
        "method": ("whole-layer time of THD packs (varlen flash attention, causal, eager) "
                   "against the model, each pack on one rank: lin(sum lens) + "
                   "sum causal(len); relative error |model - measured| / measured"),
        **validation_figures(model, cases),
    }
    document["provenance"] = {
        "source": (f"profiles/calibration/{MEASUREMENTS} (attn, packs); "
                   f"non_attention from {lin_source}"),
        "measured": MEASURED_ON,
        "raised_points": raised,
        "note": ("Medians of CUDA-event timings after warm-up, random bf16 data. Made by "
                 "scripts/make_cost_profiles.py; tables raised to their running maximum "
                 "where a point dipped below an earlier one. Communication is not "
                 "measured (one GPU cannot)."),
    }
    return document


def profiles(source):
    raw = json.loads((source / MEASUREMENTS).read_text())
    graphs = json.loads((source / GRAPHS).read_text())
    for config_key in CONFIGS:
        for use_graphs in (False, True):
            document = make_profile(raw, graphs, config_key, use_graphs)
            yield document["name"], dump_profile(document)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=pathlib.Path, default=REPO / "profiles" / "calibration",
                        help="directory of the raw measurement files")
    parser.add_argument("--output", type=pathlib.Path, default=REPO / "profiles",
                        help="directory the profiles are written to")
    parser.add_argument("--check", action="store_true",
                        help="compare with the files in --output instead of writing")
    args = parser.parse_args(argv)
    differ = []
    for name, text in profiles(args.source):
        path = args.output / f"{name}.json"
        if args.check:
            if not path.is_file() or path.read_text() != text:
                differ.append(str(path))
        else:
            args.output.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            print(f"wrote {path}")
    if differ:
        print("differ from what scripts/make_cost_profiles.py makes (rerun it): "
              + ", ".join(differ), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
