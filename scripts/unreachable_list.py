"""The lists of unreachable code the coverage reports name.

scripts/coverage_unreachable.txt (lines and branch outcomes, coverage_report.py)
and scripts/mcdc_unreachable.txt (conditions, mcdc_report.py) share one form:
one entry a line, its fields split by '|', blank lines and '#' comments
skipped. A line with the wrong number of fields, or an empty one, ends the
report with the line's number and the form expected.
"""

import sys


def read_entries(path, field_count, tool, expected):
    """The entries of the list at `path`, each a list of `field_count` fields."""
    entries = []
    with open(path, encoding="utf-8") as listing:
        for number, row in enumerate(listing, 1):
            row = row.strip()
            if not row or row.startswith("#"):
                continue
            fields = [field.strip() for field in row.split("|", field_count - 1)]
            if len(fields) != field_count or not all(fields):
                sys.exit(f"{tool}: {path}:{number}: expected '{expected}'")
            entries.append(fields)
    return entries
