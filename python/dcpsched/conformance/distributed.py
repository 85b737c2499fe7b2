"""The distributed harness: upstream's real data pipeline on W gloo processes,
with upstream's scheduler and with the drop-in, compared on every rank.

run_distributed() writes the cases (distributed_cases.py) and a job file
into a temporary directory, starts W rank processes
(`python3 -m dcpsched.conformance.distributed_rank`, rendezvous on a file
there), waits for all of them under one deadline, and compares, case by
case and rank by rank, the record of upstream's run with the drop-in's
(records.py): every microbatch each rank yields (each tensor bit for bit,
the VPP stages' iterators one by one), the microbatch count, the FLOPs
sums, the ids the schedule gives the rank, or the error raised, and what
the runtime's CP group lookup and get_batch made of every microbatch
(distributed_lookup.py).

A case where upstream's schedule fails at the lookup (a KeyError, or a group
that is not its samples' ranks), runtime_groups.py agreeing, and the drop-in
refuses with invariant 11 on every rank is its own outcome ("upstream's
runtime cannot run upstream's schedule"), printed, not a difference; at an
odd G, which start-up refuses (no lookup), runtime_groups.py alone confirms
it. A drop-in that refuses so unconfirmed, a drop-in schedule that fails
the lookup, and the lookup and the rule disagreeing are differences.

It never reports a clean result for something that did not run: a rank
that fails, hangs past the deadline or stops out of step brings the others
down (they are ended, by their process ids) and the closing line says NOT
CHECKED (exit 3); a case whose scheduler did not run on a data rank, or
ran with the wrong class, is an internal error too. Differences exit 1.

With timing (--timing) the cases are distributed_timing.py's (one benchmark
batch per topology, repeated), compared the same way, and the report adds
the run() and scheduler times, or, unless every case is equal on every
rank, says it reports none and exits 1.
"""

import collections
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
from typing import List

from dcpsched.conformance import (distributed_cases, distributed_lookup, distributed_timing,
                                  records, runtime_groups)

CLOSING = ("distributed conformance: {cases} cases on {world} ranks, {equal} equal on every "
           "rank, {differ} differ, {both} both reject (on every rank), {runtime} upstream's "
           "runtime cannot run upstream's schedule (dcpsched refuses: invariant 11); "
           "{compared} rank records compared, {lookups} microbatches through the CP group "
           "lookup")
NOT_CHECKED = "; NOT CHECKED: {why}"
UPSTREAM, DROP_IN = "upstream", "drop_in"


