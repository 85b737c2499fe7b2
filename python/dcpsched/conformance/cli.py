"""The command line of the conformance check (see the package docstring)."""

import argparse
import collections
import pathlib
import sys
from typing import List, Optional

from dcpsched.conformance import checks, corpus, generators, shrink, upstream
from dcpsched.conformance.golden import GoldenWriter
from dcpsched.conformance.worker import UpstreamWorker

# A progress line on stderr every this many problems.
PROGRESS_EVERY = 500
CLOSING = ("conformance: {equal} equal, {differ} differ, {both} both reject, "
           "{hangs} upstream hangs (dcpsched rejects)")


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
    parser.add_argument("--write-golden", type=pathlib.Path, metavar="DIR",
                        help="write upstream's answers as golden vectors into DIR")
    parser.add_argument("--timeout", type=float, default=2.0, metavar="SECONDS",
                        help="longest upstream call before it counts as a hang (default 2)")
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


def run(argv: Optional[List[str]] = None, out=sys.stdout) -> int:
    """Runs the check; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        up = upstream.load(args.megatron)
        corpora = args.corpus if args.corpus is not None else _default_corpora()
        for directory in corpora:
            if directory.name not in corpus.PROBLEM_TARGETS or not directory.is_dir():
                list(corpus.read(directory))  # raises CorpusError saying why
    except (upstream.MissingFunction, corpus.CorpusError) as error:
        print(f"conformance: {error}", file=sys.stderr)
        return 2
    print(f"upstream: {up.schedule_file} and {up.utils_file.name}", file=out)
    print(f"problems: {args.cases} generated (seed {args.seed}); corpora: "
          f"{', '.join(str(d) for d in corpora) if corpora else 'none'}", file=out)
    writer = GoldenWriter(args.write_golden) if args.write_golden else None
    counts = collections.Counter()
    problems = 0
    try:
        with UpstreamWorker(up) as worker:
            for source, problem in _problems(args, corpora):
                problems += 1
                if problems % PROGRESS_EVERY == 0:
                    print(f"conformance: {problems} problems so far", file=sys.stderr,
                          flush=True)
                for outcome in checks.run_checks(worker, problem, args.timeout):
                    counts[outcome.kind] += 1
                    if writer:
                        writer.add(outcome)
                    if outcome.kind == checks.DIFFER:
                        _report(outcome, source, worker, args.timeout, out)
    except corpus.CorpusError as error:
        print(f"conformance: {error}", file=sys.stderr)
        return 2
    if writer:
        written = writer.write()
        print(f"golden: wrote {', '.join(f'{n} cases to {f}' for f, n in written.items())} "
              f"in {args.write_golden} ({writer.left_out} left out: a number outside int64)",
              file=out)
    print(f"{problems} problems; not compared: {counts[checks.OUTSIDE]} outside dcpsched's "
          f"limits (upstream accepts them), {counts[checks.SKIP]} alignments of an upstream "
          "schedule that failed", file=out)
    print(CLOSING.format(equal=counts[checks.EQUAL], differ=counts[checks.DIFFER],
                         both=counts[checks.BOTH_REJECT], hangs=counts[checks.UPSTREAM_HANGS]),
          file=out)
    return 1 if counts[checks.DIFFER] else 0
