"""One rank of the distributed harness (a process distributed.py starts).

    python3 -m dcpsched.conformance.distributed_rank JOB_FILE RANK

JOB_FILE (JSON, written by distributed.py) names the checkout, the drop-in
file, the world size, the rendezvous file and the cases. The rank joins the
gloo process group, builds the groups upstream's run() takes (Megatron-LM's
rank order, tp fastest, then cp, then dp; pp 1), loads upstream's pipeline
(pipeline_upstream.py), installs the CPU shims (cpu_shims.py) and runs every
case twice through upstream's wrap_data_iterator: with upstream's
DefaultDynamicCPScheduler, then with the drop-in's (its
install_into_megatron()). It writes, per case and variant, what this rank
received (records.py) to RANK.json in the job's directory, then, one step
past run(), what the runtime's CP group lookup and
get_batch_on_this_rank_for_sequence_packing made of every microbatch
("lookup": distributed_lookup.py, with the checkout's own parallel_state,
runtime_upstream.py; at an odd G the reason start-up refuses instead), with
the measurements (never compared): the call's wall time until it returns
(run_seconds) and the time in the scheduler's get_groups_and_subsamples
(scheduler_seconds). With the job's "timing" set, the ranks meet at a
barrier before each call.

A case in which the pipeline raises is recorded as that error; then every
rank must have raised (checked with a collective before the next case), or
the rank stops: the ranks are out of step and the run cannot go on.

With the job's "cost_aware" ({"profile": P}) upstream's scheduler is not
run: the drop-in is installed twice, install_into_megatron(cost_profile=P)
and the same with only_where_upstream_fails=True (distributed_cases'
COST_AWARE_VARIANTS), and each case runs first the schedules the harness
expects (the case's "cost_aware" "references", each through upstream's
run() by a scheduler that returns it as given: the record every rank must
equal, bit for bit), then each variant, looked up as above.
"""

import copy
import datetime
import faulthandler
import importlib.util
import json
import pathlib
import sys
import time
import traceback
import types

import torch
import torch.distributed as dist

from dcpsched.conformance import (cpu_shims, distributed_cases, distributed_lookup,
                                  pipeline_upstream, records, runtime_upstream)

UPSTREAM, DROP_IN = "upstream", "drop_in"
# The cost-aware mode's runs of a given schedule: "reference 0", "reference 1".
REFERENCE = "reference"


def _groups(world, tp, cp):
    """This rank's tp, dp, dp x cp and pp groups; every rank creates every
    group in the same order (new_group is collective)."""
    rank = dist.get_rank()
    dp = world // (tp * cp)
    mine = {}
    for c in range(cp):
        for t in range(tp):
            ranks = [t + tp * (c + cp * d) for d in range(dp)]
            group = dist.new_group(ranks)
            if rank in ranks:
                mine["dp"] = group
    for t in range(tp):
        ranks = [t + tp * i for i in range(cp * dp)]
        group = dist.new_group(ranks)
        if rank in ranks:
            mine["dp_cp"] = group
    for i in range(cp * dp):
        ranks = [t + tp * i for t in range(tp)]
        group = dist.new_group(ranks)
        if rank in ranks:
            mine["tp"] = group
    for r in range(world):
        group = dist.new_group([r])
        if r == rank:
            mine["pp"] = group
    return mine


def _samples(case, dp_rank):
    """This DP rank's iterator items: dicts of upstream's keys, per sample
    deterministic in (case seed, dp rank, position)."""
    items = []
    number = 0
    for item in case["items"][dp_rank]:
        samples = []
        for padded in item:
            original = max(1, padded - (case["seed"] + dp_rank + number) % 3)
            base = (case["seed"] % 50000) + 1000 * dp_rank + 7 * number
            tokens = (torch.arange(padded, dtype=torch.int64) * 31 + base) % 50257
            loss_mask = torch.ones(padded, dtype=torch.float32)
            loss_mask[original:] = 0
            samples.append({
                "tokens": tokens,
                "labels": torch.roll(tokens, -1),
                "loss_mask": loss_mask,
                "position_ids": torch.arange(padded, dtype=torch.int64),
                "original_seq_len": torch.tensor([original], dtype=torch.int32),
                "padded_seq_len": torch.tensor([padded], dtype=torch.int32),
            })
            number += 1
        items.append(samples[0] if len(samples) == 1 and number % 2 else samples)
    return iter(items)


def _config(case):
    return types.SimpleNamespace(
        sequence_packing_scheduler="default_dynamic_cp",
        max_seqlen_per_dp_cp_rank=case["max_seqlen_per_dp_cp_rank"],
        min_dynamic_context_parallel_size=case["min_cp_size"],
        virtual_pipeline_model_parallel_size=case["vpp"],
        microbatch_group_size_per_vp_stage=case["microbatch_group_size_per_vp_stage"],
        thd_max_packed_sequences=case["thd_max_packed_sequences"],
        pad_packed_seq_alignment=None,
        mtp_num_layers=None)


