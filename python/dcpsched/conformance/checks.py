"""Upstream's scheduling functions and dcpsched's, side by side on one problem.

Five checks, each comparing one upstream function with its dcpsched
counterpart, each run only where the checkout has the function
(upstream.Upstream.has):

  get_groups_and_subsamples     DefaultDynamicCPScheduler vs schedule_dynamic_cp
  next_hdp_group_packing_aware  one step, exec times bit for bit, vs
                                next_group_packing_aware
  align_sample_id_groups        VPP alignment vs align_to_vpp_group, on
                                upstream's unaligned schedule (vpp_group > 1)
                                or on a corpus schedule
  DpBalancedScheduler           vs schedule_dp_balanced (max_num_seqs only
                                where upstream's class takes it: dev, not main)
  BalancedCPScheduler           the legacy scheduler of hybrid_cp_schedule.py,
                                its sample_id_groups vs schedule_legacy, on a
                                dynamic-CP problem with min_cp_size 1, no cap
                                and no VPP (it has none of the three)

Answers are equal when they are the same values of the same types (lists,
tuples, ints; floats bit for bit). Where dcpsched refuses a problem and
upstream returns an answer that breaks the invariants docs/specification.md names (an empty
rank, a microbatch of the wrong width, a rank over its token budget, an id
lost or doubled: judged by dcpsched.verify for dynamic-CP answers), upstream
is counted as refusing too, as the golden vectors do
("UpstreamInvariantViolation"). Upstream runs in a worker process under a
timeout and a memory limit (worker.py): it loops forever on some inputs, and
some of those loops grow a list without end. The calls share that one
process, as in Megatron-LM, which calls its scheduler repeatedly in one
process; a call that times out or runs out of memory restarts the worker.
Upstream's calls are the module-level functions _upstream_* below (a
request to the worker pickles its function by reference).

The cap (a problem's max_num_seqs) goes to upstream's scheduler class
always, and to next_hdp_group_packing_aware and dcpsched where the
checkout's step takes it (Megatron-LM PR #6479). Where it does not
(Megatron-LM dev: the class accepts max_num_seqs, the step ignores it),
dcpsched gets no cap, so an equal answer shows the cap plays no part there.

Where upstream returns a schedule and dcpsched refuses it with invariant 11
(UnschedulableError, "upstream returns a schedule its runtime cannot run:
invariant 11 (runtime groups): ..."), the schedule is one Megatron-LM's own
runtime cannot run: a rank's CP group is one the runtime never creates, or
holds other ranks than its samples. The check confirms that on its own, with
runtime_groups.py's reading of the runtime applied to upstream's schedule;
confirmed, the outcome is "upstream returns a schedule its runtime cannot
run" (upstream's schedule kept in the outcome), else "differ".

For the legacy scheduler the runtime is the one the checkout runs it on
(upstream.Upstream.legacy_runtime_rule): Megatron-LM main's hybrid-CP groups
(runtime_groups.hybrid_cp_violations) or dev's dynamic-CP groups
(invariant 11).

Where upstream raises AssertionError and dcpsched returns a schedule that
keeps the invariants, the outcome is "upstream fails where dcpsched
schedules" (UPSTREAM_FAILS), a class of its own, not a difference:
Megatron-LM main's DpBalancedScheduler asserts `i > 0` where dev (and
dcpsched) split the first packed sequence too. cli.py names each such class
by the check and upstream's message, with a shrunk example.

Outcomes: "equal", "differ", "both reject", "upstream hangs" (and dcpsched
refuses), "upstream fails where dcpsched schedules", "upstream returns a schedule its runtime cannot run", "outside" (dcpsched refuses the problem as outside its limits,
InvalidInputError, and upstream gives an answer that keeps the invariants:
upstream's behaviour outside the specification's valid input is not the contract, so it
is counted apart, not compared), "skip" (the check needs an upstream answer
that does not exist, e.g. alignment when upstream's schedule failed).
"""

