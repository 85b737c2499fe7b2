"""The command line of the conformance check (see the package docstring)."""

import argparse
import collections
import pathlib
import sys
import traceback
from typing import List, Optional

from dcpsched.conformance import (checks, corpus, generators, known_upstreams, shrink,
                                  signatures, upstream)
from dcpsched.conformance.golden import GoldenWriter
from dcpsched.conformance.problems import DynamicCpProblem
from dcpsched.conformance.worker import UpstreamWorker

# A progress line on stderr every this many problems.
PROGRESS_EVERY = 500
CLOSING = ("conformance: {equal} equal, {differ} differ, {both} both reject, "
           "{hangs} upstream hangs (dcpsched rejects), {runtime} upstream returns a schedule "
           "its runtime cannot run (dcpsched refuses: invariant 11)")
# The longest upstream schedule shown in a report, in characters.
SHOWN_SCHEDULE = 600
# Appended to CLOSING when upstream has parameters dcpsched does not model:
# the counts then say nothing about those parameters, so the line is never
# a clean one.
UNMODELLED = "; NOT CONFORMANT: dcpsched does not model upstream's {parameters} yet"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python3 -m dcpsched.conformance",
        description="Compare dcpsched with the scheduler of a Megatron-LM checkout.")
    parser.add_argument("--megatron", required=True, metavar="PATH",
                        help="the Megatron-LM checkout (its dev branch has the scheduler)")
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
    parser.add_argument("--timeout", type=float, default=2.0, metavar="SECONDS",
                        help="longest upstream call before it counts as a hang (default 2)")
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
    return parser


def _default_corpora() -> List[pathlib.Path]:
    try:
        from dcpsched import _fuzz_corpus  # pylint: disable=import-outside-toplevel
    except ImportError:
        return []
    return corpus.committed_corpora(pathlib.Path(_fuzz_corpus.SOURCE_DIR))


def _problems(args, corpora):
    for index, problem in enumerate(generators.generate(args.cases, args.seed)):
        yield f"generated #{index} (seed {args.seed})", problem
    for directory in corpora:
        yield from corpus.read(directory)


def _report(outcome, source, worker, timeout, out) -> None:
    def differs(candidate):
        return any(o.kind == checks.DIFFER
                   for o in checks.run_checks(worker, candidate, timeout, outcome.check))
    smallest = shrink.shrink(outcome.problem, differs)
    shown = checks.run_checks(worker, smallest, timeout, outcome.check)[0]
    print(f"differ: {outcome.check}: {smallest.line()}", file=out)
    print(f"  {shown.describe()}", file=out)
    print(f"  found in {source}", file=out)


def _size(problem):
    """How large a problem is, for keeping the smallest example: samples, then ranks."""
    return (len(problem.samples), problem.total_gpus)


def _report_runtime(outcome, source, worker, timeout, out) -> None:
    """Prints the smallest problem found, shrunk from outcome's, on which
    upstream returns a schedule its runtime cannot run (and dcpsched refuses
    it with invariant 11): upstream's schedule, where the runtime fails, and
    dcpsched's refusal."""
    def cannot_run(candidate):
        return any(o.kind == checks.RUNTIME_CANNOT_RUN
                   for o in checks.run_checks(worker, candidate, timeout, outcome.check))
    smallest = shrink.shrink(outcome.problem, cannot_run)
    shown = checks.run_checks(worker, smallest, timeout, outcome.check)[0]
    schedule = repr(shown.upstream.value)
    if len(schedule) > SHOWN_SCHEDULE:
        schedule = schedule[:SHOWN_SCHEDULE] + " ..."
    print(f"runtime cannot run: {outcome.check}: {smallest.line()}", file=out)
    print(f"  upstream returns {schedule}", file=out)
    print(f"  its runtime: {shown.runtime_broken}", file=out)
    print(f"  dcpsched: {shown.dcpsched.error}", file=out)
    print(f"  found in {source}; {outcome.problem.line()[:200]}", file=out)