class _Ranks:
    """The W rank processes, ended (by pid) on exit if still running."""

    def __init__(self, job_file, world, log_dir):
        self.procs = []
        self.logs = []
        env = dict(os.environ)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        # The rank processes import dcpsched as this process does.
        paths = [str(pathlib.Path(p).resolve()) for p in sys.path if p]
        env["PYTHONPATH"] = os.pathsep.join(paths)
        for rank in range(world):
            log = open(log_dir / f"{rank}.log", "w+b")  # pylint: disable=consider-using-with
            self.logs.append(log)
            self.procs.append(subprocess.Popen(  # pylint: disable=consider-using-with
                [sys.executable, "-m", "dcpsched.conformance.distributed_rank",
                 str(job_file), str(rank)], stdout=log, stderr=subprocess.STDOUT, env=env))

    def wait(self, deadline):
        """Waits until all exit, one fails, or the deadline; returns
        (exit codes or None per rank, timed out?)."""
        while True:
            codes = [p.poll() for p in self.procs]
            if all(c is not None for c in codes):
                return codes, False
            if any(c not in (None, 0) for c in codes):
                time.sleep(0.5)  # let the others report their own failure first
                return [p.poll() for p in self.procs], False
            if time.monotonic() > deadline:
                return codes, True
            time.sleep(0.05)

    def end(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
        for proc in self.procs:
            proc.wait()
        for log in self.logs:
            log.close()

    def tail(self, rank, lines=12):
        path = pathlib.Path(self.logs[rank].name)
        text = path.read_text(errors="replace").rstrip().splitlines()
        return text[-lines:]


def _lookup_of(case, per_rank, variant):
    """(failures, looked up): where the variant's microbatches cannot run
    (distributed_lookup.failures) and how many microbatch entries went
    through the lookup; (None, 0) where it did not run (the variant raised,
    or start-up refused an odd G)."""
    lookups = [entry[variant].get("lookup") for entry in per_rank]
    if any(not isinstance(lookup, list) for lookup in lookups):
        return None, 0
    return distributed_lookup.failures(lookups, case["tp"]), sum(len(l) for l in lookups)


def _split_counts(per_rank):
    """(microbatch entries get_batch ran on, entries skipped as not
    splittable on CPU), both variants."""
    ran = skipped = 0
    for entry in per_rank:
        for variant in (UPSTREAM, DROP_IN):
            lookup = entry[variant].get("lookup")
            for item in lookup if isinstance(lookup, list) else []:
                ran += item.get("get_batch") is not None
                skipped += "get_batch_skipped" in item
    return ran, skipped


def _refused_by_start_up(per_rank, variant):
    """Why start-up refuses the case's G (odd), or None."""
    lookup = per_rank[0][variant].get("lookup")
    return lookup.get("not_run") if isinstance(lookup, dict) else None


def _rule_findings(case, per_rank):
    """runtime_groups.violations of upstream's schedule (from the data ranks' ids)."""
    schedule = distributed_lookup.schedule_of([e[UPSTREAM].get("ids") for e in per_rank],
                                              case["tp"])
    if schedule is None:
        return []
    return runtime_groups.violations(schedule, case["dp"] * case["cp"], case["min_cp_size"])


def _runtime_case(case, per_rank, out):
    """'runtime' if the drop-in refuses with invariant 11 on every rank, and
    upstream answered on every rank with a schedule that cannot run: its
    runtime's lookup fails (and runtime_groups.py agrees), or, at an odd G
    start-up refuses, the rule finds where. 'differ' if the drop-in refuses
    so and that is not confirmed; None if the drop-in does not refuse so."""
    refusals = {(e[DROP_IN].get("error"), e[DROP_IN].get("message")) for e in per_rank}
    if len(refusals) != 1:
        return None
    error, message = next(iter(refusals))
    if error is None or not runtime_groups.names_runtime_groups(message):
        return None
    if any("error" in e[UPSTREAM] for e in per_rank):
        return None  # both refuse: compared as before
    found, _ = _lookup_of(case, per_rank, UPSTREAM)
    rule = _rule_findings(case, per_rank)
    if found is None:  # not looked up: start-up refused the odd G
        confirmed, shown = bool(rule), rule
    else:
        confirmed, shown = bool(found) and bool(rule), found
    if confirmed:
        print(f"runtime cannot run: {distributed_cases.describe(case)}", file=out)
        for line in shown[:2]:
            print(f"  upstream's runtime: {line}", file=out)
        print(f"  drop-in: {error}: {message[:240]}", file=out)
        return "runtime"
    print(f"differ: {distributed_cases.describe(case)}: the drop-in refuses with invariant "
          f"11, unconfirmed (upstream's runtime lookup: {found[:1] if found else 'runs'}; "
          f"runtime_groups.py: {rule[:1] or 'runs'}): {message[:200]}", file=out)
    return "differ"


def _lookup_check(case, per_rank, out):
    """For a case equal on every rank: None if both variants' microbatches
    run (or start-up refused the odd G), else 'differ', printed: the
    drop-in returns a schedule the runtime cannot run, or the runtime's
    lookup and runtime_groups.py disagree about upstream's schedule."""
    if _refused_by_start_up(per_rank, UPSTREAM):
        return None
    theirs, _ = _lookup_of(case, per_rank, UPSTREAM)
    ours, _ = _lookup_of(case, per_rank, DROP_IN)
    rule = _rule_findings(case, per_rank)
    problem = None
    if ours:
        problem = ("the drop-in returns a schedule the runtime cannot run (dcpsched should "
                   f"refuse it with invariant 11): {ours[0]}")
    elif theirs is not None and bool(theirs) != bool(rule):
        problem = ("the runtime's lookup and runtime_groups.py disagree on upstream's "
                   f"schedule: lookup {theirs[:1]}, rule {rule[:1]}")
    if problem is None:
        return None
    print(f"differ: {distributed_cases.describe(case)}: {problem}", file=out)
    return "differ"


def _compare_case(case, per_rank, out, verbose_limit):
    """'equal', 'differ', 'both', 'runtime' or an internal-error message,
    printing differences."""
    runtime = _runtime_case(case, per_rank, out)
    if runtime:
        return runtime
    upstream_errors, drop_in_errors, found = set(), set(), []
    for rank, entry in enumerate(per_rank):
        theirs, ours = entry[UPSTREAM], entry[DROP_IN]
        if "error" in theirs and "error" in ours:
            upstream_errors.add((theirs["error"], theirs["message"]))
            drop_in_errors.add((ours["error"], ours["message"]))
            continue
        where = records.difference(theirs, ours)
        if where:
            found.append(f"rank {rank}: {where}")
    if found:
        print(f"differ: {distributed_cases.describe(case)}", file=out)
        for line in found[:verbose_limit]:
            print(f"  {line}", file=out)
        if len(found) > verbose_limit:
            print(f"  ... and {len(found) - verbose_limit} more ranks", file=out)
        return "differ"
    if drop_in_errors:
        if len(drop_in_errors) != 1 or len(per_rank) != sum(
                "error" in e[DROP_IN] for e in per_rank):
            print(f"differ: {distributed_cases.describe(case)}: the drop-in does not raise the "
                  f"same error on every rank: {sorted(drop_in_errors)}", file=out)
            return "differ"
        return "both"
    return _lookup_check(case, per_rank, out) or "equal"


def _check_scheduler_ran(case, per_rank, classes):
    """An internal-error message if a data rank's scheduler did not run once
    with the variant's class, else None."""
    for rank, entry in enumerate(per_rank):
        data_rank = rank % case["tp"] == 0
        for variant in (UPSTREAM, DROP_IN):
            record = entry[variant]
            calls = record["scheduler_calls"]
            if "error" in record:
                expected_ok = len(calls) <= 1
            else:
                expected_ok = calls == ([classes[variant]] if data_rank else [])
            if not expected_ok:
                return (f"case {case['index']}, rank {rank}, {variant}: the pipeline called "
                        f"{calls or 'no scheduler'}, expected {classes[variant]} once")
    return None


def run_distributed(megatron, drop_in, world, count, seed, timeout, out,
                    closing_suffix="", timing=None) -> int:
    """Runs the harness; prints the report (after the caller's upstream
    lines) and returns the exit status: 0 all equal, 1 a difference, 3 not
    run to the end. closing_suffix is appended to the closing line (the
    caller's NOT CONFORMANT for unmodelled upstream parameters). timing
    (samples, repeats) runs the timing mode (distributed_timing.py) instead
    of `count` generated cases."""
    if timing:
        cases = distributed_timing.cases(world, timing[0], timing[1], seed)
        count = len(cases)
    else:
        cases = distributed_cases.generate(world, count, seed)
    shapes = sorted({(c["tp"], c["dp"], c["cp"]) for c in cases})
    print(f"distributed: W = {world} gloo processes, {count} cases (seed {seed}"
          f"{'; timing: one benchmark batch per topology, repeated' if timing else ''}), "
          f"topologies tp x dp x cp {', '.join('x'.join(map(str, s)) for s in shapes)}, pp 1; "
          f"drop-in {drop_in}", file=out)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="dcpsched-distributed-") as tmp:
        tmp = pathlib.Path(tmp)
        job_file = tmp / "job.json"
        job_file.write_text(json.dumps({
            "megatron": str(pathlib.Path(megatron).resolve()),
            "drop_in": str(pathlib.Path(drop_in).resolve()), "world": world,
            "rendezvous": str(tmp / "rendezvous"), "collective_timeout": timeout,
            "timing": bool(timing), "cases": cases}))
        ranks = _Ranks(job_file, world, tmp)
        try:
            codes, timed_out = ranks.wait(time.monotonic() + timeout)
        finally:
            ranks.end()
        failed = [r for r, c in enumerate(codes) if c != 0]
        if timed_out or failed:
            why = (f"the run passed its {timeout:g} s deadline" if timed_out else
                   f"rank(s) {', '.join(map(str, failed))} failed (exit "
                   f"{', '.join(str(codes[r]) for r in failed)})")
            for rank in failed[:2] or [0]:
                print(f"rank {rank} output:", file=out)
                for line in ranks.tail(rank):
                    print(f"  {line}", file=out)
            results = [_read(tmp / f"{r}.json") for r in range(world)]
            stopped = [res["stopped"] for res in results if res and "stopped" in res]
            if stopped:
                why += f"; {stopped[0]}"
            print(CLOSING.format(cases=count, world=world, equal=0, differ="?", both="?",
                                 runtime="?", compared=0, lookups=0) + NOT_CHECKED.format(why=why) + closing_suffix,
                  file=out)
            return 3
        results = [_read(tmp / f"{r}.json") for r in range(world)]
    elapsed = time.monotonic() - started
    return _report(cases, results, world, elapsed, out, closing_suffix, timing)


