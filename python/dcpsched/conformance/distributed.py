"""The distributed harness: upstream's real data pipeline on W gloo processes,
with upstream's scheduler and with the drop-in, compared on every rank.

run_distributed() writes the cases (distributed_cases.py) and a job file
into a temporary directory, starts W rank processes (distributed_rank.py,
each forked from one server process that imported torch once; rendezvous
on a file there), waits for all of them under one deadline, and compares,
case by case and rank by rank, the record of upstream's run with the drop-in's
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

The cost-aware mode (--cost-profile P) checks the drop-in's cost-aware
scheduler, whose schedules deliberately differ from upstream's: upstream's
scheduler is not run, and the batches are those every cost-aware variant
schedules (upstream's failures and unrunnable schedules included:
distributed_cases.cost_aware_accepts). The drop-in is installed as
install_into_megatron(cost_profile=P) and with only_where_upstream_fails=True
as well, and each variant is checked, case by case and rank by rank,
against the schedule dcpsched.schedule_cost_aware gives the batch (with the
options the pipeline passes: G = dp x cp, max_seqlen_per_dp_cp_rank,
min_cp_size, the VPP group, max_num_seqs where the checkout applies it;
packing-aware's wherever it has one in the second variant):

1. every rank received exactly the microbatches that schedule gives it: its
   data rank's scheduler returned the schedule's ids (count, ids of each
   microbatch, in order), and its record equals, bit for bit, that of
   upstream's own run() given that schedule (the reference run: every
   tensor of every microbatch, every VPP stage, the count, the FLOPs sums);
2. the schedule the ranks received holds every sample of the global batch
   in exactly one microbatch, on exactly the ranks of one CP group the
   runtime creates (runtime_groups.group_of), and breaks no runtime-group
   rule (runtime_groups.violations);
3. the runtime's CP group lookup (and get_batch) succeeded for every
   microbatch of every rank, every VPP stage, and found the group the
   schedule implies (distributed_lookup.failures and group_mismatches);
   at an odd G, which start-up refuses, there is no lookup, and the case
   is counted apart.

A batch dcpsched refuses (a sample too long for its group) must be refused
on every rank with dcpsched's error. Exit 0 if every case is received as
scheduled (or so refused), 1 on a difference, 3 if not run to the end or a
case's scheduler did not run (or got another batch than the harness
generated), 4 if no case was received as scheduled and looked up.
"""

import collections
import json
import multiprocessing
import os
import pathlib
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
COST_AWARE_CLOSING = ("cost-aware: {cases} cases on {world} ranks (profile {profile}; drop-in "
                      "variants {variants}), {scheduled} runnable and received as scheduled, "
                      "{odd} received as scheduled at an odd G (start-up refuses it: not "
                      "looked up), {refused} refused on every rank as dcpsched refuses, "
                      "{differ} differ; {compared} rank records compared, {lookups} "
                      "microbatches through the CP group lookup")
NOTHING_CHECKED = "; NOTHING CHECKED: {why}"
UPSTREAM, DROP_IN = "upstream", "drop_in"
REFERENCE = "reference"  # distributed_rank's runs of a given schedule
COST_AWARE_VARIANTS = distributed_cases.COST_AWARE_VARIANTS


# The rank processes are forked from one server process that imported the
# rank's modules (torch, torch.distributed, the harness) once: W processes
# of their own, each joining the gloo group with its own sockets, as under
# torchrun, without W imports of torch. The server starts from a fresh
# interpreter, so no state of this process (a checkout loaded with
# stand-ins, say) reaches the ranks.
_RANK_CONTEXT = multiprocessing.get_context("forkserver")
_RANK_CONTEXT.set_forkserver_preload(["dcpsched.conformance.distributed_rank"])


def _rank_process(job_file, rank, log_path):
    """One rank: distributed_rank.run, its output into log_path."""
    sys.dont_write_bytecode = True
    log = os.open(log_path, os.O_WRONLY | os.O_APPEND)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    from dcpsched.conformance import distributed_rank  # pylint: disable=import-outside-toplevel
    sys.exit(distributed_rank.run([job_file, str(rank)]))


