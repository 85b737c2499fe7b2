"""The command line of the conformance check (see the package docstring)."""

import argparse
import collections
import pathlib
import sys
import time
import traceback
from typing import List, Optional

from dcpsched.conformance import (checks, corpus, generators, known_upstreams, reproduce,
                                  signatures, upstream)
from dcpsched.conformance.classes import Classes
from dcpsched.conformance.golden import GoldenWriter
from dcpsched.conformance.problems import DynamicCpProblem
from dcpsched.conformance.worker import UpstreamWorker

# A progress line on stderr at every tenth of the problems, and at least
# every PROGRESS_SECONDS.
PROGRESS_STEPS = 10
PROGRESS_SECONDS = 30.0
CLOSING = ("conformance: {equal} equal, {differ} differ, {both} both reject, "
           "{hangs} upstream hangs (dcpsched rejects), {runtime} upstream returns a schedule "
           "its runtime cannot run (dcpsched refuses: invariant 11), {fails} upstream fails "
           "where dcpsched schedules")
# Checks run for information only: their answers are printed apart, and
# count neither in the closing line nor in the exit status.
INFORMATION_ONLY = {
    "BalancedCPScheduler": (
        "BalancedCPScheduler is not the algorithm dcpsched's legacy scheduler reproduces "
        "(dev's next_hdp_group of data_schedule_utils.py, which #5154 removed): it adds a "
        "sample to a CP group past max_seq_len_per_rank (no token-budget test) and trims "
        "groups after placing (trim_overload), so it is compared for information only"),
}
# Appended to CLOSING when the run read no fuzz corpus.
NO_CORPORA = "; generated problems only (no fuzz corpora)"
# Exit statuses (the --help epilog says them).
EXIT_AGREE, EXIT_DIFFER, EXIT_USAGE, EXIT_NOT_CHECKED, EXIT_NOTHING = 0, 1, 2, 3, 4
EPILOG = """\
exit status:
  0  every problem compared is equal, both sides reject it, or it falls in a
     named class: upstream hangs, upstream returns a schedule its runtime
     cannot run, upstream fails (AssertionError) where dcpsched schedules
  1  a difference, or upstream has a parameter dcpsched does not model
  2  the command line is wrong, or PATH is no Megatron-LM checkout (or lacks
     what --distributed needs)
  3  the check itself failed (an internal error, traceback shown): NOT CHECKED
  4  nothing was checked: no problem (e.g. --cases 0 --no-corpora), or the
     checkout carries none of the schedulers (with --cost-profile: no batch
     was received as scheduled and looked up)
  --pipeline-order: 0 no shape differs, 1 one does, 2 the checkout lacks
     schedules.py or a function the check calls, 3 NOT CHECKED

time: a default run (2000 generated problems and the 1974 problems of the
committed corpora) took 21 minutes on 2 shared cores against Megatron-LM dev
66d54b474b, most of it waiting out upstream's hangs (--timeout), and 23 s
against main a9381be598 (no packing-aware scheduler); --cases 300
--no-corpora took 90 s against dev. Progress goes to stderr every tenth of
the problems (and at least every 30 s).
"""
# The longest upstream schedule shown in a report, in characters.
SHOWN_SCHEDULE = 600
# Appended to CLOSING when upstream has parameters dcpsched does not model:
# the counts then say nothing about those parameters, so the line is never
# a clean one.
UNMODELLED = "; NOT CONFORMANT: dcpsched does not model upstream's {parameters} yet"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python3 -m dcpsched.conformance",
        description="Compare dcpsched with the schedulers of a Megatron-LM checkout: the "
                    "packing-aware (dev) and dp_balanced (dev, main) schedulers it carries; "
                    "the legacy BalancedCPScheduler (dev, main), another algorithm than "
                    "dcpsched's legacy one, for information only; with --pipeline-order, "
                    "dcpsched's pipeline op order against the checkout's schedules.py.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megatron", required=True, metavar="PATH",
                        help="the Megatron-LM checkout: the directory that holds megatron/")
    parser.add_argument("--cases", type=int, default=2000, metavar="N",
                        help="generated problems (default 2000)")
    parser.add_argument("--seed", type=int, default=5154, metavar="S",
                        help="seed of the generated problems (default 5154)")
    parser.add_argument("--corpus", action="append", type=pathlib.Path, metavar="DIR",
                        help="a fuzz corpus directory (corpus/fuzz_<target>), repeatable; "
                             "default: the committed corpora, where the build has them")
    parser.add_argument("--no-corpora", action="store_true",
                        help="run the generated problems only (no fuzz corpora)")
    parser.add_argument("--write-golden", type=pathlib.Path, metavar="DIR",
                        help="write upstream's answers as golden vectors into DIR")
    parser.add_argument("--golden-max-gpus", type=int, metavar="G",
                        help="with --write-golden: leave out cases of more than G ranks "
                             "(their files take megabytes)")
    parser.add_argument("--golden-tag", metavar="TAG",
                        help="with --write-golden: append _TAG to the file names and "
                             "-TAG to the case names (e.g. pr6479)")
    parser.add_argument("--exhaustive", metavar="SETS",
                        help="instead of generated and corpus problems, every problem of "
                             "explicit finite sets (exhaustive.py; e.g. 'test', or "
                             "'G=1..16 n=0..3 lens=1,m-1,m,m+1,2m mslpr=4 min_cp=1,2 "
                             "vpp=none,2 max_num_seqs=none,1')")
    parser.add_argument("--pipeline-order", action="store_true",
                        help="instead of the scheduling checks, check dcpsched's pipeline op "
                             "order (pipeline_stage_order, the runtime step model's) against "
                             "the checkout's megatron/core/pipeline_parallel/schedules.py "
                             "(get_pp_rank_microbatches, get_schedule_table, "
                             "convert_schedule_table_to_order) for every P in 1..8, V in "
                             "1..4, M in 1..24, N in 1..M+1 and pipeline rank (a few seconds)")
    parser.add_argument("--timeout", type=float, default=2.0, metavar="SECONDS",
                        help="longest upstream call before it counts as a hang (default 2)")
    parser.add_argument("--all-differences", action="store_true",
                        help="list every problem of every class found, not only each "
                             "class's count and smallest example")
    group = parser.add_argument_group(
        "distributed", "upstream's real data pipeline (wrap_data_iterator, run) on W gloo "
        "processes, with upstream's scheduler and with the drop-in (needs torch)")
    group.add_argument("--distributed", type=int, metavar="W",
                       help="run the distributed harness on W processes instead of the "
                            "scheduling checks")
    group.add_argument("--batches", type=int, default=40, metavar="N",
                       help="with --distributed: global batches (cases) to run (default 40)")
    group.add_argument("--drop-in", type=pathlib.Path, metavar="FILE",
                       help="with --distributed: the Python file whose install_into_megatron() "
                            "installs the drop-in (default: the installed package's own, "
                            "dcpsched/megatron.py)")
    group.add_argument("--distributed-timeout", type=float, default=600.0, metavar="SECONDS",
                       help="with --distributed: deadline of the whole run, and of each "
                            "collective (default 600)")
    group.add_argument("--timing", action="store_true",
                       help="with --distributed: instead of the generated cases, time one "
                            "global batch of the benchmark workload in run() with each "
                            "scheduler, and the scheduling call's share (outputs compared "
                            "too; no figure unless all are equal)")
    group.add_argument("--timing-samples", type=int, default=512, metavar="N",
                       help="with --timing: samples in the global batch, a multiple of W "
                            "(default 512)")
    group.add_argument("--repeats", type=int, default=5, metavar="R",
                       help="with --timing: repetitions per topology, medians reported "
                            "(default 5)")
    group.add_argument("--cost-profile", metavar="P",
                       help="with --distributed: check the drop-in's cost-aware scheduler "
                            "instead (install_into_megatron(cost_profile=P), and with "
                            "only_where_upstream_fails=True), P a shipped profile's name "
                            "(e.g. h200-llama3-8b) or a profile file: every rank must "
                            "receive the microbatches dcpsched.schedule_cost_aware's schedule "
                            "of the batch gives it (bit for bit as upstream's run() packs "
                            "that schedule), every sample once on one CP group, and the "
                            "runtime's CP group lookup must find the group the schedule "
                            "implies; upstream's scheduler is not run (exit 4 if no "
                            "batch was received as scheduled and looked up)")
    return parser


