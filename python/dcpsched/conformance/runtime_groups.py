"""The runtime-group rule: can Megatron-LM's runtime run a dynamic-CP schedule?

A schedule can be valid (every rank filled, budgets kept, CP sizes powers of
two) and still not run, because the runtime splits a rank's samples over a
process group it created once, at start-up, and has no other. Written here
from how Megatron-LM dev runs a dynamic-CP schedule (parallel_state.py's
create_dynamic_dp_cp_groups and get_dynamic_data_context_parallel_groups,
data_schedule.py's get_batch_on_this_rank_for_sequence_packing), not from
its code, so the conformance check can confirm on its own what dcpsched's
refusal (invariant 11, "runtime groups") claims:

- Start-up (initialize_model_parallel with dynamic_context_parallel) refuses
  an odd number G of DPxCP ranks, and creates, for every size 2^i with
  i < int(log2(G)) and 2^i >= min_cp_size, the aligned blocks
  ranks[k * 2^i : (k + 1) * 2^i] (the last one short when 2^i does not
  divide G). The whole DPxCP group (size G) exists as well.
- In a microbatch, a rank's local_cp_size is the number of ranks whose list
  holds the rank's first sample.
- The rank looks its group up by that size: the whole group when the size is
  G, else the created block of that size holding the rank; a size never
  created raises KeyError.
- The rank then splits every sample it holds over that group.

So a rank can run its microbatch only if the group exists and every sample
on the rank is held by exactly that group's ranks. violations() says where
a schedule breaks this (reading the groups as start-up would create them,
odd G included: odd_group_refused() says that start-up itself refuses it); a rank with no sample is left to the other
invariants (the runtime fails on it differently, reading its first sample).

Megatron-LM main runs the legacy scheduler (BalancedCPScheduler of
pipeline_parallel/hybrid_cp_schedule.py) on other groups, and
hybrid_cp_violations() reads its rule, written from how main runs one
(parallel_state.py's create_hybrid_dp_cp_groups and
get_hybrid_data_context_parallel_groups, hybrid_cp_schedule.py's
hybrid_context_parallel_forward_backward, utils.py's
get_batch_on_this_cp_rank), not from its code:

- Start-up (hybrid_context_parallel) refuses an odd number G of DPxCP
  ranks, and creates, for every size 2^i with 1 <= i < int(log2(G)), the
  aligned blocks of that size: sizes 2 to 2^(int(log2(G)) - 1). The whole
  DPxCP group exists as well. No group of size 1 is needed.
- Every sample is run on its own: its local_cp_size is the number of ranks
  whose list holds it; a size above 1 looks up the whole group (size G) or
  the created block of that size holding the rank (KeyError for another
  size), and the sample is split over it.

So there the rule is per sample, not per rank's first sample: every sample
on more than one rank must be held by exactly the runtime's group of its
size for that rank.
"""

import math
from typing import Dict, List, Optional, Sequence

# How dcpsched's refusal (UnschedulableError) of such a schedule begins.
REFUSAL_PREFIX = ("upstream returns a schedule its runtime cannot run: invariant 11 "
                  "(runtime groups): ")
# At most this many findings are listed per schedule.
MAX_FINDINGS = 8


def odd_group_refused(total_gpus: int) -> bool:
    """True if the runtime refuses this many DPxCP ranks for dynamic CP at start-up."""
    return total_gpus % 2 == 1


def created_sizes(total_gpus: int, min_cp_size: int = 1) -> List[int]:
    """The sizes of the aligned blocks created at start-up, smallest first
    (the whole group of G ranks comes on top). int(log2(G)) as the runtime
    computes it, in floating point."""
    if total_gpus < 1:
        return []
    return [1 << i for i in range(int(math.log2(total_gpus))) if (1 << i) >= min_cp_size]


def group_of(rank: int, size: int, total_gpus: int, min_cp_size: int = 1) -> Optional[range]:
    """The ranks of the group the runtime gives `rank` for local_cp_size
    `size`, or None where it has none (the lookup raises KeyError)."""
    if size == total_gpus:
        return range(total_gpus)
    if size not in created_sizes(total_gpus, min_cp_size):
        return None
    start = rank // size * size
    return range(start, min(start + size, total_gpus))


def _span(ranks: Sequence[int]) -> str:
    ranks = list(ranks)
    if not ranks:
        return "no ranks"
    if ranks == list(range(ranks[0], ranks[-1] + 1)):
        return f"rank {ranks[0]}" if len(ranks) == 1 else f"ranks {ranks[0]}-{ranks[-1]}"
    return "ranks " + ",".join(map(str, ranks))


def _created_text(total_gpus: int, min_cp_size: int) -> str:
    sizes = [str(s) for s in created_sizes(total_gpus, min_cp_size)]
    return ", ".join(sizes + [f"the whole {total_gpus}"])