import dataclasses
import struct
from typing import Any, Callable, Optional

import dcpsched
from dcpsched.conformance import runtime_groups
from dcpsched.conformance.problems import DpBalancedProblem, DynamicCpProblem, VppAlignProblem

EQUAL = "equal"
DIFFER = "differ"
BOTH_REJECT = "both reject"
UPSTREAM_HANGS = "upstream hangs"
# A timed-out upstream call where dcpsched answers is run again this many
# times longer.
RETRY_FACTOR = 30
RUNTIME_CANNOT_RUN = "upstream returns a schedule its runtime cannot run"
UPSTREAM_FAILS = "upstream fails where dcpsched schedules"
OUTSIDE = "outside"
SKIP = "skip"
# The upstream errors that make the UPSTREAM_FAILS class (an assertion upstream
# states about its own state, not a refusal of the input).
UPSTREAM_FAILURES = ("AssertionError",)


@dataclasses.dataclass(frozen=True)
class Answer:
    """What one side did: returned `value`, raised `error`, or hung."""

    value: Any = None
    error: Optional[str] = None
    hung: bool = False
    invalid_input: bool = False  # dcpsched: InvalidInputError

    @property
    def ok(self) -> bool:
        return self.error is None and not self.hung


def run_dcpsched(call: Callable[[], Any]) -> Answer:
    """Runs a dcpsched call; it refuses with ValueError (never anything else)."""
    try:
        return Answer(value=call())
    except ValueError as error:
        return Answer(error=f"{type(error).__name__}: {error}",
                      invalid_input=isinstance(error, dcpsched.InvalidInputError))


def same(a, b) -> bool:
    """True if a and b are the same values of the same types, floats bit for bit."""
    return first_difference(a, b) is None


@dataclasses.dataclass(frozen=True)
class Outcome:
    """One check on one problem."""

    check: str
    kind: str
    upstream: Answer
    dcpsched: Answer
    # The problem the check ran on.
    problem: Any = None
    # Why upstream's answer counts as a refusal (an invariant it breaks).
    upstream_broken: Optional[str] = None
    # The max_num_seqs dcpsched was given (see applied_cap).
    max_num_seqs: Optional[int] = None
    # Where Megatron-LM's runtime cannot run upstream's schedule
    # (runtime_groups.py), for RUNTIME_CANNOT_RUN.
    runtime_broken: Optional[str] = None

    def describe(self, limit: int = 300) -> str:
        """The two answers, shortened; for two different values, where they differ."""
        if self.upstream.ok and self.dcpsched.ok:
            where = first_difference(self.upstream.value, self.dcpsched.value)
            if where is not None:
                return where
        def text(answer):
            if answer.hung:
                return "hangs"
            if answer.error is not None:
                return f"raises {answer.error}"
            return f"returns {answer.value!r}"
        def clip(value):
            return value if len(value) <= limit else value[:limit] + " ..."
        return f"upstream {clip(text(self.upstream))}; dcpsched {clip(text(self.dcpsched))}"


def first_difference(a, b, path="answer") -> Optional[str]:
    """Where a and b first differ (see same()), or None if they do not."""
    found = locate_difference(a, b, path)
    return None if found is None else found[2]


def locate_difference(a, b, path="answer"):
    """Where a and b first differ, as (path, what, message): what is "types",
    "lengths", "floats" (bit patterns) or "values"; None if they do not."""
    if type(a) is not type(b):
        return (path, "types", f"{path}: upstream {a!r} ({type(a).__name__}), dcpsched {b!r} "
                f"({type(b).__name__})")
    if isinstance(a, (list, tuple)):
        for index, (x, y) in enumerate(zip(a, b)):
            where = locate_difference(x, y, f"{path}[{index}]")
            if where is not None:
                return where
        if len(a) != len(b):
            return path, "lengths", f"{path}: upstream has {len(a)} items, dcpsched {len(b)}"
        return None
    if isinstance(a, float):
        if struct.pack("<d", a) == struct.pack("<d", b):
            return None
        return (path, "floats",
                f"{path}: upstream {a!r} ({a.hex()}), dcpsched {b!r} ({b.hex()})")
    return None if a == b else (path, "values", f"{path}: upstream {a!r}, dcpsched {b!r}")