def _default_corpora():
    """(the committed corpora the build can read, why there are none)."""
    try:
        from dcpsched import _fuzz_corpus  # pylint: disable=import-outside-toplevel
    except ImportError:
        return [], ("this dcpsched cannot read fuzz corpora: it lacks the decoder "
                    "dcpsched._fuzz_corpus, which the pip package leaves out; to check the "
                    "committed corpora (corpus/fuzz_* of dcpsched's source tree) too, build "
                    "dcpsched from source with its tests and run with "
                    "PYTHONPATH=<build>/python")
    source = pathlib.Path(_fuzz_corpus.SOURCE_DIR)
    found = corpus.committed_corpora(source)
    return found, None if found else f"no corpus/fuzz_* directory under {source}"


def _problems(args, corpora):
    for index, problem in enumerate(generators.generate(args.cases, args.seed)):
        yield f"generated #{index} (seed {args.seed})", problem
    for directory in corpora:
        yield from corpus.read(directory)


def _outcome_of(worker, timeout):
    """run(problem, check): the outcome of one check on a problem, or None."""
    def run(problem, check):
        outcomes = checks.run_checks(worker, problem, timeout, check)
        return outcomes[0] if outcomes else None
    return run


def _clip(text: str) -> str:
    return text if len(text) <= SHOWN_SCHEDULE else text[:SHOWN_SCHEDULE] + " ..."


