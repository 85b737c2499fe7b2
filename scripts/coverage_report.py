#!/usr/bin/python3
"""Turns merged coverage profiles into core/'s coverage report.

scripts/coverage.sh runs each layer of the suite with its own profile and
merges them into PROFILES/<layer>.profdata; this reads them with llvm-cov-14
and prints, for the sources under --sources only:

- line, branch and region coverage of each layer alone and of every layer but
  golden (llvm-cov's own totals, from `llvm-cov-14 export -summary-only`);
- the same per file, without golden;
- every uncovered line without golden, as file:line and its text. A run of
  consecutive uncovered lines is one piece of code. A piece that
  --unreachable names (file and a text that one of its lines, or the line
  just before it, contains) is unreachable defensive code, printed with its
  reason; any other piece is a gap in the suite;
- every branch outcome never taken without golden (in any instantiation),
  with its reason where --unreachable names its line.

With --docs FILE it also writes that Markdown page, whose part written here
ends with the line
`core/ coverage without golden: lines X%, branches Y%, regions Z%`; the
MC/DC section after it (scripts/mcdc_report.py) is kept as it is.

Exit status 0: no gap, every --unreachable entry names an uncovered piece,
and branch coverage without golden is at least --min-branches; else 1.
"""

import argparse
import dataclasses
import datetime
import json
import os
import re
import subprocess
import sys

import unreachable_list

LAYERS = [
    ("unit", "unit tests (ctest label unit, without golden_test)"),
    ("properties", "RapidCheck properties (label properties)"),
    ("corpus", "corpus replay (label corpus: fuzz_*_replay)"),
    ("golden", "golden vectors (golden_test)"),
    ("without_golden", "all layers but golden (unit + properties + corpus)"),
]
KINDS = ("lines", "branches", "regions")
LLVM_COV = "llvm-cov-14"
# Where the MC/DC section of the --docs page starts (scripts/mcdc_report.py).
MCDC_MARKER = "<!-- mcdc: the section below is written by scripts/coverage.sh --mcdc -->"


@dataclasses.dataclass
class Unreachable:
    path: str
    fragment: str
    reason: str
    used: bool = False


@dataclasses.dataclass
class Piece:
    path: str
    lines: list  # [(number, text)]
    guard: str = ""  # the line before the piece, e.g. the `if` that leads to it
    reason: str = ""  # empty: a gap in the suite


def measured_commit():
    """The checked-out commit, and whether the tree differed from it."""
    def git(*args):
        return subprocess.run(["git", *args], capture_output=True, text=True, check=False)
    head = git("rev-parse", "--short", "HEAD")
    if head.returncode != 0:
        return "an unknown commit (not a git checkout)"
    commit = f"commit {head.stdout.strip()}"
    if git("diff", "--quiet", "HEAD", "--", ".", ":!docs/coverage.md").returncode != 0:
        commit += " plus uncommitted changes"
    return commit


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", required=True,
                        help="directory of <layer>.profdata files")
    parser.add_argument("--sources", required=True,
                        help="source directory to report on, e.g. core")
    parser.add_argument("--unreachable", required=True,
                        help="file naming unreachable code: path | text | reason")
    parser.add_argument("--docs", help="Markdown page to write")
    parser.add_argument("--min-branches", type=float, default=98.0,
                        help="least branch coverage without golden, in percent")
    parser.add_argument("objects", nargs="+", help="instrumented programs")
    return parser.parse_args()