def applied_cap(upstream, problem: DynamicCpProblem) -> Optional[int]:
    """The cap upstream's packing-aware scheduler applies to `problem`: its
    max_num_seqs where the checkout's next_hdp_group_packing_aware takes one,
    else None (Megatron-LM dev ignores the class's max_num_seqs)."""
    return problem.max_num_seqs if upstream.step_takes_max_num_seqs else None


def cap_changes_schedule(upstream, problem: DynamicCpProblem) -> bool:
    """True if the cap upstream applies to `problem` changes dcpsched's
    schedule of it (the run's evidence that the cap was exercised)."""
    cap = applied_cap(upstream, problem)
    if cap is None:
        return False
    def schedule(max_num_seqs):
        return run_dcpsched(lambda: dcpsched.schedule_dynamic_cp(
            list(problem.samples), problem.total_gpus, problem.max_seq_len_per_rank,
            min_cp_size=problem.min_cp_size, vpp_group=problem.vpp_group,
            max_num_seqs=max_num_seqs))
    capped, uncapped = schedule(cap), schedule(None)
    return not (capped.ok and uncapped.ok and same(capped.value, uncapped.value))


def _dynamic_schedule_broken(problem: DynamicCpProblem, groups,
                             runtime_groups_too: bool = True) -> Optional[str]:
    """Judged with the problem's max_num_seqs: pass the cap that applies.
    runtime_groups_too=False leaves out invariant 11 (runtime groups): a
    schedule the runtime cannot run is still one to align."""
    try:
        violations = dcpsched.verify(groups, list(problem.samples), problem.total_gpus,
                                     problem.max_seq_len_per_rank,
                                     min_cp_size=problem.min_cp_size,
                                     vpp_group=problem.vpp_group,
                                     max_num_seqs=problem.max_num_seqs)
    except (TypeError, ValueError) as error:
        return f"unreadable or for an invalid problem: {error}"
    if not runtime_groups_too:
        violations = [v for v in violations if not v.startswith("invariant 11 ")]
    return "; ".join(violations[:3]) if violations else None


def _step_broken(problem: DynamicCpProblem, step) -> Optional[str]:
    try:
        _, leftovers, _, sample_ids = step
        left = {sample_id for sample_id, _ in leftovers}
    except (TypeError, ValueError) as error:
        return f"not a 4-tuple: {error}"
    placed = problem.with_samples(s for s in problem.samples if s[0] not in left)
    return _dynamic_schedule_broken(dataclasses.replace(placed, vpp_group=None), [sample_ids])


def _runtime_broken(problem: DynamicCpProblem, schedule) -> Optional[str]:
    """Where Megatron-LM's runtime cannot run `schedule` of `problem`, or
    None (also for a schedule the rule cannot read: then nothing confirms it)."""
    try:
        found = runtime_groups.violations(schedule, problem.total_gpus, problem.min_cp_size)
    except (TypeError, ValueError, KeyError, IndexError):
        return None
    return "; ".join(found[:3]) if found else None


def _step_runtime_broken(problem: DynamicCpProblem, step) -> Optional[str]:
    try:
        sample_ids = step[3]
    except (TypeError, IndexError):
        return None
    return _runtime_broken(problem, [sample_ids])


def _width_broken(schedule, width: int) -> Optional[str]:
    for index, microbatch in enumerate(schedule):
        if len(microbatch) != width:
            return f"microbatch {index} has {len(microbatch)} ranks, expected {width}"
        empty = [rank for rank, ids in enumerate(microbatch) if not ids]
        if empty:
            return f"microbatch {index} ranks {empty} empty"
    return None