def _print_commands(problem, check, out) -> None:
    print(f"  run it: {reproduce.command(problem, check)}", file=out)
    if check == "next_hdp_group_packing_aware":
        print(f"  one step: {reproduce.step_command(problem)}", file=out)


def _print_every(found, out) -> None:
    for source, line in found.every:
        print(f"    {source}: {line}", file=out)


def _count_of_problems(count) -> str:
    """'1 problem', 'N problems'."""
    return f"{count} problem{'s' if count != 1 else ''}"


def _print_class(header, found, shown, details, out) -> None:
    """Prints one class: `header`, its smallest problem shrunk, the
    `details` lines, the commands that run it, where it was found and, with
    --all-differences, every problem."""
    print(header, file=out)
    print(f"  smallest, shrunk: {shown.problem.line()}", file=out)
    for line in details:
        print(f"  {line}", file=out)
    _print_commands(shown.problem, found.check, out)
    print(f"  found in {found.source}", file=out)
    _print_every(found, out)


def _report_classes(classes: Classes, worker, timeout, out, prefix="") -> None:
    """Prints every class of findings once: its count, its smallest problem
    shrunk within the class, what each side did there, and how to run it.
    Each class's first line starts with `prefix`."""
    run = _outcome_of(worker, timeout)
    for found in classes.of_kind(checks.DIFFER):
        shown = Classes.shrunk(found, run)
        _print_class(f"{prefix}differ: {found.check}: {found.label}: "
                     f"{_count_of_problems(found.count)}", found, shown, [shown.describe()], out)
    for found in classes.of_kind(checks.UPSTREAM_FAILS):
        shown = Classes.shrunk(found, run)
        _print_class(f"{prefix}upstream fails where dcpsched schedules: {found.check}: "
                     f"{found.label}: {_count_of_problems(found.count)}", found, shown,
                     [f"upstream raises {shown.upstream.error}",
                      f"dcpsched returns {_clip(repr(shown.dcpsched.value))}"], out)
    for found in classes.of_kind(checks.RUNTIME_CANNOT_RUN):
        shown = Classes.shrunk(found, run)
        print(f"{prefix}runtime cannot run: {found.check}: {shown.problem.line()}", file=out)
        print(f"  upstream returns {_clip(repr(shown.upstream.value))}", file=out)
        print(f"  its runtime: {shown.runtime_broken}", file=out)
        print(f"  dcpsched: {shown.dcpsched.error}", file=out)
        print(f"  found in {found.source}; {found.smallest.problem.line()[:200]}", file=out)
        print(f"  {_count_of_problems(found.count)} of this class; "
              f"run it: {reproduce.command(shown.problem, found.check)}", file=out)
        _print_every(found, out)


def _describe_schedulers(up, out) -> None:
    """Prints which of upstream's schedulers the checkout carries (checked)
    and which it lacks (named, not checked)."""
    for scheduler, missing in up.schedulers().items():
        if missing:
            print(f"scheduler {scheduler}: NOT CHECKED: this checkout lacks "
                  f"{', '.join(missing)}", file=out)
            continue
        parts = ", ".join(name for _, name, _ in upstream.SCHEDULERS[scheduler])
        note = ""
        if scheduler == "dp_balanced" and not up.dp_balanced_takes_max_num_seqs:
            note = ("; its class takes no max_num_seqs (Megatron-LM main), so neither side "
                    "gets a problem's cap")
        if scheduler == "legacy":
            note = (f" of {up.legacy_file.relative_to(up.schedule_file.parents[3])}, on "
                    "min_cp_size 1, uncapped, unaligned problems; its runtime: " + (
                        "main's hybrid-CP groups (create_hybrid_dp_cp_groups: sizes 2 to "
                        "2^(int(log2 G) - 1), and G)" if up.legacy_runtime_rule == "hybrid"
                        else "dev's dynamic-CP groups (invariant 11)"))
            print(f"scheduler {scheduler}: FOR INFORMATION ONLY ({parts}{note}): "
                  f"{INFORMATION_ONLY['BalancedCPScheduler']}", file=out)
            continue
        print(f"scheduler {scheduler}: checked ({parts}{note})", file=out)