def _read(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _report(cases, results, world, elapsed, out, closing_suffix, timing=None) -> int:
    first = results[0]
    for line in first["shims"]:
        print(f"shim: {line}", file=out)
    for line in first["stand_ins"]:
        print(f"stand-in: {line}", file=out)
    print(f"torch {first['torch']}", file=out)
    counts = collections.Counter()
    compared = 0
    problems: List[str] = []
    seconds = {UPSTREAM: 0.0, DROP_IN: 0.0}
    microbatches = 0
    lookups = 0            # microbatch entries through the lookup, both variants
    start_up_refused = 0   # cases at an odd G: no lookup
    upstream_failed = 0    # cases whose upstream schedule failed the lookup
    split = [0, 0]         # entries get_batch ran on; skipped (not splittable on CPU)
    for case in cases:
        per_rank = [res["cases"][case["index"]] for res in results]
        if any(entry["index"] != case["index"] for entry in per_rank):
            problems.append(f"case {case['index']}: a rank's records are out of order")
            continue
        problem = _check_scheduler_ran(case, per_rank, results[0]["classes"])
        if problem:
            problems.append(problem)
            continue
        counts[_compare_case(case, per_rank, out, 4)] += 1
        compared += len(per_rank)
        for variant in (UPSTREAM, DROP_IN):
            failed, looked_up = _lookup_of(case, per_rank, variant)
            lookups += looked_up
            upstream_failed += bool(failed) and variant == UPSTREAM
        start_up_refused += bool(_refused_by_start_up(per_rank, UPSTREAM))
        split = [a + b for a, b in zip(split, _split_counts(per_rank))]
        for variant in seconds:
            seconds[variant] += max(entry[variant]["seconds"] for entry in per_rank)
        count = per_rank[0][UPSTREAM].get("num_micro_batches")
        microbatches += int(count["repr"]) if count else 0
    for problem in problems:
        print(f"internal: {problem}", file=out)
    print(f"{microbatches} microbatches per rank in all (upstream's count); wrap_data_iterator "
          f"wall time, slowest rank, summed over the cases: upstream {seconds[UPSTREAM]:.2f} s, "
          f"drop-in {seconds[DROP_IN]:.2f} s; whole run {elapsed:.1f} s", file=out)
    if not timing:
        print(f"group lookup: every microbatch of every rank, both variants, through the "
              f"checkout's get_dynamic_data_context_parallel_groups and "
              f"get_batch_on_this_rank_for_sequence_packing: {lookups} in all, get_batch run on "
              f"{split[0]} ({split[1]} not split: a padded length not divisible by 2 x "
              f"local_cp_size, which TE's zigzag needs); upstream's "
              f"schedule fails there in {upstream_failed} case(s); {start_up_refused} case(s) "
              "at an odd G not looked up (Megatron-LM refuses an odd number of DPxCP ranks "
              "for dynamic CP at start-up)", file=out)
    closing = CLOSING.format(cases=len(cases), world=world, equal=counts["equal"],
                             differ=counts["differ"], both=counts["both"],
                             runtime=counts["runtime"], compared=compared, lookups=lookups)
    checked = counts["equal"] + counts["differ"] + counts["both"] + counts["runtime"]
    timed = not problems and counts["equal"] == len(cases)
    if timing:
        distributed_timing.report(cases, results, world, timed, out)
    answered = counts["equal"] + counts["differ"] + counts["runtime"]
    if problems or checked != len(cases) or answered == 0 or (not timing and lookups == 0):
        why = (f"{len(problems)} case(s) not compared" if problems else
               "no case answered on both sides" if answered == 0 else
               "no microbatch went through the CP group lookup")
        print(closing + NOT_CHECKED.format(why=why) + closing_suffix, file=out)
        return 3
    print(closing + closing_suffix, file=out)
    # A timing run reports figures only if every case is equal: else it fails.
    return 1 if counts["differ"] or (timing and not timed) else 0
