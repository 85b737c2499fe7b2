#!/usr/bin/python3
"""Turns merged MC/DC profiles into core/'s MC/DC report.

`scripts/coverage.sh --mcdc` builds the suite with clang-19
-fcoverage-mcdc, runs each layer with its own profile and merges them into
PROFILES/<layer>.profdata; this reads them with `llvm-cov-19 show
--show-mcdc` and prints, for the sources under --sources only, the modified
condition/decision coverage of each layer and of two sets of layers:

- without golden: unit + properties + corpus (without_golden.profdata);
- properties + corpus alone (properties_corpus.profdata): the generated
  inputs and every stored fuzz input, no hand-written unit test.

A decision is a boolean expression of two or more conditions joined by &&
and || (clang's MC/DC decisions); a condition is covered when two executed
test vectors show it independently flip the decision: both evaluated it,
with opposite values, every other condition that both evaluated has the same
value, and the decision's outcomes differ (llvm-cov's own rule). Test
vectors of one decision are pooled over every instantiation of its function
and every program. Constant-folded conditions are not counted (llvm-cov
leaves them out too).

It lists every condition not covered without golden: file:line:column, its
text, the outcomes it took and the vector that would pair with an executed
one. A condition that --unreachable names (file, a text its line contains,
and the condition's text) is printed with its reason; any other is a gap.

With --docs FILE it rewrites the MC/DC section of that page (from the line
MCDC_MARKER to the end; appended when absent).

Exit status 0: no gap and every --unreachable entry names an uncovered
condition; else 1.
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

LLVM_COV = "llvm-cov-19"
MCDC_MARKER = "<!-- mcdc: the section below is written by scripts/coverage.sh --mcdc -->"

LAYERS = [
    ("unit", "unit tests (ctest label unit, without golden_test)"),
    ("properties", "RapidCheck properties (label properties)"),
    ("corpus", "corpus replay (label corpus: fuzz_*_replay)"),
    ("golden", "golden vectors (golden_test)"),
    ("properties_corpus", "properties + corpus replay (no unit tests, no golden)"),
    ("without_golden", "all layers but golden (unit + properties + corpus)"),
]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", required=True,
                        help="directory of <layer>.profdata files")
    parser.add_argument("--sources", required=True,
                        help="source directory to report on, e.g. core")
    parser.add_argument("--unreachable", required=True,
                        help="file naming unreachable conditions: "
                             "path | text of its line | condition | reason")
    parser.add_argument("--docs", help="Markdown page whose MC/DC section to write")
    parser.add_argument("--commit", default="", help="the measured commit, for --docs")
    parser.add_argument("objects", nargs="+", help="instrumented programs")
    return parser.parse_args()


FILE_HEADER = re.compile(r"^(/\S+):$")
LINE = re.compile(r"^\s*(\d+)\|\s*([0-9.]+[kMGTPE]?|)\|(.*)$")
PREFIX = r"^[\s|]*"
DECISION = re.compile(PREFIX + r"---> MC/DC Decision Region \((\d+):(\d+)\) to \((\d+):(\d+)\)")
CONDITION = re.compile(PREFIX + r"Condition C(\d+) --> \((\d+):(\d+)\)")
VECTOR = re.compile(PREFIX + r"\d+ \{ ([TFC\-, ]+?)\s*= ([TF])\s*\}")
PAIR = re.compile(PREFIX + r"C(\d+)-Pair: (.*)$")


@dataclasses.dataclass
class Decision:
    path: str
    start: tuple  # (line, column)
    end: tuple
    conditions: list  # [(line, column)], C1 first
    vectors: set = dataclasses.field(default_factory=set)  # {(values, result)}
    folded: set = dataclasses.field(default_factory=set)  # condition indices
    covered_by_tool: set = dataclasses.field(default_factory=set)


def show(profile, objects, sources):
    args = [LLVM_COV, "show", f"-instr-profile={profile}", objects[0]]
    for obj in objects[1:]:
        args += ["-object", obj]
    args += ["-format=text", "-use-color=false", "-show-mcdc",
             "-show-line-counts", sources]
    result = subprocess.run(args, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        sys.exit(f"mcdc_report: {' '.join(args[:3])} ... failed:\n{result.stderr}")
    return result.stdout


def decisions_of(text):
    """{(path, start, end, conditions): Decision}, vectors pooled over every
    listing of the same decision (instantiations), and the source lines."""
    decisions = {}
    sources_text = {}
    path = None
    current = None
    for row in text.splitlines():
        header = FILE_HEADER.match(row)
        if header:
            path = os.path.relpath(header.group(1))
            sources_text.setdefault(path, {})
            current = None
            continue
        if path is None:
            continue
        line = LINE.match(row)
        if line:
            sources_text[path][int(line.group(1))] = line.group(3)
            current = None
            continue
        decision = DECISION.match(row)
        if decision:
            numbers = [int(g) for g in decision.groups()]
            current = Decision(path, tuple(numbers[:2]), tuple(numbers[2:]), [])
            continue
        if current is None:
            continue
        condition = CONDITION.match(row)
        if condition:
            current.conditions.append((int(condition.group(2)), int(condition.group(3))))
            continue
        vector = VECTOR.match(row)
        if vector:
            key = (current.path, current.start, current.end, tuple(current.conditions))
            current = decisions.setdefault(key, dataclasses.replace(current, vectors=set(),
                                                                    folded=set(),
                                                                    covered_by_tool=set()))
            values = tuple(v.strip() for v in vector.group(1).split(","))
            for index, value in enumerate(values):
                if value == "C":
                    current.folded.add(index)
            current.vectors.add((values, vector.group(2)))
            continue
        pair = PAIR.match(row)
        if pair:
            key = (current.path, current.start, current.end, tuple(current.conditions))
            current = decisions.setdefault(key, current)
            index = int(pair.group(1)) - 1
            if pair.group(2).startswith("covered"):
                current.covered_by_tool.add(index)
            elif pair.group(2).startswith("constant folded"):
                current.folded.add(index)
    return decisions, sources_text


def independence_pair(decision, index):
    """Two executed vectors that show condition `index` flip the decision."""
    vectors = sorted(decision.vectors)
    for a, (values_a, result_a) in enumerate(vectors):
        for values_b, result_b in vectors[a + 1:]:
            if result_a == result_b:
                continue
            differ = [i for i, (x, y) in enumerate(zip(values_a, values_b))
                      if x in "TF" and y in "TF" and x != y]
            if differ == [index]:
                return values_a, values_b
    return None


@dataclasses.dataclass
class Condition:
    path: str
    line: int
    column: int
    index: int  # C<index + 1> of its decision
    decision: Decision
    text: str
    line_text: str
    reason: str = ""


@dataclasses.dataclass
class Unreachable:
    path: str
    fragment: str
    condition: str
    reason: str
    used: bool = False


def condition_text(decision, index, sources_text):
    """The condition's source text: from its start to the next condition's
    start (or the decision's end), trimmed of && / || and parentheses."""
    lines = sources_text.get(decision.path, {})
    start = decision.conditions[index]
    if index + 1 < len(decision.conditions):
        stop = decision.conditions[index + 1]
        inclusive = False
    else:
        stop = decision.end
        inclusive = True
    pieces = []
    for number in range(start[0], stop[0] + 1):
        text = lines.get(number, "")
        begin = start[1] - 1 if number == start[0] else 0
        end = (stop[1] if inclusive else stop[1] - 1) if number == stop[0] else len(text)
        pieces.append(text[begin:end])
    text = " ".join(piece.strip() for piece in pieces)
    previous = None
    while previous != text:
        previous = text
        text = re.sub(r"(&&|\|\||[(!;{])$", "", text.strip()).strip()
        if text.endswith(")") and text.count(")") > text.count("("):
            text = text[:-1]
        if text.startswith("(") and text.count("(") > text.count(")"):
            text = text[1:]
    return text


def measure(profile, objects, sources):
    decisions, sources_text = decisions_of(show(profile, objects, sources))
    total = covered = 0
    missing = []
    for key in sorted(decisions):
        decision = decisions[key]
        for index in range(len(decision.conditions)):
            if index in decision.folded:
                continue
            total += 1
            pair = independence_pair(decision, index)
            if index in decision.covered_by_tool and pair is None:
                sys.exit(f"mcdc_report: {decision.path}:{decision.start[0]}: llvm-cov "
                         f"pairs C{index + 1} but no pooled vectors do")
            if pair is not None:
                covered += 1
                continue
            line, column = decision.conditions[index]
            missing.append(Condition(
                decision.path, line, column, index, decision,
                condition_text(decision, index, sources_text),
                sources_text.get(decision.path, {}).get(line, "")))
    return total, covered, missing, sources_text


def condition_ranges(profile, objects, sources):
    """{(path, line, column): (end line, end column)} of every branch region
    (each condition of a decision is one), from `llvm-cov export`."""
    args = [LLVM_COV, "export", f"-instr-profile={profile}", objects[0]]
    for obj in objects[1:]:
        args += ["-object", obj]
    args += ["-format=text", "-skip-expansions", sources]
    result = subprocess.run(args, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        sys.exit(f"mcdc_report: {' '.join(args[:3])} ... failed:\n{result.stderr}")
    ranges = {}
    for data in json.loads(result.stdout)["data"]:
        for source in data["files"]:
            path = os.path.relpath(source["filename"])
            for branch in source["branches"]:
                ranges[(path, branch[0], branch[1])] = (branch[2], branch[3])
    return ranges


def span_text(lines, start, stop):
    """Source text from start to stop (both (line, column), stop exclusive)."""
    pieces = []
    for number in range(start[0], stop[0] + 1):
        text = lines.get(number, "")
        begin = start[1] - 1 if number == start[0] else 0
        end = stop[1] - 1 if number == stop[0] else len(text)
        pieces.append(text[begin:end].strip())
    return " ".join(piece for piece in pieces if piece)


def structure(decision, sources_text, ranges):
    """The decision as a tree over its conditions: ("c", index), ("not", t),
    ("and", a, b), ("or", a, b); None when its text is not only conditions,
    &&, ||, ! and parentheses."""
    lines = sources_text.get(decision.path, {})
    marks = {}
    for index, (line, column) in enumerate(decision.conditions):
        stop = ranges.get((decision.path, line, column))
        if stop is None:
            return None
        marks[(line, column)] = (index, stop)
    tokens = []
    line, column = decision.start
    skip_to = None
    while (line, column) < decision.end:
        text = lines.get(line, "")
        if column > len(text):
            line, column = line + 1, 1
            continue
        if skip_to is not None and (line, column) < skip_to:
            column += 1
            continue
        skip_to = None
        if (line, column) in marks:
            index, stop = marks[(line, column)]
            tokens.append(index)
            skip_to = stop
            continue
        char = text[column - 1]
        pair = text[column - 1:column + 1]
        if pair in ("&&", "||"):
            tokens.append(pair)
            column += 2
            continue
        if char in "!()":
            tokens.append(char)
        elif not char.isspace():
            return None
        column += 1
    position = 0

    def peek():
        return tokens[position] if position < len(tokens) else None

    def take():
        nonlocal position
        position += 1
        return tokens[position - 1]

    def parse(operators=("||", "&&")):
        if not operators:
            token = take()
            if token == "!":
                return ("not", parse(()))
            if token == "(":
                tree = parse()
                if take() != ")":
                    raise ValueError
                return tree
            if isinstance(token, int):
                return ("c", token)
            raise ValueError
        tree = parse(operators[1:])
        while peek() == operators[0]:
            take()
            tree = ("or" if operators[0] == "||" else "and", tree, parse(operators[1:]))
        return tree

    try:
        tree = parse()
    except (ValueError, IndexError):
        return None
    return tree if position == len(tokens) else None


def evaluate(tree, assignment, visited):
    """Short-circuit evaluation; records the conditions it evaluates."""
    kind = tree[0]
    if kind == "c":
        visited.append(tree[1])
        return assignment[tree[1]]
    if kind == "not":
        return not evaluate(tree[1], assignment, visited)
    left = evaluate(tree[1], assignment, visited)
    if (kind == "and" and not left) or (kind == "or" and left):
        return left
    return evaluate(tree[2], assignment, visited)


def partners(condition, tree):
    """The vectors (as llvm-cov prints them) that would pair with an executed
    one to show the condition flips the decision, each with that executed one."""
    index = condition.index
    count = len(condition.decision.conditions)
    found = set()
    for bits in range(1 << count):
        assignment = [bool(bits >> i & 1) for i in range(count)]
        visited = []
        result = "T" if evaluate(tree, assignment, visited) else "F"
        values = tuple(("T" if assignment[i] else "F") if i in visited else "-"
                       for i in range(count))
        if values[index] == "-":
            continue
        for executed, executed_result in condition.decision.vectors:
            if executed_result == result:
                continue
            differ = [i for i, (x, y) in enumerate(zip(values, executed))
                      if x in "TF" and y in "TF" and x != y]
            if differ == [index]:
                found.add((show_vector(values, result),
                           show_vector(executed, executed_result)))
    return sorted(found)


def show_vector(values, result):
    return "{" + ", ".join(values) + f" = {result}" + "}"


def describe(condition, tree):
    index = condition.index
    name = f"C{index + 1}"
    seen = sorted({values[index] for values, _ in condition.decision.vectors
                   if values[index] in "TF"})
    if not seen:
        head = f"{name} never evaluated"
    elif len(seen) == 1:
        head = f"{name} only ever {seen[0]}, never {'F' if seen[0] == 'T' else 'T'}"
    else:
        head = f"{name} took T and F, but in no two vectors that differ in it alone"
    if tree is None:
        return head + " (the decision's shape is not recognised: no partner computed)"
    wanted = partners(condition, tree)
    if not wanted:
        return head + ("; no vector could pair with an executed one: it needs two "
                       "new vectors")
    grouped = {}
    for partner, executed in wanted:
        grouped.setdefault(partner, []).append(executed)
    return head + "; missing " + " or ".join(
        f"{partner} (pairs with executed {' or '.join(executed)})"
        for partner, executed in grouped.items())


def read_unreachable(path):
    return [Unreachable(*fields)
            for fields in unreachable_list.read_entries(path, 4, "mcdc_report",
                                                        "file | text of the line | condition | reason")]


def name_unreachable(missing, entries):
    for entry in entries:
        for condition in missing:
            if (entry.path == condition.path and entry.fragment in condition.line_text
                    and entry.condition == condition.text):
                condition.reason = entry.reason
                entry.used = True


def percent(covered, total):
    return 100.0 * covered / total if total else 100.0


def report(args):
    sources = os.path.abspath(args.sources)
    results = {}
    for layer, _ in LAYERS:
        results[layer] = measure(os.path.join(args.profiles, f"{layer}.profdata"),
                                 args.objects, sources)
    total, covered, missing, sources_text = results["without_golden"]
    ranges = condition_ranges(os.path.join(args.profiles, "without_golden.profdata"),
                              args.objects, sources)
    trees = {}

    def tree_of(condition):
        key = id(condition.decision)
        if key not in trees:
            trees[key] = structure(condition.decision, sources_text, ranges)
        return trees[key]

    for condition in missing + results["properties_corpus"][2]:
        stop = ranges.get((condition.path, condition.line, condition.column))
        if stop is not None:
            condition.text = span_text(sources_text.get(condition.path, {}),
                                       (condition.line, condition.column), stop)
    entries = read_unreachable(args.unreachable)
    name_unreachable(missing, entries)
    gaps = [c for c in missing if not c.reason]
    named = [c for c in missing if c.reason]
    stale = [e for e in entries if not e.used]
    source_dir = os.path.relpath(sources)

    out = []
    emit = out.append
    emit(MCDC_MARKER)
    emit("")
    emit("## MC/DC")
    emit("")
    emit("Written by `scripts/coverage.sh --mcdc` (clang-19 `-fcoverage-mcdc`, "
         "`llvm-cov-19 show --show-mcdc`, `scripts/mcdc_report.py`); do not edit "
         "by hand. Modified condition/decision coverage: a decision is a boolean "
         "expression of two or more conditions joined by `&&` and `||`; a "
         "condition is covered when two executed test vectors differ in it alone "
         "(among the conditions both evaluated) and the decision's outcome "
         "differs. Vectors are pooled over every program and every instantiation "
         "of a function; constant-folded conditions are not counted.")
    emit("")
    emit("<!-- docs-test: skip: builds the suite with clang-19 MC/DC instrumentation "
         "and runs every layer, minutes (a nightly job) -->")
    emit("```sh")
    emit("scripts/coverage.sh --mcdc             # build into build/coverage-mcdc, run, report, write this section")
    emit("scripts/coverage.sh --mcdc --no-build  # reuse that build")
    emit("```")
    emit("")
    emit("It exits 1 when a condition of core/ is not covered without golden and "
         "not named in `scripts/mcdc_unreachable.txt`, or when an entry there "
         "names no uncovered condition; 2 when a tool is missing "
         "(`scripts/install_deps.sh` installs clang-19, libclang-rt-19-dev and "
         "llvm-19). A condition that no input can make flip its decision is named "
         "there with the reason; any other is closed with a test (a unit test, a "
         "property or a corpus seed).")
    emit("")
    emit("clang-19 (19.1.7) records the false outcomes of a defaulted comparison "
         "no better than clang-14: in this build, too, every member comparison of "
         "`core/types.h` and `core/compact_schedule.h`'s `= default` operators "
         "shows `False: 0` although the unit tests compare values that differ in "
         "each member (llvm/llvm-project#75924), and clang-19 makes no MC/DC "
         "decision of them. So the `Not recordable` entries of "
         "`scripts/coverage_unreachable.txt` stay, and none of those comparisons "
         "counts among the conditions below.")
    emit("")
    measured = f"Measured {datetime.date.today().isoformat()}"
    if args.commit:
        measured += f" on commit {args.commit}"
    emit(measured + ".")
    emit("")
    emit("| layer | MC/DC conditions covered |")
    emit("| --- | --- |")
    for layer, label in LAYERS:
        t, c, _, _ = results[layer]
        emit(f"| {label} | {percent(c, t):.2f}% ({c}/{t}) |")
    emit("")
    emit("A layer's count leaves out the decisions of header functions that none "
         "of its programs instantiated, as in the table above. RapidCheck draws "
         "new cases on every run, so the properties layer's figure can change "
         "from one run to the next.")
    emit("")
    emit("### Conditions not covered without golden")
    emit("")
    emit(f"{len(named)} named unreachable in `scripts/mcdc_unreachable.txt`, "
         f"{len(gaps)} gaps in the suite.")
    emit("")
    if not missing:
        emit("None.")
        emit("")
    for condition in missing:
        where = f"{condition.path}:{condition.line}:{condition.column}"
        emit(f"- `{where}` `{condition.text}`: {describe(condition, tree_of(condition))}")
        emit(f"  - {condition.reason or 'not named unreachable: a gap in the suite'}")
    if missing:
        emit("")
    emit("### Conditions that properties + corpus alone do not cover")
    emit("")
    emit("Not a gate (the unit tests cover the reachable ones): where the "
         "generated inputs and the stored fuzz inputs fall short of MC/DC.")
    emit("")
    for condition in results["properties_corpus"][2]:
        where = f"{condition.path}:{condition.line}:{condition.column}"
        emit(f"- `{where}` `{condition.text}`: {describe(condition, tree_of(condition))}")
    if not results["properties_corpus"][2]:
        emit("None.")
    emit("")
    if stale:
        emit("### Entries of scripts/mcdc_unreachable.txt that name no uncovered condition")
        emit("")
        for entry in stale:
            emit(f"- `{entry.path}`: `{entry.fragment}` | `{entry.condition}`")
        emit("")
    pc_total, pc_covered, pc_missing, _ = results["properties_corpus"]
    emit(f"{source_dir}/ MC/DC properties + corpus alone: "
         f"{percent(pc_covered, pc_total):.2f}% of {pc_total} conditions")
    emit("")
    emit(f"{source_dir}/ MC/DC without golden: {percent(covered, total):.2f}% "
         f"of {total} conditions")
    section = "\n".join(out) + "\n"

    print(section, end="")
    if args.docs:
        with open(args.docs, encoding="utf-8") as page:
            text = page.read()
        head = text.split(MCDC_MARKER)[0].rstrip("\n")
        with open(args.docs, "w", encoding="utf-8") as page:
            page.write(head + "\n\n" + section)
        print(f"mcdc_report: wrote the MC/DC section of {args.docs}", file=sys.stderr)

    failures = []
    if gaps:
        failures.append(f"{len(gaps)} condition(s) not covered without golden are gaps in the suite")
    if stale:
        failures.append(f"{len(stale)} entries of {args.unreachable} name no uncovered condition")
    for failure in failures:
        print(f"mcdc_report: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(report(parse_args()))