def _describe_upstream(up, out) -> List[str]:
    """Prints what was loaded: the files' hashes (known or not), the upstream
    parameters dcpsched does not model, where max_num_seqs goes. Returns the
    unmodelled parameters ("function(parameter)")."""
    for line in known_upstreams.report_lines(up.files):
        print(line, file=out)
    unmodelled = signatures.unmodelled_parameters(up)
    for entry in unmodelled:
        print(f"unmodelled: upstream's {entry}: dcpsched has no counterpart, so no check "
              "sets it", file=out)
    if up.dynamic_cp_scheduler is None:
        return unmodelled
    print("max_num_seqs: " + (
        "passed to upstream's DefaultDynamicCPScheduler and next_hdp_group_packing_aware, "
        "and to dcpsched" if up.step_takes_max_num_seqs else
        "passed to upstream's DefaultDynamicCPScheduler only: this checkout's "
        "next_hdp_group_packing_aware takes none, so dcpsched gets none"), file=out)
    return unmodelled


def _default_drop_in() -> pathlib.Path:
    """The drop-in the package ships, dcpsched/megatron.py, wherever the
    package is (a wheel's install, a build tree): the file a training job
    installs with dcpsched.megatron.install_into_megatron()."""
    import dcpsched.megatron  # pylint: disable=import-outside-toplevel
    return pathlib.Path(dcpsched.megatron.__file__).resolve()


def _cost_aware_option(profile):
    """--cost-profile P as run_distributed's cost_aware (a file's path made
    absolute: the rank processes read it), or None, printed why, if
    dcpsched cannot read it."""
    import dcpsched  # pylint: disable=import-outside-toplevel
    try:
        dcpsched.CostProfile(profile)
    except (OSError, ValueError) as error:
        print(f"conformance: --cost-profile {profile}: {error} (a shipped profile: "
              f"{', '.join(dcpsched.CostProfile.shipped_names())}, or a profile file)",
              file=sys.stderr)
        return None
    path = pathlib.Path(profile)
    return {"profile": str(path.resolve()) if path.is_file() else profile}


def _run_distributed(args, out) -> int:
    # pylint: disable=import-outside-toplevel
    from dcpsched.conformance import pipeline_upstream
    if args.distributed < 2 or args.batches < 1 or args.distributed_timeout <= 0:
        print("conformance: --distributed needs W >= 2, --batches >= 1 and a positive "
              "--distributed-timeout", file=sys.stderr)
        return 2
    if args.timing and (args.repeats < 1 or args.timing_samples < args.distributed
                        or args.timing_samples % args.distributed):
        print("conformance: --timing needs --repeats >= 1 and --timing-samples a positive "
              "multiple of W", file=sys.stderr)
        return 2
    cost_aware = None
    if args.cost_profile is not None:
        cost_aware = _cost_aware_option(args.cost_profile)
        if cost_aware is None:
            return 2
    drop_in = args.drop_in or _default_drop_in()
    if drop_in is None or not drop_in.is_file():
        print(f"conformance: the drop-in file {drop_in} was not found: "
              "pass --drop-in FILE (a file defining install_into_megatron())", file=sys.stderr)
        return 2
    try:
        import torch.distributed  # noqa: F401
    except ImportError as error:
        print(f"conformance: --distributed needs torch ({error}); on Debian: apt-get install "
              "python3-torch", file=sys.stderr)
        return 2
    try:
        up = upstream.load(args.megatron)
        up.require("packing-aware")
        pipeline_upstream.check_has_pipeline(up)
        from dcpsched.conformance import runtime_upstream
        runtime_upstream.check_has_runtime(args.megatron)
    except upstream.MissingFunction as error:
        print(f"conformance: {error}", file=sys.stderr)
        return 2
    unmodelled = _describe_upstream(up, out)
    from dcpsched.conformance import distributed
    suffix = UNMODELLED.format(parameters=", ".join(unmodelled)) if unmodelled else ""
    status = distributed.run_distributed(args.megatron, drop_in, args.distributed,
                                         args.batches, args.seed, args.distributed_timeout, out,
                                         closing_suffix=suffix,
                                         timing=((args.timing_samples, args.repeats)
                                                 if args.timing else None),
                                         cost_aware=cost_aware and {
                                             **cost_aware, "applies_max_num_seqs":
                                             up.step_takes_max_num_seqs})
    return max(status, 1) if unmodelled and status == 0 else status


