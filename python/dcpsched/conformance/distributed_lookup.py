"""The runtime's CP group lookup in the distributed harness, one step past run().

On each rank (run_lookups), every microbatch run() yielded, of every VPP
stage, goes where a training step sends it: the data rank (TP rank 0) reads
its local_cp_size and looks its CP group up with the checkout's
get_dynamic_data_context_parallel_groups (runtime_upstream.py); then, if
every rank's lookup succeeded and every data rank's microbatch can be split
on CPU (the ranks agree first, with a collective, so a rank that would
raise leaves no TP sibling waiting in a broadcast), every rank calls the
checkout's get_batch_on_this_rank_for_sequence_packing with it, which looks
the group up again and splits the rank's samples over it. The split of a
CP group of c > 1 ranks is Transformer Engine's zigzag, which needs every
padded length divisible by 2c (the CPU stand-in,
cpu_shims.thd_zigzag_indices, refuses others): a microbatch that is not
is looked up but not split ("get_batch_skipped"). Each microbatch's entry records the size, the group's DPxCP ranks (or
the KeyError), the DPxCP ranks of each sample the schedule gave this rank
("holders", data ranks), and what get_batch returned (records.py's form:
tensors bit for bit, the CP group as DPxCP ranks) or raised.

In the parent (failures), a rank can run its microbatch only if its lookup
succeeded and the group is exactly the ranks of every sample its data rank
holds in the schedule; failures() lists where that does not hold.
group_mismatches() checks the groups against a schedule the harness knows
on its own (the cost-aware mode's expected schedule), not the one the
ranks' scheduler returned.
"""

import types
from typing import List, Optional

from dcpsched.conformance import records, runtime_groups

LOOKUP = "lookup"


def _dcp_ranks(group, dcp_ranks) -> List[int]:
    import torch.distributed as dist  # pylint: disable=import-outside-toplevel
    return [dcp_ranks.index(g) for g in dist.get_process_group_ranks(group)]


def _of_value(value, dcp_ranks):
    import torch.distributed as dist  # pylint: disable=import-outside-toplevel
    if isinstance(value, dist.ProcessGroup):
        return {"group": _dcp_ranks(value, dcp_ranks)}
    if value is None or isinstance(value, (bool, int, float, str)):
        return records.value(value)
    if hasattr(value, "__dict__") and not hasattr(value, "dtype"):
        return {key: _of_value(item, dcp_ranks) for key, item in sorted(vars(value).items())}
    return records.value(value)


# What a rank's lookup left: get_batch can run, or not (why), for all ranks.
LOOKUP_FAILED, NOT_SPLITTABLE, RUNNABLE = 0, 1, 2


def _least_of_all_ranks(state: int) -> int:
    """The smallest `state` any rank has (a collective over every rank)."""
    import torch  # pylint: disable=import-outside-toplevel
    import torch.distributed as dist  # pylint: disable=import-outside-toplevel
    states = [torch.zeros(1) for _ in range(dist.get_world_size())]
    dist.all_gather(states, torch.tensor([float(state)]))
    return min(int(s.item()) for s in states)


def _splittable(batch, size) -> bool:
    """True if the zigzag split over `size` ranks is defined for the batch."""
    if size <= 1:
        return True
    bounds = [int(x) for x in batch["cu_seqlens_padded"].tolist()]
    return all((end - start) % (2 * size) == 0 for start, end in zip(bounds, bounds[1:]))


def run_lookups(runtime, stages, count, vpp, groups, schedule, config) -> List[dict]:
    """Every microbatch (count per stage; stages: per VPP stage the
    microbatches run() yielded on this data rank, None on a TP sibling)
    through the group lookup and get_batch; one entry per microbatch.
    schedule: the variant's schedule (data ranks), for the holders.
    Collective: every rank calls it with the same count and vpp."""
    import torch.distributed as dist  # pylint: disable=import-outside-toplevel
    dcp_ranks = dist.get_process_group_ranks(groups["dp_cp"])
    me = groups["dp_cp"].rank()
    lookup = runtime.parallel_state.get_dynamic_data_context_parallel_groups
    pg = types.SimpleNamespace(tp=groups["tp"], pp=groups["pp"], cp=groups["dp_cp"])
    entries = []
    for stage in range(vpp or 1):
        for index in range(count):
            batch = stages[stage][index] if stages is not None else None
            entry = {"stage": stage, "microbatch": index}
            state = RUNNABLE
            if batch is not None:
                size = int(batch["local_cp_size"])
                entry["local_cp_size"] = size
                if schedule is not None and index < len(schedule):
                    microbatch = schedule[index]
                    entry["holders"] = [[sample, [r for r, ids in enumerate(microbatch)
                                                  if sample in ids]]
                                        for sample in microbatch[me]]
                try:
                    entry["group"] = _dcp_ranks(lookup(group_size=size), dcp_ranks)
                except KeyError as error:
                    entry["lookup_error"] = f"KeyError: {error}"
                    state = LOOKUP_FAILED
                if state == RUNNABLE and not _splittable(batch, size):
                    state = NOT_SPLITTABLE
            least = _least_of_all_ranks(state)
            if least == NOT_SPLITTABLE:
                entry["get_batch_skipped"] = ("a padded length not divisible by 2 x "
                                              "local_cp_size on some rank (TE's zigzag needs it)")
            if least == RUNNABLE:
                try:
                    result = runtime.get_batch(
                        iter([batch]) if batch is not None else None, vpp_size=vpp,
                        mtp_on_this_rank=False, vp_stage=stage if vpp else None,
                        dynamic_cp=True, pg_collection=pg, config=config)
                    entry["get_batch"] = [_of_value(item, dcp_ranks) for item in result]
                except Exception as error:  # pylint: disable=broad-except
                    entry["get_batch"] = records.of_error(error)
            else:
                entry["get_batch"] = None  # not run: see above, or some rank's lookup failed
            entries.append(entry)
    return entries