def _dp_balanced_broken(problem: DpBalancedProblem, groups) -> Optional[str]:
    broken = _width_broken(groups, problem.dp_size * problem.cp_size)
    if broken:
        return broken
    budget = problem.max_seq_len_per_rank * problem.cp_size
    for index, microbatch in enumerate(groups):
        for rank, positions in enumerate(microbatch):
            tokens = sum(problem.lens[p] for p in positions)
            if tokens > budget:
                return f"microbatch {index} rank {rank} tokens {tokens} > {budget}"
    return None


def _upstream_schedule(upstream, problem: DynamicCpProblem, vpp_group):
    """DefaultDynamicCPScheduler's schedule of the problem, aligned to
    vpp_group (None: unaligned); the class gets the problem's max_num_seqs."""
    return upstream.dynamic_cp_scheduler(
        max_seqlen_per_dp_cp_rank=problem.max_seq_len_per_rank, cp_size=1,
        dp_size=problem.total_gpus, microbatch_group_size_per_vp_stage=vpp_group,
        max_num_seqs=problem.max_num_seqs,
        min_cp_size=problem.min_cp_size).get_groups_and_subsamples(list(problem.samples))


def _upstream_step(upstream, problem: DynamicCpProblem):
    """One next_hdp_group_packing_aware step on the problem's samples, with
    its max_num_seqs where the step takes one."""
    cap = {"max_num_seqs": problem.max_num_seqs} if upstream.step_takes_max_num_seqs else {}
    return upstream.next_group_packing_aware(
        list(problem.samples), problem.total_gpus, problem.max_seq_len_per_rank,
        problem.min_cp_size, **cap)


def _upstream_align(upstream, schedule, vpp_group):
    return upstream.align_sample_id_groups(schedule, vpp_group)


def _upstream_dp_balanced(upstream, problem: DpBalancedProblem):
    """DpBalancedScheduler's schedule; the cap only where its class takes one."""
    cap = ({"max_num_seqs": problem.max_num_seqs}
           if upstream.dp_balanced_takes_max_num_seqs else {})
    return upstream.dp_balanced_scheduler(
        max_seqlen_per_dp_cp_rank=problem.max_seq_len_per_rank, cp_size=problem.cp_size,
        dp_size=problem.dp_size, microbatch_group_size_per_vp_stage=problem.vpp_group,
        **cap).get_groups_and_subsamples(problem.samples())


class _DpCpGroup:
    """The one thing BalancedCPScheduler asks of its process group: size()."""

    def __init__(self, size: int):
        self._size = size

    def size(self) -> int:
        return self._size


def _upstream_legacy(upstream, problem: DynamicCpProblem):
    """BalancedCPScheduler's sample_id_groups (it returns (groups,
    sample_id_groups); groups are the same ranks' lengths). Its config
    argument is read by nothing: None."""
    scheduler = upstream.legacy_scheduler(max_seq_len_per_rank=problem.max_seq_len_per_rank,
                                          dp_cp_group=_DpCpGroup(problem.total_gpus))
    _, sample_id_groups = scheduler.get_groups_and_subsamples(list(problem.samples), None)
    return sample_id_groups


def legacy_problem(problem: DynamicCpProblem) -> Optional[DynamicCpProblem]:
    """The problem as BalancedCPScheduler can take it: None when it sets
    min_cp_size > 1 or a cap (it has neither); its VPP group dropped (it
    does not align)."""
    if problem.min_cp_size != 1 or problem.max_num_seqs is not None:
        return None
    return dataclasses.replace(problem, vpp_group=None)


def legacy_runtime_broken(upstream, problem: DynamicCpProblem, schedule) -> Optional[str]:
    """Where the runtime the checkout runs its legacy scheduler on cannot
    run `schedule` (see upstream.Upstream.legacy_runtime_rule), or None."""
    if upstream.legacy_runtime_rule != "hybrid":
        return _runtime_broken(problem, schedule)
    try:
        found = runtime_groups.hybrid_cp_violations(schedule, problem.total_gpus)
    except (TypeError, ValueError, KeyError, IndexError):
        return None
    return "; ".join(found[:3]) if found else None