class _Ranks:
    """The W rank processes, ended (by pid) on exit if still running."""

    def __init__(self, job_file, world, log_dir):
        self.procs = []
        self.logs = []
        for rank in range(world):
            log = open(log_dir / f"{rank}.log", "w+b")  # pylint: disable=consider-using-with
            self.logs.append(log)
            proc = _RANK_CONTEXT.Process(target=_rank_process,
                                         args=(str(job_file), rank, log.name))
            proc.start()
            self.procs.append(proc)

    def wait(self, deadline):
        """Waits until all exit, one fails, or the deadline; returns
        (exit codes or None per rank, timed out?)."""
        while True:
            codes = [p.exitcode for p in self.procs]
            if all(c is not None for c in codes):
                return codes, False
            if any(c not in (None, 0) for c in codes):
                time.sleep(0.5)  # let the others report their own failure first
                return [p.exitcode for p in self.procs], False
            if time.monotonic() > deadline:
                return codes, True
            time.sleep(0.05)

    def end(self):
        for proc in self.procs:
            if proc.exitcode is None:
                proc.kill()
        for proc in self.procs:
            proc.join()
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


def _print_differences(header, found, out, verbose_limit, noun=""):
    """Prints `header`, then the first verbose_limit lines of `found`, then
    how many more there are."""
    print(header, file=out)
    for line in found[:verbose_limit]:
        print(f"  {line}", file=out)
    if len(found) > verbose_limit:
        print(f"  ... and {len(found) - verbose_limit} more{noun}", file=out)


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
        _print_differences(f"differ: {distributed_cases.describe(case)}", found, out,
                           verbose_limit, " ranks")
        return "differ"
    if drop_in_errors:
        if len(drop_in_errors) != 1 or len(per_rank) != sum(
                "error" in e[DROP_IN] for e in per_rank):
            print(f"differ: {distributed_cases.describe(case)}: the drop-in does not raise the "
                  f"same error on every rank: {sorted(drop_in_errors)}", file=out)
            return "differ"
        return "both"
    return _lookup_check(case, per_rank, out) or "equal"


def _runs_of(entry):
    """The names of a rank's runs of one case (its record's keys but the index)."""
    return [name for name in entry if name != "index"]


def _class_of(name, classes):
    """The scheduler class (qualified name) the run `name` installs."""
    return classes[REFERENCE if name.startswith(REFERENCE) else name]


def _check_scheduler_ran(case, per_rank, classes, batch_checked=False):
    """An internal-error message if a data rank's scheduler did not run once
    with the run's class (or, with batch_checked, scheduled another batch
    than the harness generated), else None."""
    for rank, entry in enumerate(per_rank):
        data_rank = rank % case["tp"] == 0
        for variant in _runs_of(entry):
            record = entry[variant]
            calls = record["scheduler_calls"]
            expected = _class_of(variant, classes)
            if "error" in record:
                expected_ok = len(calls) <= 1
            else:
                expected_ok = calls == ([expected] if data_rank else [])
            if not expected_ok:
                return (f"case {case['index']}, rank {rank}, {variant}: the pipeline called "
                        f"{calls or 'no scheduler'}, expected {expected} once")
            if batch_checked and calls and record.get("batch_as_generated") is False:
                return (f"case {case['index']}, rank {rank}, {variant}: the scheduler got "
                        "another global batch than the harness generated (ids or lengths "
                        "in another order): its expected schedule is not for it")
    return None


def _cost_aware_cases(world, count, seed, cost_aware):
    """The cost-aware mode's cases: batches every variant schedules, each
    with its expected schedules (distributed_cases.cost_aware_expected)."""
    import dcpsched  # pylint: disable=import-outside-toplevel
    profile = dcpsched.CostProfile(cost_aware["profile"])
    applies_cap = cost_aware["applies_max_num_seqs"]
    cases = distributed_cases.generate(
        world, count, seed, accept=distributed_cases.cost_aware_accepts(profile, applies_cap))
    for case in cases:
        case["cost_aware"] = distributed_cases.cost_aware_expected(case, profile, applies_cap)
    return cases


