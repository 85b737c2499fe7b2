#!/usr/bin/python3
"""The figures the README and docs/ quote from committed files match them.

    tests/readme_figures_test.py SOURCE_DIR

Each check reads one figure where it is made (the digest's total line, the
golden files, the score lines of a short mutation report in
mutation/reports/, the size of a committed mutation sample in
mutation/samples/) and the place in README.md, docs/ or a report that quotes
it; a stale quote fails. Every short mutation report also has a run date and
a command, and docs/mutation.md's "Current figures" links it in a row that
gives the same date. Closes with "N passed, M failed".
"""

import pathlib
import re
import sys


def digest_problems(root):
    text = (root / "tests" / "schedule_digest.txt").read_text()
    return int(re.search(r"^total \S+ problems (\d+)$", text, re.M).group(1))


def golden_cases(root):
    return sum(1 for path in (root / "tests" / "golden").glob("*.jsonl")
               for line in path.read_text().splitlines() if line.strip())


REPORTS = ("mutation", "reports")


def report_text(root, report):
    return (root.joinpath(*REPORTS) / report).read_text()


def generated_mutants(root):
    text = report_text(root, "every-mutant.md")
    return int(re.search(r"^mutation score: .*?, (\d+) generated\)$", text, re.M).group(1))


def score_line(report, nth=0):
    """The score of a short mutation report (mutation/reports/): 'K of N' of
    its nth line 'mutation score: K of N non-equivalent ...'."""
    def read(root):
        scores = re.findall(r"^mutation score: (\d+ of \d+) non-equivalent",
                            report_text(root, report), re.M)
        return scores[nth]
    return read


def end_line(report, prefix):
    """A closing line of a short mutation report, e.g. 'properties alone: K of N'."""
    def read(root):
        match = re.search("^" + re.escape(prefix) + r": (\d+ of \d+)",
                          report_text(root, report), re.M)
        return match.group(1)
    return read


def reworded(source, old, new):
    """A figure as a page words it: 'K of N' quoted as 'K of the other N'."""
    return lambda root: source(root).replace(old, new)


def sample_size(sample):
    """How many mutant ids a committed sample file (mutation/samples/) lists."""
    def read(root):
        return sum(1 for line in (root / "mutation" / "samples" / sample).read_text().splitlines()
                   if line.split() and not line.startswith("#"))
    return read


