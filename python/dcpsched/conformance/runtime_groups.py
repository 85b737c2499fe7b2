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