def _counting(cls, calls):
    """cls, counting its get_groups_and_subsamples calls, keeping the last
    schedule (the harness's check that the variant's scheduler ran) and the
    batch it got (_batch_as_generated), and timing each call (perf_counter,
    the timing mode's scheduler time)."""
    class Counted(cls):  # pylint: disable=too-few-public-methods
        def get_groups_and_subsamples(self, sample_id_seqlens):
            started = time.perf_counter()
            groups = super().get_groups_and_subsamples(sample_id_seqlens)
            calls.append((cls.__qualname__, groups, time.perf_counter() - started,
                          sample_id_seqlens))
            return groups
    return Counted


def _given(base, schedule):
    """`base` (upstream's DefaultDynamicCPScheduler) returning `schedule` for
    every batch: the cost-aware mode's reference run, upstream's run()
    gathering, rerouting and packing exactly the schedule the harness
    expects."""
    class GivenSchedule(base):  # pylint: disable=too-few-public-methods
        def get_groups_and_subsamples(self, sample_id_seqlens):
            return copy.deepcopy(schedule)
    return GivenSchedule


def _batch_as_generated(case, calls):
    """Whether the batch the scheduler got is the case's global batch as the
    harness generated it (distributed_cases.global_batch: the parent's
    expected schedules are of that batch); None where no scheduler ran."""
    if not calls:
        return None
    got = [[int(sample), int(length)] for sample, length in calls[-1][3]]
    return got == [list(pair) for pair in distributed_cases.global_batch(case)]


def _run_case(pipeline, scheduler_cls, case, groups, timing, kept):
    """One wrap_data_iterator call; returns this rank's record and the
    variant's schedule (None on a TP sibling), appending the microbatches
    yielded to `kept` (records.of_result). With `timing` every rank starts
    the call after a barrier (so the slowest rank's time is the call's)."""
    rank = dist.get_rank()
    tp, cp = case["tp"], case["cp"]
    tp_rank = rank % tp
    dp_rank = rank // (tp * cp)
    data = _samples(case, dp_rank) if tp_rank == 0 else None
    if case["vpp"]:
        data = [data] + [None] * (case["vpp"] - 1) if data is not None else [None] * case["vpp"]
    calls = []
    pipeline.scheduler_map["default_dynamic_cp"] = _counting(scheduler_cls, calls)
    pg = types.SimpleNamespace(dp=groups["dp"], dp_cp=groups["dp_cp"], tp=groups["tp"],
                               pp=groups["pp"])
    if timing:
        dist.barrier()
    started = time.perf_counter()
    run_seconds = None
    try:
        result = pipeline.wrap_data_iterator(data, _config(case), case["num_microbatches"],
                                             pg_collection=pg)
        run_seconds = time.perf_counter() - started
        record = records.of_result(result, kept)
    except pipeline_upstream.MissingStandIn:
        raise
    except Exception as error:  # pylint: disable=broad-except
        record = records.of_error(error)
        print(f"rank {rank}: case {case['index']}: {type(error).__name__}: {error}",
              file=sys.stderr, flush=True)
    record["seconds"] = time.perf_counter() - started
    record["run_seconds"] = run_seconds if run_seconds is not None else record["seconds"]
    record["scheduler_seconds"] = sum(call[2] for call in calls)
    record["scheduler_calls"] = [call[0] for call in calls]
    record["batch_as_generated"] = _batch_as_generated(case, calls)
    dcp_rank = groups["dp_cp"].rank()
    schedule = calls[-1][1] if calls and not isinstance(calls[-1][1], Exception) else None
    record["ids"] = [mb[dcp_rank] for mb in schedule] if schedule is not None else None
    return record, schedule


def _lookups(runtime, case, groups, created, record, kept, schedule):
    """The lookup record of one answered case (distributed_lookup.py), or
    why it did not run (start-up refuses an odd G). Collective."""
    if isinstance(created, str):
        return {"not_run": created}
    problem = runtime_upstream.use_groups(runtime, created, groups["dp_cp"])
    if problem:
        raise RuntimeError(problem)
    count = int(record["num_micro_batches"]["repr"])
    stages = kept if kept else None
    return distributed_lookup.run_lookups(runtime, stages, count, case["vpp"], groups,
                                          schedule, _config(case))


def _in_step(raised):
    """All ranks raised, or none: else the run stops."""
    flags = [torch.zeros(1) for _ in range(dist.get_world_size())]
    dist.all_gather(flags, torch.tensor([1.0 if raised else 0.0]))
    return len({int(f.item()) for f in flags}) == 1


