#!/usr/bin/python3
"""The figures the README and docs/ quote from committed files match them.

    tests/readme_figures_test.py SOURCE_DIR

Each check reads one figure where it is made (the digest's total line, the
golden files, a mutation report's score line) and the place in README.md or
docs/ that quotes it; a stale quote fails. Closes with "N passed, M failed".
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


def generated_mutants(root):
    text = (root / "mutation" / "results.md").read_text()
    return int(re.search(r"^mutation score: .*?, (\d+) generated\)$", text, re.M).group(1))


def score_line(report):
    """The score of a mutation report: 'K of N non-equivalent mutants killed'."""
    def read(root):
        text = (root / "mutation" / report).read_text()
        match = re.search(r"^mutation score: (\d+ of \d+) non-equivalent", text, re.M)
        return match.group(1)
    return read


def end_line(report, prefix):
    """A closing line of a mutation report, e.g. 'properties alone: K of N'."""
    def read(root):
        text = (root / "mutation" / report).read_text()
        match = re.search("^" + re.escape(prefix) + r": (\d+ of \d+)", text, re.M)
        return match.group(1)
    return read


# (what, the figure from its source, the page, the pattern whose group 1
# quotes it there)
CHECKS = [
    ("schedule digest problems", digest_problems, "README.md",
     r"corpora decode to \((\d+) problems"),
    ("golden cases", golden_cases, "README.md",
     r"\| golden vectors \|[^|]*\| all (\d+) upstream cases"),
    ("generated mutants in mutation/results.md", generated_mutants, "README.md",
     r"every operator mutant of `core/` \((\d+) on the compact core"),
    ("score of mutation/results.md", score_line("results.md"), "docs/mutation.md",
     r"printed \*\*(\d+ of \d+) non-equivalent mutants killed"),
    ("score of mutation/results-max-num-seqs.md", score_line("results-max-num-seqs.md"),
     "docs/mutation.md", r"every layer but fuzz: \*\*(\d+ of \d+) non-equivalent"),
    ("score of mutation/results-max-num-seqs-no-unit.md",
     score_line("results-max-num-seqs-no-unit.md"), "docs/mutation.md",
     r"no golden vector:\s+\*\*(\d+ of \d+) killed"),
    ("score of mutation/results-sample.md", score_line("results-sample.md"),
     "docs/mutation.md", r"`mutation score: (\d+ of \d+) non-equivalent mutants killed without golden"),
    ("properties alone in mutation/results-checker-properties.md",
     end_line("results-checker-properties.md", "properties alone"), "docs/mutation.md",
     r"\(\.\./mutation/results-checker-properties\.md\),\s+`--layers properties`\) gave `properties alone: (\d+ of \d+) non-equivalent"),
    ("properties alone in mutation/results-properties-sample.md",
     end_line("results-properties-sample.md", "properties alone"), "docs/mutation.md",
     r"says `properties alone: (\d+ of \d+)\s+non-equivalent"),
    ("properties alone in mutation/results-slice-1of3-properties.md",
     end_line("results-slice-1of3-properties.md", "properties alone"), "docs/mutation.md",
     r"--layers properties`, 1000 cases per\s+property, [^)]*\), they give\s+`properties alone: (\d+ of \d+) non-equivalent"),
    ("properties alone in mutation/results-properties-survivors.md",
     end_line("results-properties-survivors.md", "properties alone"), "docs/mutation.md",
     r"results-properties-survivors\.md\):\s+`properties alone: (\d+ of \d+) non-equivalent"),
]


def main(argv):
    root = pathlib.Path(argv[1])
    passed = failed = 0
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