def llvm_cov(command, profile, objects, sources, extra):
    args = [LLVM_COV, command, f"-instr-profile={profile}", objects[0]]
    for obj in objects[1:]:
        args += ["-object", obj]
    args += extra + [sources]
    result = subprocess.run(args, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        sys.exit(f"coverage_report: {' '.join(args[:3])} ... failed:\n{result.stderr}")
    return result.stdout


def summaries(profile, objects, sources):
    """Totals and per-file summaries: {kind: (covered, count)}."""
    data = json.loads(llvm_cov("export", profile, objects, sources,
                               ["-format=text", "-summary-only"]))["data"][0]

    def pick(summary):
        return {kind: (summary[kind]["covered"], summary[kind]["count"])
                for kind in KINDS}

    files = {os.path.relpath(f["filename"]): pick(f["summary"]) for f in data["files"]}
    return pick(data["totals"]), files


def percent(covered, count):
    return 100.0 * covered / count if count else 100.0


def cell(pair):
    covered, count = pair
    return f"{percent(covered, count):.2f}% ({covered}/{count})"


FILE_HEADER = re.compile(r"^(/\S+):$")
LINE = re.compile(r"^\s*(\d+)\|\s*([0-9.]+[kMGTPE]?|)\|(.*)$")
BRANCH = re.compile(r"^\s*\|?\s*Branch \((\d+):(\d+)\): \[True: ([^,]+), False: ([^\]]+)\]")
SEPARATOR = re.compile(r"^\s*\|?\s*-{10,}$")


@dataclasses.dataclass
class Branch:
    path: str
    line: int
    column: int
    ordinal: int  # among the conditions llvm-cov lists at line:column
    outcome: str  # "true" or "false"
    text: str = ""
    reason: str = ""  # empty: not named unreachable


def uncovered(profile, objects, sources):
    """Uncovered lines {path: [(line, text)]} and the branch outcomes never
    taken in any instantiation of their function."""
    text = llvm_cov("show", profile, objects, sources,
                    ["-format=text", "-use-color=false", "-show-branches=count",
                     "-show-instantiations=false", "-show-line-counts"])
    lines = {}
    sources_text = {}
    outcomes = {}  # (path, line, column, ordinal, outcome) -> taken anywhere
    path = None
    ordinals = {}  # per listing of branches: (line, column) -> conditions seen
    for row in text.splitlines():
        header = FILE_HEADER.match(row)
        if header:
            path = os.path.relpath(header.group(1))
            lines.setdefault(path, [])
            sources_text.setdefault(path, {})
            continue
        if path is None:
            continue
        line = LINE.match(row)
        if line:
            number = int(line.group(1))
            sources_text[path][number] = line.group(3)
            if line.group(2) == "0":
                lines[path].append((number, line.group(3)))
            ordinals = {}
            continue
        if SEPARATOR.match(row):
            ordinals = {}  # each listing is one function or instantiation
            continue
        branch = BRANCH.match(row)
        if branch:
            number, column = int(branch.group(1)), int(branch.group(2))
            ordinal = ordinals.get((number, column), 0)
            ordinals[(number, column)] = ordinal + 1
            for outcome, count in (("true", branch.group(3)), ("false", branch.group(4))):
                key = (path, number, column, ordinal, outcome)
                outcomes[key] = outcomes.get(key, False) or count.strip() != "0"
    never = [Branch(*key, text=sources_text[key[0]].get(key[1], ""))
             for key, taken in sorted(outcomes.items()) if not taken]
    return lines, never, sources_text


def read_unreachable(path):
    return [Unreachable(*fields)
            for fields in unreachable_list.read_entries(path, 3, "coverage_report",
                                                        "file | text of a line | reason")]


def pieces_of(lines, sources_text):
    """Groups each file's uncovered lines into runs of consecutive lines."""
    pieces = []
    for path in sorted(lines):
        run = []
        for number, text in lines[path] + [(None, "")]:
            if run and (number is None or number != run[-1][0] + 1):
                guard = sources_text[path].get(run[0][0] - 1, "")
                pieces.append(Piece(path, run, guard))
                run = []
            if number is not None:
                run.append((number, text))
    return pieces


def name_unreachable(pieces, branches, entries):
    """Gives each piece and branch outcome that an entry names its reason."""
    for entry in entries:
        for piece in pieces:
            if entry.path == piece.path and any(
                    entry.fragment in text
                    for text in [piece.guard] + [text for _, text in piece.lines]):
                piece.reason = entry.reason
                entry.used = True
        for branch in branches:
            if entry.path == branch.path and entry.fragment in branch.text:
                branch.reason = entry.reason
                entry.used = True


# An entry whose reason starts so names branch outcomes that clang's coverage
# never records, whatever runs: a limit of the tool, not a gap of the suite.
NOT_RECORDABLE = "Not recordable:"


def recordable_branch_percent(covered_total, branches):
    """Branch coverage over the outcomes the tool can record at all."""
    covered, total = covered_total
    unrecordable = sum(1 for b in branches if b.reason.startswith(NOT_RECORDABLE))
    return percent(covered, total - unrecordable)


def report(args):
    objects = args.objects
    sources = os.path.abspath(args.sources)
    totals = {}
    files = {}
    for layer, _ in LAYERS:
        profile = os.path.join(args.profiles, f"{layer}.profdata")
        totals[layer], files[layer] = summaries(profile, objects, sources)
    lines, branches, sources_text = uncovered(
        os.path.join(args.profiles, "without_golden.profdata"), objects, sources)
    entries = read_unreachable(args.unreachable)
    pieces = pieces_of(lines, sources_text)
    name_unreachable(pieces, branches, entries)
    gaps = [piece for piece in pieces if not piece.reason]
    stale = [entry for entry in entries if not entry.used]

    out = []
    emit = out.append
    emit("# Coverage of core/")
    emit("")
    emit("Written by `scripts/coverage.sh` (clang-14 source-based coverage, "
         "`llvm-cov-14`); do not edit by hand. Each layer of the suite runs on "
         "its own; percentages are llvm-cov's, over the files under `core/` "
         "(headers included). A branch is one outcome (true or false) of a "
         "condition.")
    emit("")
    emit("`scripts/coverage.sh` builds into `build/coverage` with the test "
         "command's sanitized flags (clang-14, ASan + UBSan, -O1), instrumenting "
         "only the functions core/ defines (`-fprofile-list`), runs the "
         "layers and rewrites this page; `--no-build` reuses the build, `--no-docs` "
         "leaves this page alone. It exits 1 when an uncovered line of core/ "
         "is not named in `scripts/coverage_unreachable.txt`, when an entry "
         "there names nothing uncovered, or when branch coverage without "
         "golden is below 98%. Close a gap with a unit test, a property, a "
         "generator change or a seed; name code there only when no input can "
         "reach it, with the reason.")
    emit("")
    emit("The test command (`scripts/test.sh`) enforces the same gate on every "
         "run: its clang-14 ASan + UBSan build, compiled as this one, also carries "
         "the coverage instrumentation, runs the same layers and ends with this report's "
         "summary line; a gap fails it.")
    emit("")
    emit(f"Measured {datetime.date.today().isoformat()} at {measured_commit()}.")
    emit("")
    emit("| layer | lines | branches | regions |")
    emit("| --- | --- | --- | --- |")
    for layer, label in LAYERS:
        emit(f"| {label} | " + " | ".join(cell(totals[layer][k]) for k in KINDS) + " |")
    emit("")
    emit("A layer's totals leave out the functions defined in core/'s headers "
         "that none of its programs instantiated (llvm-cov has no record of "
         "them), so its branch and region totals can be smaller than those "
         "without golden.")
    emit("")
    emit("The ctest labels python, install and bench are not layers of this "
         "measurement: they reach the core through the Python module, an "
         "installed copy and the benchmarks, which this build does not "
         "instrument.")
    emit("")
    emit("## Per file, without golden")
    emit("")
    emit("| file | lines | branches | regions |")
    emit("| --- | --- | --- | --- |")
    for path in sorted(files["without_golden"]):
        summary = files["without_golden"][path]
        emit(f"| `{path}` | " + " | ".join(cell(summary[k]) for k in KINDS) + " |")
    emit("")
    unreachable_lines = sum(len(piece.lines) for piece in pieces if piece.reason)
    line_covered, line_count = totals["without_golden"]["lines"]
    emit("## Uncovered lines without golden")
    emit("")
    emit(f"Reachable lines covered: {line_covered} of "
         f"{line_count - unreachable_lines} "
         f"({percent(line_covered, line_count - unreachable_lines):.2f}%); "
         f"{unreachable_lines} lines are unreachable defensive code, named "
         "below. Gaps in the suite (uncovered lines not named unreachable): "
         f"{sum(len(piece.lines) for piece in gaps)}.")
    emit("")
    for title, chosen in (("Unreachable defensive code", [p for p in pieces if p.reason]),
                          ("Gaps in the suite", gaps)):
        emit(f"### {title}")
        emit("")
        if not chosen:
            emit("None.")
            emit("")
        for piece in chosen:
            first, last = piece.lines[0][0], piece.lines[-1][0]
            where = f"{piece.path}:{first}" + (f"-{last}" if last != first else "")
            emit(f"- `{where}`" + (f": {piece.reason}" if piece.reason else ""))
            emit("")
            emit("  ```cpp")
            for number, text in piece.lines:
                emit(f"  {number:4d} |{text}")
            emit("  ```")
            emit("")
    if stale:
        emit("### Entries of scripts/coverage_unreachable.txt that name no uncovered line")
        emit("")
        for entry in stale:
            emit(f"- `{entry.path}`: `{entry.fragment}`")
        emit("")
    emit("## Branch outcomes never taken without golden")
    emit("")
    emit("Counted over every instantiation of a function; `#n` numbers the "
         "conditions that llvm-cov lists at one line and column.")
    emit("")
    if not branches:
        emit("None.")
    for branch in branches:
        where = f"{branch.path}:{branch.line}:{branch.column}"
        if branch.ordinal:
            where += f" #{branch.ordinal + 1}"
        emit(f"- `{where}` never {branch.outcome}: `{branch.text.strip()}`")
        emit(f"  - {branch.reason or 'not named unreachable: a gap in the suite'}")
    emit("")
    without = totals["without_golden"]
    unrecordable = sum(1 for b in branches if b.reason.startswith(NOT_RECORDABLE))
    if unrecordable:
        emit(f"{unrecordable} of the branch outcomes above are ones clang's coverage "
             "never records (named `Not recordable`). Over the outcomes it can record, "
             "branch coverage without golden is "
             f"{recordable_branch_percent(without['branches'], branches):.2f}%; the "
             "gate (98%) applies to that figure. The line below is llvm-cov's raw count.")
        emit("")
    emit("core/ coverage without golden: " + ", ".join(
        f"{kind} {percent(*without[kind]):.2f}%" for kind in KINDS))
    page = "\n".join(out) + "\n"

    print(page, end="")
    if args.docs:
        # The MC/DC section that `scripts/coverage.sh --mcdc` wrote stays.
        kept = ""
        if os.path.exists(args.docs):
            with open(args.docs, encoding="utf-8") as docs:
                old = docs.read()
            if MCDC_MARKER in old:
                kept = "\n" + MCDC_MARKER + old.split(MCDC_MARKER, 1)[1]
        with open(args.docs, "w", encoding="utf-8") as docs:
            docs.write(page + kept)
        print(f"coverage_report: wrote {args.docs}", file=sys.stderr)

    failures = []
    if gaps:
        failures.append(f"{len(gaps)} uncovered piece(s) of code are gaps in the suite")
    if stale:
        failures.append(f"{len(stale)} entries of {args.unreachable} name no uncovered line")
    branch_percent = recordable_branch_percent(without["branches"], branches)
    if branch_percent < args.min_branches:
        failures.append(f"branch coverage without golden, over the outcomes clang records, "
                        f"{branch_percent:.2f}% < {args.min_branches}%")
    for failure in failures:
        print(f"coverage_report: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(report(parse_args()))