def _group_got(entry) -> Optional[List[int]]:
    """The DPxCP ranks of the group get_batch split over, else the lookup's."""
    result = entry.get("get_batch")
    if isinstance(result, list) and len(result) > 5 and isinstance(result[5], dict):
        group = result[5].get("cp_group")
        if isinstance(group, dict) and "group" in group:
            return group["group"]
    return entry.get("group")


def _span(ranks) -> str:
    return runtime_groups._span(ranks)  # pylint: disable=protected-access


def failures(per_rank_entries, tp: int, limit: int = 4) -> List[str]:
    """Where a rank cannot run its microbatch, from every rank's entries
    (per_rank_entries[rank], run_lookups' lists): the lookup raised, or the
    group is not the ranks of every sample its data rank holds; at most
    `limit` lines, the count of the rest last."""
    found = []
    for rank, entries in enumerate(per_rank_entries):
        data = per_rank_entries[rank - rank % tp]
        for entry, theirs in zip(entries, data):
            where = f"rank {rank} stage {entry['stage']} microbatch {entry['microbatch']}"
            if "lookup_error" in entry:
                found.append(f"{where}: local_cp_size {entry['local_cp_size']}: the lookup "
                             f"raises {entry['lookup_error']}")
                continue
            group = _group_got(entry)
            if group is None:
                if entry.get("get_batch") is None:
                    continue  # another rank's lookup failed: reported there
                found.append(f"{where}: get_batch gave no CP group: "
                             f"{str(entry['get_batch'])[:160]}")
                continue
            for sample, holders in theirs.get("holders", []):
                if holders != group:
                    found.append(f"{where}: local_cp_size {len(group)}: the CP group is "
                                 f"{_span(group)}, but sample {sample} is held by "
                                 f"{_span(holders)}")
                    break
            result = entry.get("get_batch")
            if isinstance(result, dict) and "error" in result:
                found.append(f"{where}: get_batch raises {result['error']}: "
                             f"{result['message'][:160]}")
    if len(found) > limit:
        return found[:limit] + [f"... and {len(found) - limit} more"]
    return found


def schedule_of(per_rank_ids, tp: int):
    """The whole schedule from the data ranks' "ids" (per microbatch, this
    rank's ids): DPxCP rank d is global rank d * tp. None if any is missing."""
    data = per_rank_ids[::tp]
    if any(ids is None for ids in data) or not data:
        return None
    return [[data[d][m] for d in range(len(data))] for m in range(len(data[0]))]


def _implied_group(microbatch, dcp_rank) -> Optional[List[int]]:
    """The DPxCP ranks holding the first sample `dcp_rank` holds in the
    microbatch (per rank, its ids): the group its local_cp_size must look up;
    None for a rank with no sample."""
    mine = microbatch[dcp_rank]
    if not mine:
        return None
    return [rank for rank, ids in enumerate(microbatch) if mine[0] in ids]


def group_mismatches(per_rank_entries, schedule, tp: int, vpp: Optional[int],
                     limit: int = 4):
    """(findings, entries confirmed): where a rank's entries (run_lookups'
    lists, per global rank) are not one per microbatch of `schedule` and VPP
    stage (vpp: the stages, None for one), or the group the rank's lookup or
    get_batch found is not the one `schedule` implies for its DPxCP rank
    (global rank // tp); and how many entries found exactly that group. An
    entry without a group (its lookup raised, or a TP sibling whose
    get_batch did not run) is failures()'s to report, not counted."""
    found, confirmed = [], 0
    for rank, entries in enumerate(per_rank_entries):
        wanted = [(stage, index) for stage in range(vpp or 1) for index in range(len(schedule))]
        if [(entry["stage"], entry["microbatch"]) for entry in entries] != wanted:
            found.append(f"rank {rank}: {len(entries)} microbatches looked up, the schedule "
                         f"has {len(schedule)} in each of {vpp or 1} stage(s)")
            continue
        for entry in entries:
            implied = _implied_group(schedule[entry["microbatch"]], rank // tp)
            group = _group_got(entry)
            if implied is None or group is None:
                continue
            if group != implied:
                found.append(f"rank {rank} stage {entry['stage']} microbatch "
                             f"{entry['microbatch']}: the lookup found the CP group of "
                             f"{_span(group)}, the schedule implies {_span(implied)}")
            else:
                confirmed += 1
    if len(found) > limit:
        found = found[:limit] + [f"... and {len(found) - limit} more"]
    return found, confirmed
