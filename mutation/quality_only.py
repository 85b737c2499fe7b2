#!/usr/bin/env python3
"""Which surviving cost_aware mutants only worsen its schedules, and by how much.

The cost-aware scheduler keeps packing-aware's schedule wherever its own plan
is not faster, so a mutant that makes its plans worse keeps every invariant
and every property (never slower than packing-aware, never below the bound):
the properties cannot see it. This measures it instead. It builds
mutation/cost_aware_quality_probe.cc against the schemata build of the core
(run_mutants.py leaves it in BUILD_ROOT/gcc), runs it unmutated and under each
mutant given (DCPSCHED_MUTANT), and sorts the mutants:

  quality-only  slower on some probe batch than unmutated, nowhere faster;
                its gap is the largest ratio of step times, mutant over
                unmutated, and the batch where it is
  trade-off     faster on some probe batches (and mostly slower on others):
                another heuristic, neither better nor worse overall
  changes       an error where unmutated schedules (or the reverse), or a
                crash or hang: what the properties should see
  no effect     the same step time, bit for bit, on every probe batch: it
                changes something the probe does not measure (how long
                scheduling takes, a case the batches do not reach), or is
                equivalent

and writes a markdown table to OUT.

Usage: mutation/quality_only.py [--build-root DIR] --out OUT ID...
"""

import argparse
import os
import pathlib
import re
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent
TIMEOUT_SECONDS = 60


def build_probe(build: pathlib.Path, work: pathlib.Path) -> pathlib.Path:
    """The probe, linked against the schemata build's core and io."""
    ninja = (build / "build.ninja").read_text()
    absl = sorted(set(re.findall(r"/\S*libabsl_\w+\.so[.\d]*", ninja)))
    probe = work / "cost_aware_quality_probe"
    subprocess.run(["g++", "-std=c++20", "-O1", f"-I{REPO}", f"-I{build}",
                    str(REPO / "mutation" / "cost_aware_quality_probe.cc"),
                    str(build / "libdcpsched_io.a"), str(build / "libdcpsched_profile_io.a"),
                    str(build / "libdcpsched_core.a"),
                    *absl, "-o", str(probe)], check=True)
    return probe


def probe_run(probe: pathlib.Path, mutant=None):
    """{batch: (step seconds or None, source or error)}, or the failure."""
    env = dict(os.environ)
    env.pop("DCPSCHED_MUTANT", None)
    if mutant:
        env["DCPSCHED_MUTANT"] = mutant
    try:
        done = subprocess.run([str(probe)], env=env, capture_output=True, text=True,
                              timeout=TIMEOUT_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        return f"hangs (over {TIMEOUT_SECONDS} s)"
    if done.returncode != 0:
        return f"exits {done.returncode}: {done.stderr.strip()[:120]}"
    result = {}
    for line in done.stdout.splitlines():
        batch, value, what = line.split()
        result[batch] = (None, f"error {what}") if value == "error" else (
            float.fromhex(value), what)
    return result


def classify(base, mutated):
    """(kind, worst ratio or None, what to say)."""
    if isinstance(mutated, str):
        return "changes", None, mutated
    if mutated.keys() != base.keys():
        return "changes", None, "other batches"
    ratios = {}
    for batch, (seconds, what) in base.items():
        theirs, their_what = mutated[batch]
        if (seconds is None) != (theirs is None):
            return "changes", None, f"{batch}: {what} -> {their_what}"
        if seconds is not None and theirs != seconds:
            ratios[batch] = theirs / seconds
    if not ratios:
        return "no effect", None, ""
    worst = max(ratios, key=ratios.get)
    best = min(ratios, key=ratios.get)
    if ratios[best] < 1.0:
        slower = sum(r > 1.0 for r in ratios.values())
        faster = sum(r < 1.0 for r in ratios.values())
        return ("trade-off", ratios[worst] if ratios[worst] > 1.0 else None,
                f"faster on {faster} batches (best {ratios[best]:.4f}x, {best}), slower on "
                f"{slower}" + (f" (worst {ratios[worst]:.4f}x, {worst})" if slower else ""))
    return "quality-only", ratios[worst], f"{worst}; slower on {len(ratios)} batches"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-root", default=str(REPO / "build" / "mutation"))
    parser.add_argument("--out", required=True)
    parser.add_argument("ids", nargs="+")
    args = parser.parse_args()
    build = pathlib.Path(args.build_root) / "gcc"
    probe = build_probe(build, pathlib.Path(args.build_root))
    base = probe_run(probe)
    if isinstance(base, str):
        sys.exit(f"the unmutated probe fails: {base}")
    rows = {"quality-only": [], "trade-off": [], "changes": [], "no effect": []}
    for mutant in args.ids:
        kind, gap, where = classify(base, probe_run(probe, mutant))
        rows[kind].append((mutant, gap, where))
        print(f"{mutant}: {kind}" + (f" {gap:.4f}x on {where}" if gap else
                                     f" ({where})" if where else ""), flush=True)
    with open(args.out, "w", encoding="utf-8") as out:
        out.write(f"# cost_aware survivors under the quality probe\n\n"
                  f"`mutation/quality_only.py` over {len(args.ids)} mutants, "
                  f"{len(base)} probe batches (mutation/cost_aware_quality_probe.cc), "
                  f"h200-llama3-8b.\n\n")
        for kind in ("quality-only", "trade-off", "changes", "no effect"):
            out.write(f"## {kind}: {len(rows[kind])}\n\n")
            if rows[kind]:
                out.write("| mutant | gap | where |\n| --- | ---: | --- |\n")
                for mutant, gap, where in sorted(rows[kind], key=lambda r: -(r[1] or 0)):
                    out.write(f"| {mutant} | {f'{gap:.4f}x' if gap else ''} | {where} |\n")
                out.write("\n")


if __name__ == "__main__":
    main()
