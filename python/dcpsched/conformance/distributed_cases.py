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
scheduler must refuse it, on every rank).

Batches are drawn again until dcpsched schedules them, with the cap and
without (but the too-long one): upstream loops forever on some batches
dcpsched refuses (the scheduling check counts them as upstream hangs), and
a hang inside run() stalls every rank. The too-long batch is given to a
topology with tp 1: upstream raises there on every rank before rerouting,
while with tp 2 the TP siblings, which do not schedule, would wait in the
scalar broadcast for ever (as in a training job).

The same (W, count, seed) gives the same cases; they are plain data (JSON)
sent to every rank process.
"""

import random
from typing import Dict, List

import dcpsched
from dcpsched.conformance import generators

FAMILIES = ("benchmark", "long", "short", "boundary")
TOO_LONG = "too_long"


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
    # long: one sample that needs every rank of the DPxCP group, the rest short.
    return [group * budget - rng.randint(0, 16)] + [rng.randint(16, budget)
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


def schedulable(case) -> bool:
    """True if dcpsched schedules the case's batch, with its cap and without."""
    for cap in {None, case["thd_max_packed_sequences"]}:
        try:
            dcpsched.schedule_dynamic_cp(
                global_batch(case), case["dp"] * case["cp"], case["max_seqlen_per_dp_cp_rank"],
                case["min_cp_size"], case["microbatch_group_size_per_vp_stage"],
                max_num_seqs=cap)
        except ValueError:
            return False
    return True


def make_case(rng, index, shape, family, too_long=False) -> dict:
    """One case of the given topology and family, drawn until schedulable
    (unless too_long)."""
    for _ in range(1000):
        case = _draw_case(rng, index, shape, family, too_long)
        if too_long or schedulable(case):
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
    widest = group  # the topologies' groups are powers of two
    lengths = [min(max(1, n), widest * budget) for n in _lengths(rng, family, budget, group,
                                                                 count)]
    if too_long:
        lengths[rng.randrange(len(lengths))] = widest * budget + rng.randint(1, budget)
    items = _split(rng, lengths, shape["dp"], num_microbatches)
    return {"index": index, "family": TOO_LONG if too_long else family, **shape,
            "max_seqlen_per_dp_cp_rank": budget, "min_cp_size": min_cp,
            "vpp": vpp, "microbatch_group_size_per_vp_stage": 2 if vpp else None,
            "thd_max_packed_sequences": cap, "num_microbatches": num_microbatches,
            "items": items, "seed": rng.getrandbits(32)}


def generate(world: int, count: int, seed: int) -> List[dict]:
    """`count` cases on W = world ranks: the topologies and families in turn,
    and, from 8 cases on, one batch with a sample too long for its group last."""
    rng = random.Random(seed)
    shapes = topologies(world)
    cases = []
    for index in range(count):
        too_long = count >= 8 and index == count - 1
        shape = shapes[index % len(shapes)]
        if too_long and shape["tp"] != 1:
            shape = shapes[0]
        cases.append(make_case(rng, index, shape,
                               FAMILIES[(index // len(shapes)) % len(FAMILIES)], too_long))
    return cases


def describe(case) -> str:
    """A one-line summary of the case, for the report."""
    samples = sum(len(item) for items in case["items"] for item in items)
    return (f"case {case['index']} ({case['family']}): tp {case['tp']} x dp {case['dp']} x "
            f"cp {case['cp']}, {samples} samples, max_seqlen_per_dp_cp_rank "
            f"{case['max_seqlen_per_dp_cp_rank']}, min_cp {case['min_cp_size']}, vpp "
            f"{case['vpp'] or 'off'}, thd_max_packed_sequences "
            f"{case['thd_max_packed_sequences']}, num_microbatches {case['num_microbatches']}")
