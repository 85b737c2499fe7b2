"""The classes a conformance run reports its findings in, each once.

A run on thousands of problems can find the same difference hundreds of
times; printed one by one, the report is too long to act on. So every
outcome that is not plain agreement falls into a class, and the report
prints each class once: its count, its smallest problem (fewest samples,
then fewest ranks) shrunk to a smaller one of the same class (shrink.py),
what the two sides did there, and the command that runs it in dcpsched
(reproduce.py). --all-differences lists every problem of every class as
well.

A class is (outcome kind, check, label):

  differ (checks.DIFFER), by what differs: "both return; they differ at
      answer[*][*] (values)" (the path with its indices as [*], but the
      first one of a step's 4-tuple, which names its part), "upstream
      raises TypeError, dcpsched returns", "upstream hangs, dcpsched
      returns", "upstream returns, dcpsched raises UnschedulableError", ...
  upstream fails where dcpsched schedules (checks.UPSTREAM_FAILS), by
      upstream's error ("AssertionError: Not enough samples to move")
  upstream returns a schedule its runtime cannot run
      (checks.RUNTIME_CANNOT_RUN), by check alone.
"""

import dataclasses
import re
from typing import Callable, Dict, List, Optional, Tuple

from dcpsched.conformance import checks, runtime_groups, shrink

# The kinds of outcome reported by class.
REPORTED = (checks.DIFFER, checks.UPSTREAM_FAILS, checks.RUNTIME_CANNOT_RUN)
# The longest upstream error kept in a class label, in characters.
LABEL_ERROR = 200
# The check whose answer is a tuple of parts (micro_batches, leftovers,
# exec_times, sample_ids): its first index names the part.
_TUPLE_ANSWERS = ("next_hdp_group_packing_aware",)


def _error_type(error: str) -> str:
    return error.split(":", 1)[0]


def label(outcome) -> str:
    """What kind of finding `outcome` is, within its kind and check."""
    u, d = outcome.upstream, outcome.dcpsched
    if outcome.kind == checks.UPSTREAM_FAILS:
        return u.error if len(u.error) <= LABEL_ERROR else u.error[:LABEL_ERROR] + " ..."
    if outcome.kind == checks.RUNTIME_CANNOT_RUN:
        return ""
    if u.ok and d.ok:
        path, what, _ = checks.locate_difference(u.value, d.value)
        keep = 1 if outcome.check in _TUPLE_ANSWERS else 0
        indices = re.findall(r"\[\d+\]", path)
        shown = "answer" + "".join(indices[:keep]) + "[*]" * len(indices[keep:])
        return f"both return; they differ at {shown} ({what})"
    if d.ok:
        upstream = "hangs" if u.hung else f"raises {_error_type(u.error)}"
        return f"upstream {upstream}, dcpsched returns"
    refusal = _error_type(d.error)
    if runtime_groups.names_runtime_groups(d.error):
        refusal += " naming invariant 11, which the runtime rule does not confirm"
    return f"upstream returns, dcpsched raises {refusal}"


def size(problem) -> Tuple[int, int]:
    """How large a problem is: its samples (or microbatches), then its ranks."""
    items = getattr(problem, "samples", None)
    if items is None or callable(items):
        items = getattr(problem, "lens", None) or getattr(problem, "schedule", ())
    ranks = getattr(problem, "total_gpus", None)
    if ranks is None:
        ranks = getattr(problem, "dp_size", 1) * getattr(problem, "cp_size", 1)
    return len(items), ranks


@dataclasses.dataclass
class FindingClass:
    """One class: how many outcomes fell in it, and the smallest of them."""

    kind: str
    check: str
    label: str
    count: int = 0
    smallest: Optional[object] = None  # the Outcome
    source: str = ""
    # Every (source, problem line), kept only when all are to be listed.
    every: List[Tuple[str, str]] = dataclasses.field(default_factory=list)


class Classes:
    """The classes of one run, in the order first found."""

    def __init__(self, keep_every: bool = False):
        self._classes: Dict[Tuple[str, str, str], FindingClass] = {}
        self._keep_every = keep_every

    def add(self, outcome, source: str) -> None:
        """Counts `outcome` in its class (outcomes of other kinds are ignored)."""
        if outcome.kind not in REPORTED:
            return
        key = (outcome.kind, outcome.check, label(outcome))
        found = self._classes.setdefault(key, FindingClass(*key))
        found.count += 1
        if found.smallest is None or size(outcome.problem) < size(found.smallest.problem):
            found.smallest, found.source = outcome, source
        if self._keep_every:
            found.every.append((source, outcome.problem.line()))

    def of_kind(self, kind: str) -> List[FindingClass]:
        """The classes of one outcome kind."""
        return [c for c in self._classes.values() if c.kind == kind]

    @staticmethod
    def shrunk(found: FindingClass, run: Callable) -> object:
        """The smallest problem shrunk within its class: run(problem, check)
        returns the outcome of found.check on a problem. Returns the outcome
        on the shrunk problem."""
        def same_class(candidate):
            outcome = run(candidate, found.check)
            return outcome is not None and outcome.kind == found.kind and \
                label(outcome) == found.label
        smallest = shrink.shrink(found.smallest.problem, same_class)
        return run(smallest, found.check)
