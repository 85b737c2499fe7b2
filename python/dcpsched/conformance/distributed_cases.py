"""The global batches the distributed harness feeds upstream's pipeline.

A case is one call of wrap_data_iterator on every rank: a topology (tp x
dp x cp = W, pp 1), the config (max_seqlen_per_dp_cp_rank,
min_dynamic_context_parallel_size, VPP, thd_max_packed_sequences) and, for
each DP rank, the items its data iterator yields (num_microbatches items,
each one sample or a list of samples, as upstream's get_batch_and_global_seqlens
accepts). Lengths come from the conformance generators' recipes
(generators.py: the benchmark's lognormal, k * budget +- 1, tiny); the
families add one sample long enough to need the whole DPxCP group, many
short samples, and a batch with a sample too long for the group (every
scheduler must refuse it, on every rank). On a topology whose G is even but
not a power of two (W = 6, 12), its first case is of the runtime-groups
family (tp 1 only; with tp 2 every case is one the runtime can run, see
make_case): one sample long enough for the largest power of two below G, a
CP group Megatron-LM's runtime never creates there, and short ones; it is drawn
until upstream's schedule of it is one the runtime cannot run (by
runtime_groups.py, on dcpsched's schedule, which is upstream's, or by
dcpsched refusing it with invariant 11).

Batches are drawn again until dcpsched schedules them, with the cap and
without, or refuses them with invariant 11 only (but the too-long one): upstream loops forever on some batches
dcpsched refuses (the scheduling check counts them as upstream hangs), and
a hang inside run() stalls every rank. The too-long batch is given to a
topology with tp 1: upstream raises there on every rank before rerouting,
while with tp 2 the TP siblings, which do not schedule, would wait in the
scalar broadcast for ever (as in a training job).

In the cost-aware mode (--cost-profile) upstream's scheduler does not run,
so a batch need not be one packing-aware schedules: it is drawn until every
cost-aware variant of the drop-in schedules it (cost_aware_schedule), which
lets in the batches packing-aware refuses or schedules in a way its runtime
cannot run (G = 6 or 12, VPP), the batches cost-aware exists for;
cost_aware_expected() then gives, per case and variant, the schedule the
ranks must receive (or the error every rank must raise).

The same (W, count, seed) gives the same cases; they are plain data (JSON)
sent to every rank process.
"""

import random
from typing import Dict, List

import dcpsched
from dcpsched.conformance import generators, runtime_groups

FAMILIES = ("benchmark", "long", "short", "boundary")
TOO_LONG = "too_long"
RUNTIME_GROUPS = "runtime_groups"
# The cost-aware drop-in's variants: install_into_megatron(cost_profile=P),
# and the same with only_where_upstream_fails=True.
COST_AWARE, FALLBACK = "cost_aware", "only_where_upstream_fails"
COST_AWARE_VARIANTS = (COST_AWARE, FALLBACK)