def microbatch_violations(microbatch: Sequence[Sequence[int]], total_gpus: int,
                          min_cp_size: int = 1, index: int = 0) -> List[str]:
    """Where the runtime cannot run one microbatch (per rank, its ids),
    one finding per CP group (at its first rank); [] if it can."""
    holders: Dict[int, List[int]] = {}
    for rank, ids in enumerate(microbatch):
        for sample_id in ids:
            ranks = holders.setdefault(sample_id, [])
            if not ranks or ranks[-1] != rank:
                ranks.append(rank)
    found: List[str] = []
    reported = set()
    for rank, ids in enumerate(microbatch):
        if not ids:
            continue
        size = len(holders[ids[0]])
        group = group_of(rank, size, total_gpus, min_cp_size)
        if group is None:
            key = ("missing", tuple(holders[ids[0]]))
            if key not in reported:
                reported.add(key)
                found.append(
                    f"microbatch {index} {_span(holders[ids[0]])}: sample {ids[0]} has CP "
                    f"size {size}, and the runtime has no CP group of {size} ranks at "
                    f"G={total_gpus}, min_cp_size={min_cp_size} (it creates "
                    f"{_created_text(total_gpus, min_cp_size)}): the lookup raises KeyError")
            continue
        for sample_id in ids:
            if holders[sample_id] != list(group):
                key = ("mismatch", tuple(holders[sample_id]))
                if key not in reported:
                    reported.add(key)
                    found.append(
                        f"microbatch {index} rank {rank}: local_cp_size {size} gives the CP "
                        f"group of {_span(group)}, but sample {sample_id} is held by "
                        f"{_span(holders[sample_id])}")
                break
    return found


def violations(schedule: Sequence[Sequence[Sequence[int]]], total_gpus: int,
               min_cp_size: int = 1) -> List[str]:
    """Where the runtime cannot run `schedule` (per microbatch, per rank, the
    ids), at most MAX_FINDINGS; [] if every rank can run every microbatch.
    The groups are read as start-up would create them for any G: an odd G,
    which start-up refuses outright, is odd_group_refused()'s to say."""
    found: List[str] = []
    for index, microbatch in enumerate(schedule):
        found.extend(microbatch_violations(microbatch, total_gpus, min_cp_size, index))
        if len(found) >= MAX_FINDINGS:
            return found[:MAX_FINDINGS]
    return found


def names_runtime_groups(message: Optional[str]) -> bool:
    """True if a dcpsched error message ("Type: message" or the message
    alone) is the invariant-11 refusal."""
    if message is None:
        return False
    if message.startswith("UnschedulableError: "):
        message = message[len("UnschedulableError: "):]
    return message.startswith(REFUSAL_PREFIX)


def hybrid_created_sizes(total_gpus: int) -> List[int]:
    """The sizes of the aligned blocks main's create_hybrid_dp_cp_groups
    creates, smallest first (the whole group of G ranks comes on top):
    2^i for 1 <= i < int(log2(G)), int(log2(G)) in floating point as there."""
    if total_gpus < 1:
        return []
    return [1 << i for i in range(1, int(math.log2(total_gpus)))]


def hybrid_cp_violations(schedule: Sequence[Sequence[Sequence[int]]],
                         total_gpus: int) -> List[str]:
    """Where Megatron-LM main's hybrid-CP runtime cannot run `schedule` (per
    microbatch, per rank, the ids), at most MAX_FINDINGS, once per sample and
    microbatch; [] if every rank can run every sample it holds. An odd G,
    which start-up refuses outright, is odd_group_refused()'s to say."""
    found: List[str] = []
    sizes = hybrid_created_sizes(total_gpus)
    created = ", ".join([str(s) for s in sizes] + [f"the whole {total_gpus}"])
    for index, microbatch in enumerate(schedule):
        holders: Dict[int, List[int]] = {}
        for rank, ids in enumerate(microbatch):
            for sample_id in ids:
                ranks = holders.setdefault(sample_id, [])
                if not ranks or ranks[-1] != rank:
                    ranks.append(rank)
        for sample_id, ranks in holders.items():
            size = len(ranks)
            if size == 1 or size == total_gpus:
                continue
            if size not in sizes:
                found.append(
                    f"microbatch {index} {_span(ranks)}: sample {sample_id} has CP size "
                    f"{size}, and main's hybrid-CP runtime has no group of {size} ranks at "
                    f"G={total_gpus} (it creates {created}): the lookup raises KeyError")
            else:
                start = ranks[0] // size * size
                if ranks != list(range(start, start + size)):
                    found.append(
                        f"microbatch {index}: sample {sample_id} is held by {_span(ranks)}, "
                        f"not by one of the aligned groups of {size} ranks main's "
                        "hybrid-CP runtime creates")
            if len(found) >= MAX_FINDINGS:
                return found
    return found
