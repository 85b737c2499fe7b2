#!/usr/bin/python3
"""Writes every whole C++ program of the docs into a directory, one file each.

    scripts/doc_examples.py OUT_DIR FILE.md...

A whole program is a ```cpp block that defines `int main(`; it becomes
OUT_DIR/<file stem>_<n>.cc (n counts the file's whole programs from 1), so
the build can compile and run each as ctest doc_example_<stem>_<n>: a
README example that stops compiling or running fails the test command.
Blocks without main are fragments and are left out. Prints the names
written, one a line; files no longer produced are removed.
"""

import pathlib
import re
import sys

BLOCK = re.compile(r"^```cpp\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def programs(markdown: str):
    return [block for block in BLOCK.findall(markdown) if "int main(" in block]


def main(argv):
    out = pathlib.Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    written = set()
    for path in map(pathlib.Path, argv[2:]):
        for number, program in enumerate(programs(path.read_text()), start=1):
            name = f"{path.stem}_{number}"
            target = out / f"{name}.cc"
            if not target.exists() or target.read_text() != program:
                target.write_text(program)
            written.add(target.name)
            print(name)
    for stale in out.glob("*.cc"):
        if stale.name not in written:
            stale.unlink()


if __name__ == "__main__":
    main(sys.argv)
