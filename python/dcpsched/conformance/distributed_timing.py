"""What the scheduler costs in upstream's pipeline: the distributed harness's
timing mode (--distributed W --timing).

cases() gives one global batch of upstream's DCP benchmark workload
(generators.lognormal_length: lognormal, mean 1024, sigma 1.5, clipped to
[128, 8192], and to what the G = W ranks hold, which binds only for W < 4),
max_seqlen_per_dp_cp_rank 2048, min_cp 1, no VPP, no cap, on two topologies
with tp 1 (dp W x cp 1, and cp 4, or the largest power of two dividing W
below it), split in contiguous blocks over the DP ranks, one sample per
iterator item (micro batch size 1, so num_microbatches is the samples per DP
rank). Each batch is repeated R times; every repetition is an ordinary case
of the harness, run with upstream's scheduler and then with the drop-in
(interleaved), and compared rank by rank like any other.

For the timing the ranks meet at a barrier before each wrap_data_iterator
call, time the call until it returns (run(); draining the iterator for the
record is not timed) and time the scheduling call inside it
(get_groups_and_subsamples, wrapped with a perf_counter timer; see
distributed_rank.py). report() takes per repetition the slowest rank's
run() and the slowest rank's scheduling call, and prints per topology and
variant the median over the repetitions of each, the scheduler's share
(median scheduling / median run()) and upstream's run() over the drop-in's.
It reports no figure unless every repetition was equal on every rank.
"""

import random
import statistics
from typing import List

from dcpsched.conformance import distributed_cases, generators

BUDGET = 2048
WORKLOAD = "lognormal (mean 1024, sigma 1.5) clipped to [128, 8192]"
UPSTREAM, DROP_IN = "upstream", "drop_in"


def topologies(world: int) -> List[dict]:
    """dp W x cp 1 and dp W/c x cp c, c = min(4, the largest power of two
    dividing W); tp 1, pp 1."""
    cp = 1
    while cp < 4 and world % (2 * cp) == 0:
        cp *= 2
    shapes = [{"tp": 1, "dp": world, "cp": 1}]
    if cp > 1:
        shapes.append({"tp": 1, "dp": world // cp, "cp": cp})
    return shapes


def _lengths(rng, samples, world):
    widest = 1 << (world.bit_length() - 1)
    return [min(generators.lognormal_length(rng.random()), widest * BUDGET)
            for _ in range(samples)]


def cases(world: int, samples: int, repeats: int, seed: int) -> List[dict]:
    """The timing cases: per topology, `repeats` copies of one batch of
    `samples` samples (the same batch on every topology). Raises ValueError
    if samples is not a multiple of W."""
    if samples < world or samples % world:
        raise ValueError(f"--timing-samples must be a positive multiple of W = {world}, "
                         f"got {samples}")
    rng = random.Random(seed)
    shapes = topologies(world)
    for _ in range(1000):
        lengths = _lengths(rng, samples, world)
        token_seed = rng.getrandbits(32)
        drawn = []
        for shape in shapes:
            per_rank = samples // shape["dp"]
            items = [[[n] for n in lengths[d * per_rank:(d + 1) * per_rank]]
                     for d in range(shape["dp"])]
            drawn.append({"family": "benchmark", **shape,
                          "max_seqlen_per_dp_cp_rank": BUDGET, "min_cp_size": 1, "vpp": None,
                          "microbatch_group_size_per_vp_stage": None,
                          "thd_max_packed_sequences": None, "num_microbatches": per_rank,
                          "items": items, "seed": token_seed})
        if all(distributed_cases.schedulable(case) for case in drawn):
            break
    else:
        raise RuntimeError("no schedulable benchmark batch drawn")
    result = []
    for case in drawn:
        for repeat in range(repeats):
            result.append({**case, "index": len(result), "repeat": repeat})
    return result


def _ms(seconds):
    """3 significant digits, in ms below a second, else in s."""
    return f"{seconds:.3g} s" if seconds >= 0.9995 else f"{seconds * 1000:.3g} ms"


def _slowest(per_rank, variant, field):
    return max(entry[variant][field] for entry in per_rank)


def report(cases_run, results, world, valid, out) -> None:
    """Prints the timing lines; `valid` is False unless every case was equal
    on every rank (then no figure is printed)."""
    if not valid:
        print("timing: NOT REPORTED: the outputs of upstream's scheduler and the drop-in were "
              "not equal on every rank in every repetition (above)", file=out)
        return
    first = cases_run[0]
    repeats = 1 + max(case["repeat"] for case in cases_run)
    samples = sum(len(items) for items in first["items"])
    print(f"timing: W = {world}, one global batch of {samples} samples, {WORKLOAD}"
          f"{'' if world >= 4 else f' and to {world} x {BUDGET}'}, "
          f"max_seqlen_per_dp_cp_rank {BUDGET}, min_cp 1, no VPP; median of {repeats} "
          "repetitions of the slowest rank's wrap_data_iterator (run()) and scheduling call "
          "(get_groups_and_subsamples)", file=out)
    shapes = []
    for case in cases_run:
        if (case["dp"], case["cp"]) not in shapes:
            shapes.append((case["dp"], case["cp"]))
    for dp, cp in shapes:
        mine = [case for case in cases_run if (case["dp"], case["cp"]) == (dp, cp)]
        medians = {}
        for variant in (UPSTREAM, DROP_IN):
            per_case = [[res["cases"][case["index"]] for res in results] for case in mine]
            run = statistics.median(_slowest(p, variant, "run_seconds") for p in per_case)
            scheduler = statistics.median(_slowest(p, variant, "scheduler_seconds")
                                          for p in per_case)
            medians[variant] = (run, scheduler)
        count = results[0]["cases"][mine[0]["index"]][UPSTREAM]["num_micro_batches"]["repr"]
        (up_run, up_sched), (our_run, our_sched) = medians[UPSTREAM], medians[DROP_IN]
        print(f"timing: tp 1 x dp {dp} x cp {cp}: {samples} samples, "
              f"{mine[0]['num_microbatches']} per DP rank, {count} microbatches; run() "
              f"upstream {_ms(up_run)} (scheduler {_ms(up_sched)}, share "
              f"{up_sched / up_run:.3f}), drop-in {_ms(our_run)} (scheduler {_ms(our_sched)}, "
              f"share {our_sched / our_run:.3f}); run() upstream/drop-in "
              f"{up_run / our_run:.2f}x, scheduler upstream/drop-in {up_sched / our_sched:.3g}x; "
              f"equal on every rank in all {len(mine)} repetitions", file=out)
