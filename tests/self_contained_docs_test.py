#!/usr/bin/python3
"""Nothing the project ships points outside the repository.

    tests/self_contained_docs_test.py SOURCE_DIR

The project's specification is docs/specification.md. A message, help text,
comment or doc that cites a "SPEC" or a "shared/" folder sends a user to a
file they do not have. Every file git tracks is read (binary files and the
corpora's fuzz inputs are skipped); each line that does so is printed, and
the test fails. Closes with "N passed, M failed" (files).
"""

import pathlib
import re
import subprocess
import sys

OUTSIDE = re.compile(r"\bSPEC\b|SPEC\.md|\.\./shared|\bshared/golden|\bshared/seed")
# Fuzz inputs are bytes, not text, and this file names the patterns.
SKIPPED = (re.compile(r"^corpus/"), re.compile(r"^tests/self_contained_docs_test\.py$"))


def tracked_files(root: pathlib.Path):
    listing = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], check=True,
                             capture_output=True).stdout.decode()
    return [name for name in listing.split("\0")
            if name and not any(pattern.search(name) for pattern in SKIPPED)]


def main(argv) -> int:
    root = pathlib.Path(argv[1])
    passed = failed = 0
    for name in tracked_files(root):
        try:
            text = (root / name).read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
        hits = [(number, line) for number, line in enumerate(text.splitlines(), start=1)
                if OUTSIDE.search(line)]
        for number, line in hits:
            print(f"{name}:{number}: points outside the repository "
                  f"(use docs/specification.md): {line.strip()}")
        if hits:
            failed += 1
        else:
            passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