def classify(u: Answer, d: Answer, broken, runtime_broken=None):
    """(kind, why upstream counts as refusing, where its runtime cannot run
    upstream's answer) for upstream's answer `u` and dcpsched's `d`.
    broken(value) and runtime_broken(value) judge upstream's value (None:
    nothing broken); runtime_broken is None for checks whose answers are no
    dynamic-CP schedule, where an invariant-11 refusal is a difference."""
    if u.ok and d.ok:
        return (EQUAL if same(u.value, d.value) else DIFFER), None, None
    if d.ok:
        if (u.error is not None and u.error.split(":")[0] in UPSTREAM_FAILURES
                and not broken(d.value)):
            return UPSTREAM_FAILS, None, None
        return DIFFER, None, None
    if u.hung:
        return UPSTREAM_HANGS, None, None
    if not u.ok:
        return BOTH_REJECT, None, None
    if runtime_groups.names_runtime_groups(d.error):
        # dcpsched says upstream's runtime cannot run upstream's answer:
        # confirmed only by the rule's own reading of that answer.
        runtime = runtime_broken(u.value) if runtime_broken else None
        return (RUNTIME_CANNOT_RUN if runtime else DIFFER), None, runtime
    why = broken(u.value)
    if why:
        return BOTH_REJECT, why, None
    return (OUTSIDE if d.invalid_input else DIFFER), None, None


def _compare(check, worker, upstream_call, dcpsched_answer, broken, problem,
             timeout, max_num_seqs=None, runtime_broken=None) -> Outcome:
    """Runs upstream_call, a (function, args) request, in the worker (dcpsched
    has run) and classifies the two answers (classify()). An upstream call
    that times out where dcpsched answers is given RETRY_FACTOR times longer
    before it counts as a hang (upstream is slow on thousands of ranks)."""
    d = dcpsched_answer
    u = worker.call(*upstream_call, timeout)
    if u.hung and d.ok:
        u = worker.call(*upstream_call, timeout * RETRY_FACTOR)
    kind, why, runtime = classify(u, d, broken, runtime_broken)
    return Outcome(check, kind, u, d, problem, why, max_num_seqs, runtime)


def check_dynamic_cp(worker, problem: DynamicCpProblem, timeout: float, only=None):
    """The three checks of a dynamic-CP problem (alignment only with vpp_group > 1),
    or just the one named `only`; upstream runs in `worker` (an UpstreamWorker)."""
    samples = list(problem.samples)
    up = worker.upstream
    cap = applied_cap(up, problem)
    judged = dataclasses.replace(problem, max_num_seqs=cap)  # what upstream must keep
    outcomes = []
    if only in (None, "BalancedCPScheduler") and up.has("legacy"):
        legacy = legacy_problem(problem)
        if legacy is not None:
            outcomes.append(check_legacy(worker, legacy, timeout))
    if only in (None, "get_groups_and_subsamples") and up.dynamic_cp_scheduler is not None:
        outcomes.append(_compare(
            "get_groups_and_subsamples", worker,
            (_upstream_schedule, (problem, problem.vpp_group)),
            run_dcpsched(lambda: dcpsched.schedule_dynamic_cp(
                samples, problem.total_gpus, problem.max_seq_len_per_rank,
                min_cp_size=problem.min_cp_size, vpp_group=problem.vpp_group,
                max_num_seqs=cap)),
            lambda groups: _dynamic_schedule_broken(judged, groups), problem, timeout, cap,
            lambda groups: _runtime_broken(problem, groups)))
    if only in (None, "next_hdp_group_packing_aware") and up.next_group_packing_aware is not None:
        outcomes.append(_compare(
            "next_hdp_group_packing_aware", worker, (_upstream_step, (problem,)),
            run_dcpsched(lambda: dcpsched.next_group_packing_aware(
                samples, problem.total_gpus, problem.max_seq_len_per_rank,
                min_cp_size=problem.min_cp_size, max_num_seqs=cap)),
            lambda step: _step_broken(judged, step), problem, timeout, cap,
            lambda step: _step_runtime_broken(problem, step)))
    if (only in (None, "align_sample_id_groups") and problem.vpp_group is not None
            and problem.vpp_group > 1 and up.dynamic_cp_scheduler is not None
            and up.align_sample_id_groups is not None):
        unaligned = worker.call(_upstream_schedule, (problem, None), timeout)
        if unaligned.ok and not _dynamic_schedule_broken(
                dataclasses.replace(judged, vpp_group=None), unaligned.value,
                runtime_groups_too=False):
            outcomes.append(_align_outcome(worker, unaligned.value, problem.vpp_group,
                                           timeout, problem))
        else:
            outcomes.append(Outcome("align_sample_id_groups", SKIP, unaligned, Answer(),
                                    problem))
    return outcomes