def run(argv: Optional[List[str]] = None, out=sys.stdout) -> int:
    """Runs the check; returns the exit status."""
    args = _parser().parse_args(argv)
    if args.timing and args.distributed is None:
        print("conformance: --timing needs --distributed W", file=sys.stderr)
        return 2
    if args.cost_profile is not None and (args.distributed is None or args.timing):
        print("conformance: --cost-profile needs --distributed W (and no --timing)",
              file=sys.stderr)
        return 2
    if args.pipeline_order:
        if args.distributed is not None or args.exhaustive is not None:
            print("conformance: --pipeline-order is a check of its own: give it without "
                  "--distributed and --exhaustive", file=sys.stderr)
            return 2
        try:
            from dcpsched.conformance import pipeline_order  # pylint: disable=import-outside-toplevel
            return pipeline_order.run_check(args.megatron, out,
                                            all_differences=args.all_differences)
        except Exception:  # pylint: disable=broad-except
            traceback.print_exc()
            print("conformance: internal error in the pipeline-order check (above); NOT CHECKED",
                  file=sys.stderr)
            return 3
    if args.distributed is not None:
        try:
            return _run_distributed(args, out)
        except Exception:  # pylint: disable=broad-except
            traceback.print_exc()
            print("conformance: internal error in the distributed harness (above); "
                  "NOT CHECKED", file=sys.stderr)
            return 3
    try:
        if args.exhaustive is not None:
            return _run_exhaustive(args, out)
        return _run_problems(args, out)
    except Exception:  # pylint: disable=broad-except
        traceback.print_exc()
        print("conformance: internal error in the conformance check (above); NOT CHECKED",
              file=sys.stderr)
        return 3


def _run_exhaustive(args, out) -> int:
    """The check on every problem of the sets of --exhaustive (exhaustive.py)."""
    from dcpsched.conformance import exhaustive  # pylint: disable=import-outside-toplevel
    try:
        up = upstream.load(args.megatron)
    except upstream.MissingFunction as error:
        print(f"conformance: {error}", file=sys.stderr)
        return 2
    unmodelled = _describe_upstream(up, out)
    suffix = UNMODELLED.format(parameters=", ".join(unmodelled)) if unmodelled else ""
    with UpstreamWorker(up) as worker:
        return exhaustive.run(worker, args.exhaustive, args.timeout, out, suffix)


class _Progress:
    """A progress line on stderr at every tenth of `total` problems, and at
    least every PROGRESS_SECONDS, so a long run is seen to move."""

    def __init__(self, total: int):
        self._total = total
        self._started = self._last = time.monotonic()
        self._next_step = 1

    def update(self, done: int) -> None:
        now = time.monotonic()
        step = done * PROGRESS_STEPS >= self._next_step * self._total
        if not step and now - self._last < PROGRESS_SECONDS:
            return
        while done * PROGRESS_STEPS >= self._next_step * self._total:
            self._next_step += 1
        self._last = now
        print(f"conformance: {done} of {self._total} problems ({done * 100 // self._total}%), "
              f"{now - self._started:.0f} s", file=sys.stderr, flush=True)


def _corpus_size(directory: pathlib.Path) -> int:
    return sum(1 for path in directory.rglob("*") if path.is_file())