def topologies(world: int) -> List[Dict[str, int]]:
    """tp x dp x cp = world, pp 1: every dp x cp with tp 1, then tp 2 cases."""
    shapes = []
    for tp in (1, 2):
        if world % tp:
            continue
        group = world // tp
        cp = 1
        while cp <= group:
            if group % cp == 0 and (tp == 1 or cp <= 2):
                shapes.append({"tp": tp, "dp": group // cp, "cp": cp})
            cp *= 2
    return shapes


def _lengths(rng, family, budget, group, count):
    if family == "benchmark":
        return [generators.lognormal_length(rng.random()) for _ in range(count)]
    if family == "short":
        return [rng.randint(1, 64) for _ in range(count)]
    if family == "boundary":
        return [rng.randint(1, 3) * budget + rng.choice((-1, 0, 1)) for _ in range(count)]
    if family == RUNTIME_GROUPS:  # a CP group of p, the largest power of two below G
        widest = generators._largest_power_of_two_at_most(group)  # pylint: disable=protected-access
        return [rng.randint(widest // 2 * budget + 1, widest * budget)] + [
            rng.randint(16, budget) for _ in range(count - 1)]
    # long: one sample that needs the widest CP group a sample can have (every
    # rank where G is a power of two), the rest short.
    widest = generators._largest_power_of_two_at_most(group)  # pylint: disable=protected-access
    return [widest * budget - rng.randint(0, 16)] + [rng.randint(16, budget)
                                                    for _ in range(count - 1)]


def _split(rng, lengths, dp, num_microbatches):
    """Per DP rank, num_microbatches items (lists of lengths, at least one each)."""
    per_rank = [[] for _ in range(dp)]
    for index, length in enumerate(lengths):
        per_rank[index % dp if index < dp * num_microbatches else rng.randrange(dp)].append(
            length)
    items = []
    for mine in per_rank:
        cuts = sorted(rng.sample(range(1, len(mine)), num_microbatches - 1))
        bounds = [0] + cuts + [len(mine)]
        items.append([mine[a:b] for a, b in zip(bounds, bounds[1:])])
    return items


def global_batch(case):
    """(global id, padded length) in DP-rank order, as upstream gathers them."""
    lengths = [n for items in case["items"] for item in items for n in item]
    return list(enumerate(lengths))


def _schedule(case, cap):
    """dcpsched's schedule of the case's batch, or its error."""
    try:
        return dcpsched.schedule_dynamic_cp(
            global_batch(case), case["dp"] * case["cp"], case["max_seqlen_per_dp_cp_rank"],
            min_cp_size=case["min_cp_size"],
            vpp_group=case["microbatch_group_size_per_vp_stage"], max_num_seqs=cap)
    except ValueError as error:
        return error


def _unrunnable(case, answer) -> bool:
    """True if `answer` (_schedule's) is a schedule Megatron-LM's runtime
    cannot run, or dcpsched's refusal of one (invariant 11)."""
    if isinstance(answer, ValueError):
        return (isinstance(answer, dcpsched.UnschedulableError)
                and runtime_groups.names_runtime_groups(str(answer)))
    return bool(runtime_groups.violations(answer, case["dp"] * case["cp"],
                                          case["min_cp_size"]))


def schedulable(case) -> bool:
    """True if dcpsched schedules the case's batch, with its cap and without,
    or refuses it only as one its runtime cannot run (upstream returns it)."""
    for cap in {None, case["thd_max_packed_sequences"]}:
        answer = _schedule(case, cap)
        if isinstance(answer, ValueError) and not _unrunnable(case, answer):
            return False
    return True


def runtime_cannot_run(case) -> bool:
    """True if upstream's schedule of the case, with its cap and without, is
    one Megatron-LM's runtime cannot run (see _unrunnable)."""
    return all(_unrunnable(case, _schedule(case, cap))
               for cap in {None, case["thd_max_packed_sequences"]})


def _runnable(case) -> bool:
    """True if upstream's schedule of the case, with its cap and without, is
    one the runtime can run (so dcpsched does not refuse it with invariant 11)."""
    return not any(_unrunnable(case, _schedule(case, cap))
                   for cap in {None, case["thd_max_packed_sequences"]})


def _upstream_can_take(case) -> bool:
    """The default acceptance: dcpsched schedules the batch (or refuses it
    with invariant 11 only), and with tp 2 upstream's schedule of it is one
    the runtime can run."""
    return schedulable(case) and (case["tp"] == 1 or _runnable(case))


def make_case(rng, index, shape, family, too_long=False, accept=None) -> dict:
    """One case of the given topology and family, drawn until `accept(case)`
    (default _upstream_can_take; not for too_long). With tp 2 the acceptance
    must make it one no scheduler refuses: a refusal on the TP rank 0 inside
    run() leaves its sibling waiting in the scalar broadcast (as the
    too-long batch would); where the family cannot give one in 200 draws (at
    G = 3 any sample over the budget needs a CP group of 2, which the
    runtime lacks there), the short family does."""
    accept = accept or _upstream_can_take
    for attempt in range(1000):
        drawn = family if shape["tp"] == 1 or attempt < 200 else "short"
        case = _draw_case(rng, index, shape, drawn, too_long)
        if too_long:
            return case
        if accept(case) and (drawn != RUNTIME_GROUPS or runtime_cannot_run(case)):
            return case
    raise RuntimeError(f"no schedulable {family} batch drawn for {shape}")


def _draw_case(rng, index, shape, family, too_long):
    group = shape["dp"] * shape["cp"]
    budget = rng.choice((256, 1024, 2048)) if family != "short" else rng.choice((64, 256))
    min_cp = rng.choice([1, 2] if group >= 2 else [1])
    vpp = rng.choice((None, 2))
    cap = rng.choice((None, None, 1, 2, 3, 4))
    num_microbatches = rng.randint(1, 4)
    count = shape["dp"] * num_microbatches + rng.randint(0, 40 if family != "short" else 120)
    # The longest a sample may be: what the widest power-of-two CP group holds.
    widest = generators._largest_power_of_two_at_most(group)  # pylint: disable=protected-access
    lengths = [min(max(1, n), widest * budget) for n in _lengths(rng, family, budget, group,
                                                                 count)]
    if too_long:
        lengths[rng.randrange(len(lengths))] = group * budget + rng.randint(1, budget)
    items = _split(rng, lengths, shape["dp"], num_microbatches)
    return {"index": index, "family": TOO_LONG if too_long else family, **shape,
            "max_seqlen_per_dp_cp_rank": budget, "min_cp_size": min_cp,
            "vpp": vpp, "microbatch_group_size_per_vp_stage": 2 if vpp else None,
            "thd_max_packed_sequences": cap, "num_microbatches": num_microbatches,
            "items": items, "seed": rng.getrandbits(32)}


def _family(index, shape, shapes):
    group = shape["dp"] * shape["cp"]
    if shape["tp"] == 1 and index < len(shapes) and group % 2 == 0 and group & (group - 1):
        return RUNTIME_GROUPS
    return FAMILIES[(index // len(shapes)) % len(FAMILIES)]


def generate(world: int, count: int, seed: int, accept=None) -> List[dict]:
    """`count` cases on W = world ranks: the topologies and families in turn
    (the runtime-groups family first where G is even and no power of two,
    with tp 1),
    and, from 8 cases on, one batch with a sample too long for its group last.
    accept: make_case's (None: batches upstream's pipeline can take)."""
    rng = random.Random(seed)
    shapes = topologies(world)
    cases = []
    for index in range(count):
        too_long = count >= 8 and index == count - 1
        shape = shapes[index % len(shapes)]
        if too_long and shape["tp"] != 1:
            shape = shapes[0]
        cases.append(make_case(rng, index, shape, _family(index, shape, shapes), too_long,
                               accept))
    return cases


def _cost_aware_options(case, applies_cap):
    """The options the pipeline's scheduler passes dcpsched (the drop-in's
    get_groups_and_subsamples): max_num_seqs only where the checkout's
    scheduler applies it."""
    return dict(min_cp_size=case["min_cp_size"],
                vpp_group=case["microbatch_group_size_per_vp_stage"],
                max_num_seqs=case["thd_max_packed_sequences"] if applies_cap else None)


def cost_aware_schedule(case, profile, applies_cap, variant=COST_AWARE):
    """The schedule the cost-aware drop-in must give the case's batch, or
    the error it must raise: dcpsched.schedule_cost_aware under `profile`
    (a dcpsched.CostProfile); with variant FALLBACK
    (only_where_upstream_fails) packing-aware's schedule wherever
    schedule_dynamic_cp gives one, cost-aware's where it refuses
    (UnschedulableError). applies_cap: whether the checkout's scheduler
    applies max_num_seqs (its packing-aware step takes it)."""
    args = (global_batch(case), case["dp"] * case["cp"], case["max_seqlen_per_dp_cp_rank"])
    options = _cost_aware_options(case, applies_cap)
    try:
        if variant == FALLBACK:
            try:
                return dcpsched.schedule_dynamic_cp(*args, **options)
            except dcpsched.UnschedulableError:
                pass
        return dcpsched.schedule_cost_aware(*args, profile=profile, **options)
    except ValueError as error:
        return error


def cost_aware_accepts(profile, applies_cap):
    """make_case's acceptance for the cost-aware mode: every variant
    schedules the batch (so no rank raises inside run(); upstream's
    scheduler, which may hang, is not run)."""
    def accept(case):
        return not any(isinstance(cost_aware_schedule(case, profile, applies_cap, variant),
                                  ValueError) for variant in COST_AWARE_VARIANTS)
    return accept


def cost_aware_expected(case, profile, applies_cap) -> dict:
    """What each variant's ranks must receive, as plain data: {"references":
    the distinct schedules, "expected": {variant: {"reference": index} or
    {"error": type, "message": message}}}. Each reference is run through
    upstream's run() once (the rank's given-schedule scheduler)."""
    references, expected = [], {}
    for variant in COST_AWARE_VARIANTS:
        answer = cost_aware_schedule(case, profile, applies_cap, variant)
        if isinstance(answer, ValueError):
            expected[variant] = {"error": type(answer).__name__, "message": str(answer)}
            continue
        if answer not in references:
            references.append(answer)
        expected[variant] = {"reference": references.index(answer)}
    return {"references": references, "expected": expected}


def packing_aware_has_none(case, applies_cap) -> bool:
    """True if packing-aware (upstream's scheduler, dcpsched's
    schedule_dynamic_cp) has no runnable schedule of the case's batch: it
    refuses it (invariant 11 included: upstream then returns one its
    runtime cannot run)."""
    cap = case["thd_max_packed_sequences"] if applies_cap else None
    return isinstance(_schedule(case, cap), ValueError)


def describe(case) -> str:
    """A one-line summary of the case, for the report."""
    samples = sum(len(item) for items in case["items"] for item in items)
    return (f"case {case['index']} ({case['family']}): tp {case['tp']} x dp {case['dp']} x "
            f"cp {case['cp']}, {samples} samples, max_seqlen_per_dp_cp_rank "
            f"{case['max_seqlen_per_dp_cp_rank']}, min_cp {case['min_cp_size']}, vpp "
            f"{case['vpp'] or 'off'}, thd_max_packed_sequences "
            f"{case['thd_max_packed_sequences']}, num_microbatches {case['num_microbatches']}")