# (what, the figure from its source, the page, the pattern whose group 1
# quotes it there)
CHECKS = [
    ("schedule digest problems", digest_problems, "README.md",
     r"corpora decode to \((\d+) problems"),
    ("golden cases", golden_cases, "README.md",
     r"\| golden vectors \| all (\d+) upstream cases"),
    ("generated mutants in mutation/reports/every-mutant.md", generated_mutants,
     "docs/mutation.md", r"\(\d+ equivalent, (\d+)\s+generated\)"),
    ("score of mutation/reports/every-mutant.md", score_line("every-mutant.md"),
     "docs/mutation.md", r"printed \*\*(\d+ of \d+)\s+non-equivalent mutants killed"),
    ("score of mutation/reports/max-num-seqs.md, every layer but fuzz",
     score_line("max-num-seqs.md", 0),
     "docs/mutation.md", r"Every layer but fuzz: \*\*(\d+ of \d+) non-equivalent"),
    ("score of mutation/reports/max-num-seqs.md, no unit test",
     score_line("max-num-seqs.md", 1), "docs/mutation.md",
     r"no golden vector \(`--layers properties,corpus`\): \*\*(\d+ of \d+) killed"),
    ("properties alone in mutation/reports/nightly-matrix.md",
     end_line("nightly-matrix.md", "properties alone"), "docs/mutation.md",
     r"(?m)^properties alone: (\d+ of \d+) non-equivalent mutants killed\nfuzzers alone"),
    ("fuzzers alone, seed corpora, in mutation/reports/nightly-matrix.md",
     end_line("nightly-matrix.md", "fuzzers alone, seed corpora, 10 s per target"),
     "docs/mutation.md", r"(?m)^fuzzers alone, seed corpora, 10 s per target: (\d+ of \d+)"),
    ("fuzzers alone, empty corpus, in mutation/reports/nightly-matrix.md",
     end_line("nightly-matrix.md", "fuzzers alone, empty corpus, 60 s per target"),
     "docs/mutation.md", r"(?m)^fuzzers alone, empty corpus, 60 s per target: (\d+ of \d+)"),
    ("properties + corpus + fuzz in mutation/reports/nightly-matrix.md",
     end_line("nightly-matrix.md",
              "properties + corpus + fuzz (no hand-computed expectations)"),
     "docs/mutation.md",
     r"(?m)^properties \+ corpus \+ fuzz \(no hand-computed expectations\): (\d+ of \d+)"),
    ("properties alone in mutation/reports/properties-slice.md",
     end_line("properties-slice.md", "properties alone"), "docs/mutation.md",
     r"they give `properties alone: (\d+ of \d+) non-equivalent"),
    ("properties alone in mutation/reports/cost-aware-properties.md (docs/mutation.md)",
     end_line("cost-aware-properties.md", "properties alone"), "docs/mutation.md",
     r"`cost_aware_plan.cc`\): (\d+ of \d+) non-equivalent killed"),
    ("properties alone in mutation/reports/cost-aware-properties.md (docs/cost_aware.md)",
     reworded(end_line("cost-aware-properties.md", "properties alone"), " of ", " of the other "),
     "docs/cost_aware.md", r"\*\*(\d+ of the other \d+) are killed"),
    ("size of the committed cost-aware sample", sample_size("cost_aware.txt"),
     "mutation/reports/cost-aware-properties.md",
     r"non-equivalent mutants killed without golden vectors \(\d+ equivalent, (\d+) generated\)"),
    ("size of the committed sequence-cap sample", sample_size("max_num_seqs.txt"),
     "mutation/reports/max-num-seqs.md",
     r"non-equivalent mutants killed without golden vectors \(\d+ equivalent, (\d+) generated\)"),
    ("score of mutation/reports/exhaustive-layer.md", score_line("exhaustive-layer.md"),
     "docs/exhaustive.md", r"`mutation score: (\d+ of \d+) non-equivalent"),
]


def report_checks(root):
    """Every short report in mutation/reports/ has a run date and a command,
    and the row of docs/mutation.md's "Current figures" that links it gives
    the same date: (what, the report's date, the row text, the date pattern)."""
    page = (root / "docs" / "mutation.md").read_text()
    rows = [line for line in page.splitlines() if line.startswith("| ")]
    checks = []
    for path in sorted(root.joinpath(*REPORTS).glob("*.md")):
        text = path.read_text()
        dates = re.findall(r"^\*\*Run:\*\* (\d{4}-\d\d-\d\d)", text, re.M)
        has_command = re.search(r"^\*\*Command\*\*.*?\n```sh\n\S", text, re.M | re.S)
        row = next((r for r in rows if f"(../mutation/reports/{path.name})" in r), "")
        checks.append((f"run date of mutation/reports/{path.name} in docs/mutation.md",
                       (dates[0] if dates and has_command else "no run date or command"),
                       row, r"\| (\d{4}-\d\d-\d\d)\b"))
    return checks


def main(argv):
    root = pathlib.Path(argv[1])
    passed = failed = 0
    for what, actual, row, pattern in report_checks(root):
        quoted = re.search(pattern, row)
        if quoted is None or quoted.group(1) != actual:
            print(f"FAIL {what}: the report says {actual}, docs/mutation.md's row "
                  f"{'says ' + quoted.group(1) if quoted else 'is missing or has no date'}")
            failed += 1
        else:
            print(f"ok   {what}: {actual}")
            passed += 1
    for what, source, page, pattern in CHECKS:
        actual = str(source(root))
        quoted = re.search(pattern, (root / page).read_text())
        if quoted is None:
            print(f"FAIL {what}: {page} no longer quotes it (pattern {pattern!r})")
            failed += 1
        elif quoted.group(1) != actual:
            print(f"FAIL {what}: {page} says {quoted.group(1)}, the source says {actual}")
            failed += 1
        else:
            print(f"ok   {what}: {actual}")
            passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