def _cases(world, count, seed, timing, cost_aware):
    """The cases of the mode: timing's, cost-aware's or the generated ones."""
    if timing:
        return distributed_timing.cases(world, timing[0], timing[1], seed)
    if cost_aware:
        return _cost_aware_cases(world, count, seed, cost_aware)
    return distributed_cases.generate(world, count, seed)


def _mode_text(timing, cost_aware):
    """The header's words on the mode."""
    if timing:
        return "; timing: one benchmark batch per topology, repeated"
    if cost_aware:
        return (f"; cost-aware: the drop-in's install_into_megatron(cost_profile="
                f"{cost_aware['profile']!r}), and with only_where_upstream_fails=True, each "
                "checked against dcpsched.schedule_cost_aware's schedule of the batch, "
                "upstream's scheduler not run")
    return ""


def _not_checked_closing(cases, world, cost_aware, why):
    """The closing line of a run that did not come to the end."""
    if cost_aware:
        closing = COST_AWARE_CLOSING.format(
            cases=len(cases), world=world, profile=cost_aware["profile"],
            variants=", ".join(COST_AWARE_VARIANTS), scheduled=0, odd="?", refused="?",
            differ="?", compared=0, lookups=0)
    else:
        closing = CLOSING.format(cases=len(cases), world=world, equal=0, differ="?", both="?",
                                 runtime="?", compared=0, lookups=0)
    return closing + NOT_CHECKED.format(why=why)


def run_distributed(megatron, drop_in, world, count, seed, timeout, out,
                    closing_suffix="", timing=None, cost_aware=None) -> int:
    """Runs the harness; prints the report (after the caller's upstream
    lines) and returns the exit status: 0 all equal, 1 a difference, 3 not
    run to the end. closing_suffix is appended to the closing line (the
    caller's NOT CONFORMANT for unmodelled upstream parameters). timing
    (samples, repeats) runs the timing mode (distributed_timing.py) instead
    of `count` generated cases. cost_aware ({"profile": a shipped profile's
    name or a profile file's absolute path, "applies_max_num_seqs": whether
    the checkout's scheduler applies max_num_seqs}) runs the cost-aware mode
    (4: nothing received as scheduled and looked up). The ranks start from
    multiprocessing's forkserver, so a program that calls this from its own
    script guards its main code with `if __name__ == "__main__":`
    (`python3 -m dcpsched.conformance` does)."""
    cases = _cases(world, count, seed, timing, cost_aware)
    count = len(cases)
    shapes = sorted({(c["tp"], c["dp"], c["cp"]) for c in cases})
    print(f"distributed: W = {world} gloo processes, {count} cases (seed {seed}"
          f"{_mode_text(timing, cost_aware)}), "
          f"topologies tp x dp x cp {', '.join('x'.join(map(str, s)) for s in shapes)}, pp 1; "
          f"drop-in {drop_in}", file=out)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="dcpsched-distributed-") as tmp:
        tmp = pathlib.Path(tmp)
        job_file = tmp / "job.json"
        job = {"megatron": str(pathlib.Path(megatron).resolve()),
               "drop_in": str(pathlib.Path(drop_in).resolve()), "world": world,
               "rendezvous": str(tmp / "rendezvous"), "collective_timeout": timeout,
               "timing": bool(timing), "cases": cases}
        if cost_aware:
            job["cost_aware"] = {"profile": cost_aware["profile"]}
        job_file.write_text(json.dumps(job))
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
            print(_not_checked_closing(cases, world, cost_aware, why) + closing_suffix,
                  file=out)
            return 3
        results = [_read(tmp / f"{r}.json") for r in range(world)]
    elapsed = time.monotonic() - started
    if cost_aware:
        return _report_cost_aware(cases, results, world, elapsed, out, closing_suffix,
                                  cost_aware)
    return _report(cases, results, world, elapsed, out, closing_suffix, timing)