def _run_problems(args, out) -> int:
    """The check on generated and corpus problems; returns the exit status."""
    no_corpora = None  # why the run reads no corpus
    try:
        up = upstream.load(args.megatron)
        if args.no_corpora:
            corpora, no_corpora = [], "--no-corpora"
        elif args.corpus is not None:
            corpora = args.corpus
        else:
            corpora, no_corpora = _default_corpora()
        for directory in corpora:
            if directory.name not in corpus.PROBLEM_TARGETS or not directory.is_dir():
                list(corpus.read(directory))  # raises CorpusError saying why
    except (upstream.MissingFunction, corpus.CorpusError) as error:
        print(f"conformance: {error}", file=sys.stderr)
        return EXIT_USAGE
    unmodelled = _describe_upstream(up, out)
    _describe_schedulers(up, out)
    if not any(up.has(scheduler) for scheduler in upstream.SCHEDULERS):
        print(f"conformance: NOTHING CHECKED: the checkout at {args.megatron} carries none of "
              f"upstream's schedulers ({', '.join(upstream.SCHEDULERS)})", file=out)
        return EXIT_NOTHING
    print(f"problems: {args.cases} generated (seed {args.seed}); corpora: "
          f"{', '.join(str(d) for d in corpora) if corpora else 'none'}"
          f"{f' ({no_corpora})' if no_corpora else ''}", file=out)
    writer = (GoldenWriter(args.write_golden, args.golden_tag, args.golden_max_gpus)
              if args.write_golden else None)
    counts = collections.Counter()
    per_check = collections.Counter()  # problems compared, per check
    classes = Classes(keep_every=args.all_differences)
    information = collections.Counter()  # outcome kinds of INFORMATION_ONLY checks
    information_classes = Classes(keep_every=args.all_differences)
    progress = _Progress(max(args.cases + sum(_corpus_size(d) for d in corpora), 1))
    problems = 0
    capped = 0        # dynamic-CP problems that set max_num_seqs
    cap_changed = 0   # ... on which the cap upstream applies changes the schedule
    try:
        with UpstreamWorker(up) as worker:
            for source, problem in _problems(args, corpora):
                problems += 1
                progress.update(problems)
                if (isinstance(problem, DynamicCpProblem) and problem.max_num_seqs is not None
                        and up.dynamic_cp_scheduler is not None):
                    capped += 1
                    cap_changed += checks.cap_changes_schedule(up, problem)
                for outcome in checks.run_checks(worker, problem, args.timeout):
                    if outcome.check in INFORMATION_ONLY:
                        information[outcome.kind] += 1
                        information_classes.add(outcome, source)
                        continue
                    counts[outcome.kind] += 1
                    if outcome.kind not in (checks.OUTSIDE, checks.SKIP):
                        per_check[outcome.check] += 1
                    if writer:
                        writer.add(outcome)
                    classes.add(outcome, source)
            _report_classes(classes, worker, args.timeout, out)
            if information:
                _report_classes(information_classes, worker, args.timeout, out,
                                prefix="for information: ")
    except corpus.CorpusError as error:
        print(f"conformance: {error}", file=sys.stderr)
        return EXIT_USAGE
    if writer:
        written = writer.write()
        print(f"golden: wrote {', '.join(f'{n} cases to {f}' for f, n in written.items())} "
              f"in {args.write_golden} ({writer.left_out} left out: a number outside int64; "
              f"{writer.left_out_large} left out: more than --golden-max-gpus ranks)",
              file=out)
    print(f"{problems} problems; {capped} set max_num_seqs (the cap changes dcpsched's "
          f"schedule in {cap_changed}); not compared: {counts[checks.OUTSIDE]} outside "
          f"dcpsched's limits (upstream accepts them), {counts[checks.SKIP]} alignments of an "
          "upstream schedule that failed", file=out)
    print("compared, per check: " + (", ".join(f"{check} {n}" for check, n in per_check.items())
                                     or "none"), file=out)
    if information:
        print("for information, not counted below: BalancedCPScheduler: " + ", ".join(
            f"{n} {kind}" for kind, n in sorted(information.items())), file=out)
    closing = CLOSING.format(equal=counts[checks.EQUAL], differ=counts[checks.DIFFER],
                             both=counts[checks.BOTH_REJECT],
                             hangs=counts[checks.UPSTREAM_HANGS],
                             runtime=counts[checks.RUNTIME_CANNOT_RUN],
                             fails=counts[checks.UPSTREAM_FAILS])
    if not corpora:
        closing += NO_CORPORA
    if unmodelled:
        closing += UNMODELLED.format(parameters=", ".join(unmodelled))
    print(closing, file=out)
    if not per_check:
        print(f"conformance: NOTHING CHECKED: {problems} problems, none compared by any "
              "check (give --cases N > 0, or corpora)", file=out)
        return EXIT_NOTHING
    return EXIT_DIFFER if counts[checks.DIFFER] or unmodelled else EXIT_AGREE
