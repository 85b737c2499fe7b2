#!/usr/bin/python3
"""The figures the README quotes from committed files match those files.

    tests/readme_figures_test.py SOURCE_DIR

Each check reads one figure where it is made (the digest's total line, the
golden files, the mutation report's score line) and the place in README.md
that quotes it; a stale quote fails. Closes with "N passed, M failed".
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


# (what, the figure from its source, the README pattern whose group 1 quotes it)
CHECKS = [
    ("schedule digest problems", digest_problems, r"corpora decode to \((\d+) problems"),
    ("golden cases", golden_cases, r"\| golden vectors \|[^|]*\| all (\d+) upstream cases"),
    ("generated mutants in mutation/results.md", generated_mutants,
     r"every operator mutant of `core/` \((\d+) on the compact core"),
]


def main(argv):
    root = pathlib.Path(argv[1])
    readme = (root / "README.md").read_text()
    passed = failed = 0
    for what, source, pattern in CHECKS:
        actual = source(root)
        quoted = re.search(pattern, readme)
        if quoted is None:
            print(f"FAIL {what}: README.md no longer quotes it (pattern {pattern!r})")
            failed += 1
        elif int(quoted.group(1)) != actual:
            print(f"FAIL {what}: README.md says {quoted.group(1)}, the source says {actual}")
            failed += 1
        else:
            print(f"ok   {what}: {actual}")
            passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
