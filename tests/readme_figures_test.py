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
     r"\| golden vectors \| all (\d+) upstream cases"),
    ("generated mutants in mutation/results.md", generated_mutants, "docs/mutation.md",
     r"\(\d+ equivalent, (\d+)\s+generated\)"),
    ("score of mutation/results.md", score_line("results.md"), "docs/mutation.md",
     r"printed \*\*(\d+ of \d+)\s+non-equivalent mutants killed"),
    ("score of mutation/results-max-num-seqs.md", score_line("results-max-num-seqs.md"),
     "docs/mutation.md", r"Every layer but fuzz: \*\*(\d+ of \d+) non-equivalent"),
    ("score of mutation/results-max-num-seqs-no-unit.md",
     score_line("results-max-num-seqs-no-unit.md"), "docs/mutation.md",
     r"no golden vector \(`--layers properties,corpus`\): \*\*(\d+ of \d+) killed"),
    ("properties alone in mutation/results-night-1of3.md",
     end_line("results-night-1of3.md", "properties alone"), "docs/mutation.md",
     r"(?m)^properties alone: (\d+ of \d+) non-equivalent mutants killed\nfuzzers alone"),
    ("fuzzers alone, empty corpus, in mutation/results-night-1of3.md",
     end_line("results-night-1of3.md", "fuzzers alone, empty corpus, 60 s per target"),
     "docs/mutation.md", r"(?m)^fuzzers alone, empty corpus, 60 s per target: (\d+ of \d+)"),
    ("properties + corpus + fuzz in mutation/results-night-1of3.md",
     end_line("results-night-1of3.md",
              "properties + corpus + fuzz (no hand-computed expectations)"),
     "docs/mutation.md",
     r"(?m)^properties \+ corpus \+ fuzz \(no hand-computed expectations\): (\d+ of \d+)"),
    ("properties alone in mutation/results-slice-1of3-properties.md",
     end_line("results-slice-1of3-properties.md", "properties alone"), "docs/mutation.md",
     r"they give `properties alone: (\d+ of \d+) non-equivalent"),
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
