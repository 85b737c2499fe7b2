"""python3 -m dcpsched.conformance: see dcpsched/conformance/__init__.py."""

import sys

from dcpsched.conformance.cli import run

if __name__ == "__main__":
    sys.exit(run())