def _load_drop_in(path):
    spec = importlib.util.spec_from_file_location("dcpsched_conformance_drop_in", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _installed(install, pipeline, theirs, call):
    """install() (the drop-in's install_into_megatron, with its arguments),
    checked: it must register a subclass of the checkout's
    DefaultDynamicCPScheduler. `call` names it in the error."""
    ours = install()
    if ours is theirs or not issubclass(ours, pipeline.loaded.dynamic_cp_scheduler):
        raise RuntimeError(f"{call} did not register a subclass of the checkout's "
                           "DefaultDynamicCPScheduler")
    return ours


def _schedulers(job, pipeline, theirs, drop_in):
    """{variant: scheduler class}: upstream's and the drop-in's, or, in the
    cost-aware mode, the drop-in's two cost-aware variants."""
    if "cost_aware" not in job:
        return {UPSTREAM: theirs, DROP_IN: _installed(drop_in.install_into_megatron, pipeline,
                                                      theirs, "install_into_megatron()")}
    profile = job["cost_aware"]["profile"]
    classes = {}
    for variant in distributed_cases.COST_AWARE_VARIANTS:
        fallback = variant == distributed_cases.FALLBACK
        classes[variant] = _installed(
            lambda fallback=fallback: drop_in.install_into_megatron(
                cost_profile=profile, only_where_upstream_fails=fallback),
            pipeline, theirs, f"install_into_megatron(cost_profile={profile!r}, "
                              f"only_where_upstream_fails={fallback})")
    return classes


def _runs(case, schedulers, theirs):
    """(name, scheduler class, look up?) of the case's wrap_data_iterator
    calls, in order: every variant; in the cost-aware mode the references
    (upstream's class returning the expected schedule) first, not looked
    up."""
    expected = case.get("cost_aware")
    references = expected["references"] if expected else []
    runs = [(f"{REFERENCE} {index}", _given(theirs, schedule), False)
            for index, schedule in enumerate(references)]
    return runs + [(variant, cls, True) for variant, cls in schedulers.items()]


def main(argv):
    """Runs this rank's cases (argv: JOB_FILE RANK); returns the exit status
    (4: the ranks went out of step)."""
    job_file, rank = pathlib.Path(argv[0]), int(argv[1])
    job = json.loads(job_file.read_text())
    out = job_file.parent / f"{rank}.json"
    world = job["world"]
    # A rank still running near the deadline prints where it is (the
    # harness shows the output of the ranks it ends).
    faulthandler.dump_traceback_later(max(1.0, job["collective_timeout"] * 0.6), exit=False)
    dist.init_process_group("gloo", init_method=f"file://{job['rendezvous']}", rank=rank,
                            world_size=world,
                            timeout=datetime.timedelta(seconds=job["collective_timeout"]))
    shims = cpu_shims.install()
    pipeline = pipeline_upstream.load(job["megatron"])
    theirs = pipeline.scheduler_map["default_dynamic_cp"]
    runtime = runtime_upstream.load(job["megatron"], pipeline)
    shims = shims + runtime.shims
    schedulers = _schedulers(job, pipeline, theirs, _load_drop_in(job["drop_in"]))
    group_cache = {}
    dynamic_cache = {}  # (tp, cp, min_cp) -> start_groups' answer
    classes = {variant: cls.__qualname__ for variant, cls in schedulers.items()}
    if "cost_aware" in job:
        classes[REFERENCE] = _given(theirs, []).__qualname__
    results = {"rank": rank, "shims": shims, "stand_ins": list(pipeline_upstream.STAND_INS),
               "torch": torch.__version__, "cases": [], "classes": classes}
    for case in job["cases"]:
        key = (case["tp"], case["cp"])
        if key not in group_cache:
            group_cache[key] = _groups(world, case["tp"], case["cp"])
        timing = job.get("timing", False)
        dynamic_key = key + (case["min_cp_size"],)
        if not timing and dynamic_key not in dynamic_cache:
            dynamic_cache[dynamic_key] = runtime_upstream.start_groups(
                runtime, world, case["tp"], case["min_cp_size"])
        entry = {"index": case["index"]}
        for variant, cls, looked_up in _runs(case, schedulers, theirs):
            kept = []
            record, schedule = _run_case(pipeline, cls, case, group_cache[key], timing, kept)
            entry[variant] = record
            if not _in_step("error" in record):
                results["stopped"] = (f"case {case['index']}, {variant}: the ranks are out of "
                                      "step (some raised, some did not)")
                results["cases"].append(entry)
                out.write_text(json.dumps(results))
                return 4
            if looked_up and not timing and "error" not in record:
                record["lookup"] = _lookups(runtime, case, group_cache[key],
                                            dynamic_cache[dynamic_key], record, kept, schedule)
        results["cases"].append(entry)
    pipeline.scheduler_map["default_dynamic_cp"] = theirs
    out.write_text(json.dumps(results))
    dist.barrier()
    return 0


def run(argv):
    """main(argv), with an exception printed and exit status 3."""
    try:
        return main(argv)
    except Exception:  # pylint: disable=broad-except
        traceback.print_exc()
        return 3


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