def _read(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _print_environment(first, out):
    """The shims and stand-ins the ranks ran with, and their torch."""
    for line in first["shims"]:
        print(f"shim: {line}", file=out)
    for line in first["stand_ins"]:
        print(f"stand-in: {line}", file=out)
    print(f"torch {first['torch']}", file=out)


def _report(cases, results, world, elapsed, out, closing_suffix, timing=None) -> int:
    _print_environment(results[0], out)
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


# The cost-aware mode (--cost-profile): each variant against its expected schedule.

def _short(value, limit=160):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _refusal_findings(per_rank, variant, expected):
    """Where a rank does not raise dcpsched's refusal (`expected`: its
    error and message) of a batch dcpsched refuses."""
    found = []
    for rank, entry in enumerate(per_rank):
        record = entry[variant]
        got = (record.get("error"), record.get("message"))
        if got != (expected["error"], expected["message"]):
            found.append(f"rank {rank}: dcpsched refuses the batch ({expected['error']}: "
                         f"{expected['message'][:160]}), the drop-in "
                         + (f"raises {got[0]}: {got[1][:160]}" if got[0] else "answered"))
    return found


def _without_lookup(record):
    """The record of what the rank received (the lookup is checked apart)."""
    return {key: value for key, value in record.items() if key != "lookup"}


def _first_microbatch_apart(got, wanted):
    """Where a rank's ids (per microbatch) differ from the schedule's."""
    if got is None:
        return "no ids (no scheduler ran)"
    if len(got) != len(wanted):
        return f"{len(got)} microbatches, the schedule gives it {len(wanted)}"
    index = next(i for i, (a, b) in enumerate(zip(got, wanted)) if a != b)
    return f"microbatch {index}: ids {_short(got[index])}, the schedule's {_short(wanted[index])}"


def _received_findings(case, per_rank, variant, reference, schedule):
    """Check 1: where a rank did not receive exactly the microbatches
    `schedule` gives it: its data rank's scheduler returned other ids, or
    its record is not, bit for bit, the reference run's (upstream's run()
    given the schedule); or that run itself raised."""
    found = []
    tp = case["tp"]
    for rank, entry in enumerate(per_rank):
        ours, theirs = entry[variant], entry[reference]
        if "error" in theirs:
            found.append(f"rank {rank}: upstream's run() raises on the schedule dcpsched gives "
                         f"({theirs['error']}: {theirs['message'][:160]})")
            continue
        if "error" in ours:
            found.append(f"rank {rank}: the drop-in raises {ours['error']}: "
                         f"{ours['message'][:160]}, where dcpsched schedules the batch")
            continue
        wanted = [microbatch[rank // tp] for microbatch in schedule]
        if rank % tp == 0 and ours.get("ids") != wanted:
            found.append(f"rank {rank}: the scheduler gave this rank "
                         f"{_first_microbatch_apart(ours.get('ids'), wanted)}")
            continue
        where = records.difference(_without_lookup(theirs), _without_lookup(ours))
        if where:
            found.append(f"rank {rank}: received other microbatches than upstream's run() "
                         f"packs from the schedule (the schedule's first): {where}")
    return found


def _coverage_findings(case, schedule):
    """Check 2: where `schedule` (what the ranks received: per microbatch,
    per DPxCP rank, the ids) does not hold every sample of the global batch
    in exactly one microbatch, on exactly the ranks of one CP group the
    runtime creates, or breaks the runtime-group rule."""
    total, min_cp = case["dp"] * case["cp"], case["min_cp_size"]
    batch = {sample for sample, _ in distributed_cases.global_batch(case)}
    where = collections.defaultdict(list)  # sample -> [(microbatch, holders)]
    for index, microbatch in enumerate(schedule):
        holders = collections.defaultdict(list)
        for rank, ids in enumerate(microbatch):
            for sample in ids:
                holders[sample].append(rank)
        for sample, ranks in holders.items():
            where[sample].append((index, ranks))
    found = [f"sample {s} is in no microbatch" for s in sorted(batch - set(where))]
    found += [f"sample {s} is not in the global batch" for s in sorted(set(where) - batch)]
    for sample in sorted(set(where) & batch):
        if len(where[sample]) != 1:
            found.append(f"sample {sample} is in microbatches "
                         f"{', '.join(str(i) for i, _ in where[sample])}")
            continue
        index, ranks = where[sample][0]
        group = runtime_groups.group_of(ranks[0], len(ranks), total, min_cp)
        if group is None or ranks != list(group):
            held = distributed_lookup._span(ranks)  # pylint: disable=protected-access
            found.append(f"microbatch {index}: sample {sample} is held by {held}, no CP group "
                         f"the runtime creates at G={total}, min_cp_size={min_cp}")
    return found + runtime_groups.violations(schedule, total, min_cp)


def _lookup_findings(case, per_rank, variant, schedule):
    """Check 3: where a rank's lookup failed (or get_batch) or found another
    group than `schedule` implies; (findings, entries confirmed)."""
    lookups = [entry[variant]["lookup"] for entry in per_rank]
    mismatches, confirmed = distributed_lookup.group_mismatches(lookups, schedule, case["tp"],
                                                                case["vpp"])
    return distributed_lookup.failures(lookups, case["tp"]) + mismatches, confirmed


def _cost_aware_variant(case, per_rank, variant):
    """(outcome, findings, lookup entries confirmed) of one variant on one
    case: 'scheduled' (checks 1-3 hold), 'odd' (1 and 2 hold; start-up
    refuses the odd G: no lookup), 'refused' (dcpsched refuses the batch
    and every rank raised its error) or 'differ'."""
    expected = case["cost_aware"]["expected"][variant]
    if "error" in expected:
        found = _refusal_findings(per_rank, variant, expected)
        return ("differ" if found else "refused"), found, 0
    index = expected["reference"]
    schedule = case["cost_aware"]["references"][index]
    found = _received_findings(case, per_rank, variant, f"{REFERENCE} {index}", schedule)
    if not found:
        received = distributed_lookup.schedule_of([e[variant].get("ids") for e in per_rank],
                                                  case["tp"])
        found = _coverage_findings(case, received)
    if found:
        return "differ", found, 0
    if _refused_by_start_up(per_rank, variant):
        return "odd", [], 0
    found, confirmed = _lookup_findings(case, per_rank, variant, schedule)
    return ("differ" if found else "scheduled"), found, confirmed


def _cost_aware_case(case, per_rank, out, verbose_limit=4):
    """(the case's outcome, lookup entries confirmed), printing differences:
    'differ' if any variant differs, else 'refused' if every variant was
    refused as dcpsched refuses, else 'odd' or 'scheduled'."""
    outcomes, confirmed = [], 0
    for variant in COST_AWARE_VARIANTS:
        outcome, found, confirmed_here = _cost_aware_variant(case, per_rank, variant)
        outcomes.append(outcome)
        confirmed += confirmed_here
        if found:
            _print_differences(f"differ: {distributed_cases.describe(case)}: {variant}",
                               found, out, verbose_limit)
    for outcome in ("differ", "odd", "scheduled"):
        if outcome in outcomes:
            return outcome, confirmed
    return "refused", confirmed


def _cost_aware_split_counts(per_rank):
    """(lookup entries, get_batch run on, not split) of both variants."""
    looked_up = ran = skipped = 0
    for entry in per_rank:
        for variant in COST_AWARE_VARIANTS:
            lookup = entry[variant].get("lookup")
            for item in lookup if isinstance(lookup, list) else []:
                looked_up += 1
                ran += item.get("get_batch") is not None
                skipped += "get_batch_skipped" in item
    return looked_up, ran, skipped


def _report_cost_aware(cases, results, world, elapsed, out, closing_suffix,
                       cost_aware) -> int:
    """The cost-aware mode's report (checks 1-3 of the module docstring)
    and exit status."""
    _print_environment(results[0], out)
    counts = collections.Counter()
    problems: List[str] = []
    compared = confirmed = 0
    lookups = [0, 0, 0]  # entries, get_batch run on, not split
    seconds = {variant: 0.0 for variant in COST_AWARE_VARIANTS}
    for case in cases:
        per_rank = [res["cases"][case["index"]] for res in results]
        if any(entry["index"] != case["index"] for entry in per_rank):
            problems.append(f"case {case['index']}: a rank's records are out of order")
            continue
        problem = _check_scheduler_ran(case, per_rank, results[0]["classes"],
                                       batch_checked=True)
        if problem:
            problems.append(problem)
            continue
        outcome, confirmed_here = _cost_aware_case(case, per_rank, out)
        counts[outcome] += 1
        confirmed += confirmed_here
        compared += len(per_rank) * len(COST_AWARE_VARIANTS)
        lookups = [a + b for a, b in zip(lookups, _cost_aware_split_counts(per_rank))]
        for variant in seconds:
            seconds[variant] += max(entry[variant]["seconds"] for entry in per_rank)
    for problem in problems:
        print(f"internal: {problem}", file=out)
    _print_cost_aware_summary(cases, cost_aware, seconds, elapsed, lookups, confirmed, out)
    closing = COST_AWARE_CLOSING.format(
        cases=len(cases), world=world, profile=cost_aware["profile"],
        variants=", ".join(COST_AWARE_VARIANTS), scheduled=counts["scheduled"],
        odd=counts["odd"], refused=counts["refused"], differ=counts["differ"],
        compared=compared, lookups=lookups[0])
    if problems:
        why = f"{len(problems)} case(s) not compared"
        print(closing + NOT_CHECKED.format(why=why) + closing_suffix, file=out)
        return 3
    if counts["differ"]:
        print(closing + closing_suffix, file=out)
        return 1
    if counts["scheduled"] == 0:
        why = "no case was received as scheduled and looked up"
        print(closing + NOTHING_CHECKED.format(why=why) + closing_suffix, file=out)
        return 4
    print(closing + closing_suffix, file=out)
    return 0


def _print_cost_aware_summary(cases, cost_aware, seconds, elapsed, lookups, confirmed, out):
    """What the cost-aware mode checked against, and the lookup's counts."""
    import dcpsched  # pylint: disable=import-outside-toplevel
    profile = dcpsched.CostProfile(cost_aware["profile"])
    applies_cap = cost_aware["applies_max_num_seqs"]
    scheduled = [c for c in cases if c["cost_aware"]["references"]]
    without = sum(distributed_cases.packing_aware_has_none(c, applies_cap) for c in scheduled)
    apart = sum(len(c["cost_aware"]["references"]) > 1 for c in cases)
    print(f"cost-aware expected: schedules by dcpsched.schedule_cost_aware under {profile.name} "
          f"(G = dp x cp, max_seqlen_per_dp_cp_rank, min_cp_size, the VPP group, "
          f"max_num_seqs {'applied' if applies_cap else 'not applied (the checkout ignores it)'})"
          f"; only_where_upstream_fails: packing-aware's where schedule_dynamic_cp has one; "
          f"every rank's record compared bit for bit with upstream's run() given the expected "
          f"schedule; packing-aware (upstream's scheduler) has no runnable schedule for "
          f"{without} of the {len(scheduled)} scheduled batches; the two variants' schedules "
          f"differ in {apart}", file=out)
    print("wrap_data_iterator wall time, slowest rank, summed over the cases: "
          + ", ".join(f"{variant} {value:.2f} s" for variant, value in seconds.items())
          + f"; whole run {elapsed:.1f} s", file=out)
    print(f"group lookup: every microbatch of every rank, both variants, through the "
          f"checkout's get_dynamic_data_context_parallel_groups and "
          f"get_batch_on_this_rank_for_sequence_packing: {lookups[0]} in all, {confirmed} "
          f"checked against the CP group the expected schedule implies and found it (not "
          f"checked: TP siblings whose get_batch did not run, ranks with no sample, "
          f"variants found to differ before), get_batch run on {lookups[1]} ({lookups[2]} "
          f"not split: a padded length not divisible by 2 x local_cp_size, which TE's zigzag "
          f"needs)",
          file=out)
