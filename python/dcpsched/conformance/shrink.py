"""Shrinks a problem on which a check differs to a small one that still differs.

Greedy, as property-based testing shrinks: drop the cap (max_num_seqs) and
then the VPP group of a scheduling problem if the difference stays without
them; drop chunks of samples (halves, quarters, ...,
single samples) while the difference stays; then shorten each length to the
smallest one (binary search) that still shows it; repeat until nothing
changes or the evaluation budget is spent. For a dp_balanced problem
the samples are its lengths; for a schedule to align, its microbatches
(nothing to shorten). Only candidates on which the same check still differs
are kept, so the result always shows the difference.
"""

import dataclasses
from typing import Callable, List, Sequence

from dcpsched.conformance.problems import DpBalancedProblem, DynamicCpProblem, VppAlignProblem


def _items(problem) -> List:
    if isinstance(problem, DynamicCpProblem):
        return list(problem.samples)
    if isinstance(problem, DpBalancedProblem):
        return list(problem.lens)
    return list(problem.schedule)


def _with_items(problem, items: Sequence):
    if isinstance(problem, DynamicCpProblem):
        return problem.with_samples(items)
    if isinstance(problem, DpBalancedProblem):
        return dataclasses.replace(problem, lens=tuple(items))
    return dataclasses.replace(problem, schedule=tuple(items))


def _length(problem, item) -> int:
    return item[1] if isinstance(problem, DynamicCpProblem) else item


def _with_length(problem, item, length: int):
    return (item[0], length) if isinstance(problem, DynamicCpProblem) else length


class _Budget:
    def __init__(self, evaluations: int, differs: Callable):
        self.left = evaluations
        self._differs = differs

    def differs(self, problem) -> bool:
        if self.left <= 0:
            return False
        self.left -= 1
        return self._differs(problem)


def _drop_cap(problem, budget: _Budget):
    """The problem without its max_num_seqs, if it still differs so."""
    if getattr(problem, "max_num_seqs", None) is None:
        return problem
    candidate = dataclasses.replace(problem, max_num_seqs=None)
    return candidate if budget.differs(candidate) else problem


def _drop_vpp(problem, budget: _Budget):
    """The scheduling problem without its VPP group, if it still differs so
    (an alignment problem keeps its own: it is what it aligns to)."""
    if isinstance(problem, VppAlignProblem) or problem.vpp_group is None:
        return problem
    candidate = dataclasses.replace(problem, vpp_group=None)
    return candidate if budget.differs(candidate) else problem


def _drop_samples(problem, budget: _Budget):
    items = _items(problem)
    chunk = max(len(items) // 2, 1)
    while chunk >= 1 and items:
        start = 0
        while start < len(items):
            candidate = _with_items(problem, items[:start] + items[start + chunk:])
            if budget.differs(candidate):
                problem, items = candidate, _items(candidate)
            else:
                start += chunk
        chunk //= 2
    return problem


def _shorten_lengths(problem, budget: _Budget):
    if isinstance(problem, VppAlignProblem):
        return problem
    for index in range(len(_items(problem))):
        items = _items(problem)
        low, high = 1, _length(problem, items[index])  # high always shows it
        while low < high:
            middle = (low + high) // 2
            candidate_items = list(items)
            candidate_items[index] = _with_length(problem, items[index], middle)
            candidate = _with_items(problem, candidate_items)
            if budget.differs(candidate):
                high = middle
                problem = candidate
            else:
                low = middle + 1
    return problem


def shrink(problem, differs: Callable[[object], bool], evaluations: int = 3000):
    """The smallest problem found on which `differs` holds (`problem` itself if
    nothing smaller does). `differs(problem)` must hold."""
    budget = _Budget(evaluations, differs)
    while True:
        smaller = _shorten_lengths(
            _drop_samples(_drop_vpp(_drop_cap(problem, budget), budget), budget), budget)
        if smaller == problem or budget.left <= 0:
            return smaller
        problem = smaller