def _describe_upstream(up, out) -> List[str]:
    """Prints what was loaded: the files' hashes (known or not), the upstream
    parameters dcpsched does not model, where max_num_seqs goes. Returns the
    unmodelled parameters ("function(parameter)")."""
    for line in known_upstreams.report_lines((up.schedule_file, up.utils_file)):
        print(line, file=out)
    unmodelled = signatures.unmodelled_parameters(up)
    for entry in unmodelled:
        print(f"unmodelled: upstream's {entry}: dcpsched has no counterpart, so no check "
              "sets it", file=out)
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
                                                 if args.timing else None))
    return max(status, 1) if unmodelled and status == 0 else status


def run(argv: Optional[List[str]] = None, out=sys.stdout) -> int:
    """Runs the check; returns the exit status."""
    args = _parser().parse_args(argv)
    if args.timing and args.distributed is None:
        print("conformance: --timing needs --distributed W", file=sys.stderr)
        return 2
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


def _run_problems(args, out) -> int:
    """The check on generated and corpus problems; returns the exit status."""
    try:
        up = upstream.load(args.megatron)
        if args.no_corpora:
            corpora = []
        else:
            corpora = args.corpus if args.corpus is not None else _default_corpora()
        for directory in corpora:
            if directory.name not in corpus.PROBLEM_TARGETS or not directory.is_dir():
                list(corpus.read(directory))  # raises CorpusError saying why
    except (upstream.MissingFunction, corpus.CorpusError) as error:
        print(f"conformance: {error}", file=sys.stderr)
        return 2
    unmodelled = _describe_upstream(up, out)
    print(f"problems: {args.cases} generated (seed {args.seed}); corpora: "
          f"{', '.join(str(d) for d in corpora) if corpora else 'none'}", file=out)
    writer = (GoldenWriter(args.write_golden, args.golden_tag, args.golden_max_gpus)
              if args.write_golden else None)
    counts = collections.Counter()
    runtime_examples = {}  # check -> (source, the smallest outcome of its kind)
    problems = 0
    capped = 0        # dynamic-CP problems that set max_num_seqs
    cap_changed = 0   # ... on which the cap upstream applies changes the schedule
    try:
        with UpstreamWorker(up) as worker:
            for source, problem in _problems(args, corpora):
                problems += 1
                if problems % PROGRESS_EVERY == 0:
                    print(f"conformance: {problems} problems so far", file=sys.stderr,
                          flush=True)
                if isinstance(problem, DynamicCpProblem) and problem.max_num_seqs is not None:
                    capped += 1
                    cap_changed += checks.cap_changes_schedule(up, problem)
                for outcome in checks.run_checks(worker, problem, args.timeout):
                    counts[outcome.kind] += 1
                    if writer:
                        writer.add(outcome)
                    if outcome.kind == checks.DIFFER:
                        _report(outcome, source, worker, args.timeout, out)
                    kept = runtime_examples.get(outcome.check)
                    if outcome.kind == checks.RUNTIME_CANNOT_RUN and (
                            kept is None or _size(outcome.problem) < _size(kept[1].problem)):
                        runtime_examples[outcome.check] = (source, outcome)
            for check in sorted(runtime_examples):
                source, outcome = runtime_examples[check]
                _report_runtime(outcome, source, worker, args.timeout, out)
    except corpus.CorpusError as error:
        print(f"conformance: {error}", file=sys.stderr)
        return 2
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
    closing = CLOSING.format(equal=counts[checks.EQUAL], differ=counts[checks.DIFFER],
                             both=counts[checks.BOTH_REJECT],
                             hangs=counts[checks.UPSTREAM_HANGS],
                             runtime=counts[checks.RUNTIME_CANNOT_RUN])
    if unmodelled:
        closing += UNMODELLED.format(parameters=", ".join(unmodelled))
    print(closing, file=out)
    return 1 if counts[checks.DIFFER] or unmodelled else 0