def _align_outcome(worker, schedule, vpp_group, timeout, problem) -> Outcome:
    width = len(schedule[0]) if schedule else 0
    copy = [[list(rank) for rank in microbatch] for microbatch in schedule]
    return _compare(
        "align_sample_id_groups", worker, (_upstream_align, (copy, vpp_group)),
        run_dcpsched(lambda: dcpsched.align_to_vpp_group(schedule, vpp_group)),
        lambda aligned: _width_broken(aligned, width), problem, timeout)


def check_legacy(worker, problem: DynamicCpProblem, timeout: float) -> Outcome:
    """BalancedCPScheduler against schedule_legacy on a legacy_problem()."""
    up = worker.upstream
    return _compare(
        "BalancedCPScheduler", worker, (_upstream_legacy, (problem,)),
        run_dcpsched(lambda: dcpsched.schedule_legacy(
            list(problem.samples), problem.total_gpus, problem.max_seq_len_per_rank)),
        lambda groups: _dynamic_schedule_broken(problem, groups, runtime_groups_too=False),
        problem, timeout, None, lambda groups: legacy_runtime_broken(up, problem, groups))


def check_vpp_align(worker, problem: VppAlignProblem, timeout: float, only=None):
    """Alignment of a given schedule."""
    if worker.upstream.align_sample_id_groups is None or only not in (
            None, "align_sample_id_groups"):
        return []
    return [_align_outcome(worker, problem.schedule_lists(), problem.vpp_group, timeout,
                           problem)]


def check_dp_balanced(worker, problem: DpBalancedProblem, timeout: float, only=None):
    """DpBalancedScheduler on the problem's lengths (ids = positions); the
    cap goes to dcpsched only where upstream's class takes it."""
    if worker.upstream.dp_balanced_scheduler is None or only not in (
            None, "DpBalancedScheduler"):
        return []
    samples = problem.samples()
    cap = problem.max_num_seqs if worker.upstream.dp_balanced_takes_max_num_seqs else None
    return [_compare(
        "DpBalancedScheduler", worker, (_upstream_dp_balanced, (problem,)),
        run_dcpsched(lambda: dcpsched.schedule_dp_balanced(
            samples, problem.dp_size, problem.cp_size, problem.max_seq_len_per_rank,
            max_num_seqs=cap, vpp_group=problem.vpp_group)),
        lambda groups: _dp_balanced_broken(dataclasses.replace(problem, max_num_seqs=cap),
                                           groups), problem, timeout)]


def run_checks(worker, problem, timeout: float, only: Optional[str] = None):
    """Every check that applies to `problem`, or only the one named `only`;
    upstream runs in `worker`, an UpstreamWorker."""
    if isinstance(problem, DynamicCpProblem):
        return check_dynamic_cp(worker, problem, timeout, only)
    if isinstance(problem, DpBalancedProblem):
        return check_dp_balanced(worker, problem, timeout, only)
    return check_vpp_align(worker, problem, timeout, only)
