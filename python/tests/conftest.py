"""Shared helpers of the dcpsched Python tests.

ctest runs these tests with the built module's directory on PYTHONPATH
(python/CMakeLists.txt); to run them by hand:

    PYTHONPATH=build/python /usr/bin/python3 -m pytest -q python/tests
"""

import json
import pathlib
import struct

REPO = pathlib.Path(__file__).resolve().parents[2]
GOLDEN_DIR = REPO / "tests" / "golden"
EXAMPLES_DIR = REPO / "python" / "examples"


def golden_cases():
    """Every golden case of tests/golden/*.jsonl, as (file:line name, case)."""
    cases = []
    for path in sorted(GOLDEN_DIR.glob("*.jsonl")):
        with path.open() as lines:
            for number, line in enumerate(lines, start=1):
                if line.strip():
                    cases.append((f"{path.name}:{number}", json.loads(line)))
    return cases


def same_bits(a, b):
    """True if the floats a and b are the same IEEE double, bit for bit."""
    return struct.pack("<d", a) == struct.pack("<d", b)


class SyntheticTimer:
    """A timer for calibrate and replay (dcpsched.timing's interface) that
    runs each work once, so the torch code is exercised, and returns a time
    from a formula of what was run instead of a clock's: `formula(what)`,
    `what` being the dcpsched.timing.Measurement. `calls` records every
    Measurement timed, in order."""

    def __init__(self, formula):
        self.formula = formula
        self.calls = []

    def time(self, work, what):
        work()
        self.calls.append(what)
        return self.formula(what)
