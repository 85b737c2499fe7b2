"""One process of the step check (distributed_step.py starts W = G x P of them).

    python3 -m dcpsched.conformance.distributed_step_rank JOB_FILE PROCESS

Process PROCESS = p * G + r is DPxCP rank r on pipeline rank p (Megatron-LM's
rank order with tp 1: the DPxCP ranks fastest, then pipeline). JOB_FILE
(JSON, written by distributed_step.py) gives G, P, min_cp_size, the
rendezvous file, the deadline and, per process, its ops in its pipeline
rank's order (docs/runtime_step.md), each with the microbatch, the chunk,
forward or backward, its CP group (first DPxCP rank and size; none where the
rank holds no sample), its scaled duration in seconds, and the process it
receives its input from and sends its output to (with the message tag), if
any.

The process joins the gloo group, then creates the dynamic-CP groups the way
Megatron-LM's start-up does (create_dynamic_dp_cp_groups: for every pipeline
rank, its whole DPxCP group, then every aligned block of every size
runtime_groups.created_sizes gives, smallest size first; every process
creates every group in the same order) and exchanges one warm-up message on
each group and pipeline link it uses. After a barrier, process 0 names a
start instant a little ahead and every process waits for it. Then, for each
op in order:

1. receive the op's input (a blocking recv from the previous stage for a
   forward, from the next for a backward) where the op has one;
2. if the rank holds samples in the microbatch: look the CP group up by its
   local_cp_size as the runtime does (the whole DPxCP group for size G,
   else this rank's created block of that size; a size never created is a
   KeyError), check that it is the schedule's CP group, and exchange a ring
   message in it: c - 1 steps of send-to-next, receive-from-previous (ring
   attention's pattern), so no member goes on before every member of the
   group has arrived;
3. wait the op's duration (a timed sleep from the end of the exchange);
4. send the output to the next stage (forward) or the previous (backward)
   with a non-blocking isend, completed after the last op.

With "barrier_each_microbatch" (Megatron-LM main's legacy runtime, P = 1)
the DPxCP ranks also wait for each other after every microbatch.

The process writes PROCESS.json beside the job file: the start instant,
its finish (the end of its last op, seconds after the start), each op's
times (received, exchanged, ended), the ring exchanges (and the CP sizes
looked up) and the stage messages it made. Every message carries who sent it for which op, and is
checked on arrival.
"""

import datetime
import faulthandler
import json
import os
import pathlib
import sys
import time
import traceback

import torch
import torch.distributed as dist

from dcpsched.conformance import runtime_groups

# The start instant is this far past the moment process 0 names it.
START_AHEAD_SECONDS = 0.3
# Ring messages are tagged op index * RING_TAG_STRIDE + step.
RING_TAG_STRIDE = 1 << 16
# Tag of the warm-up messages (stage links on the world group, rings on theirs).
WARM_UP_TAG = (1 << 30) + 1


def start_groups(total, stages, min_cp_size):
    """(this process's whole DPxCP group, {size: its block of that size},
    every created group in creation order as (ranks, the group or None where
    this process is not in it)), creating every group of every pipeline rank
    in the same order on every process (new_group is collective)."""
    me = dist.get_rank()
    whole, blocks, created = None, {}, []
    for p in range(stages):
        ranks = [p * total + r for r in range(total)]
        group = dist.new_group(ranks)
        created.append((ranks, group if me in ranks else None))
        if me in ranks:
            whole = group
        for size in runtime_groups.created_sizes(total, min_cp_size):
            for start in range(0, total, size):
                block = ranks[start:start + size]
                group = dist.new_group(block)
                created.append((block, group if me in block else None))
                if me in block:
                    blocks[size] = group
    return whole, blocks, created


def lookup(whole, blocks, total, size):
    """The group the runtime hands a rank for local_cp_size `size`
    (get_dynamic_data_context_parallel_groups): the whole DPxCP group for
    size G, else the created block; KeyError for a size never created."""
    if size == total:
        return whole
    return blocks[size]


def _ring(group, members, tag_base, note):
    """len(members) - 1 steps of ring exchange in `group` (members: global
    ranks in group order); returns the members heard from (each message
    carries its origin), which must be all the others."""
    me = dist.get_rank()
    size = len(members)
    index = members.index(me)
    after, before = members[(index + 1) % size], members[(index - 1) % size]
    carried = torch.tensor([me, note], dtype=torch.int64)
    heard = set()
    for step in range(size - 1):
        incoming = torch.zeros(2, dtype=torch.int64)
        work = dist.isend(carried, dst=after, group=group, tag=tag_base + step)
        dist.recv(incoming, src=before, group=group, tag=tag_base + step)
        work.wait()
        if int(incoming[1]) != note:
            raise RuntimeError(f"ring message of op {int(incoming[1])} arrived in op {note}")
        heard.add(int(incoming[0]))
        carried = incoming
    return heard


def _warm_up(created, links):
    """One exchange on every created group this process is in (in creation
    order, so every process meets its partners in the same order) and on
    every stage link (every send posted before any receive)."""
    me = dist.get_rank()
    for ranks, group in created:
        if group is not None and len(ranks) > 1:
            _ring(group, ranks, WARM_UP_TAG, -1)
    out = torch.tensor([me], dtype=torch.int64)
    sends = [dist.isend(out, dst=peer, tag=WARM_UP_TAG) for peer in sorted(links)]
    for peer in sorted(links):
        incoming = torch.zeros(1, dtype=torch.int64)
        dist.recv(incoming, src=peer, tag=WARM_UP_TAG)
        if int(incoming) != peer:
            raise RuntimeError(f"warm-up: process {peer}'s message carries {int(incoming)}")
    for work in sends:
        work.wait()
    dist.barrier()


def _sleep_until(instant):
    while True:
        left = instant - time.time()
        if left <= 0:
            return
        time.sleep(left)


def run_ops(job, process, whole, blocks):
    """Runs this process's ops from a common start; returns its record."""
    total = job["total_gpus"]
    ops = job["ops"][process]
    pipeline_rank = process // total
    start = torch.tensor([time.time() + START_AHEAD_SECONDS], dtype=torch.float64)
    dist.broadcast(start, src=0)
    start = float(start.item())
    _sleep_until(start)
    pending, times = [], []
    rings = messages = 0
    sizes = set()
    last_microbatch = None
    for index, op in enumerate(ops):
        if job["barrier_each_microbatch"] and last_microbatch not in (None, op["microbatch"]):
            dist.barrier(group=whole)
        last_microbatch = op["microbatch"]
        if op["recv"] is not None:
            source, tag = op["recv"]
            incoming = torch.zeros(4, dtype=torch.int64)
            dist.recv(incoming, src=source, tag=tag)
            if incoming.tolist() != [source, op["microbatch"], int(op["forward"]), tag]:
                raise RuntimeError(f"op {index}: expected the output of process {source} for "
                                   f"microbatch {op['microbatch']} (tag {tag}), got "
                                   f"{incoming.tolist()}")
            messages += 1
        received = time.time()
        if op["cp"] is not None:
            first, size = op["cp"]
            members = [pipeline_rank * total + first + i for i in range(size)]
            if size > 1:
                try:
                    group = lookup(whole, blocks, total, size)
                except KeyError as error:
                    raise RuntimeError(
                        f"op {index} (microbatch {op['microbatch']}): the runtime's lookup "
                        f"for local_cp_size {size} raises KeyError: {error}: start-up "
                        f"created groups of {sorted(blocks)} and the whole {total}") from None
                if dist.get_process_group_ranks(group) != members:
                    raise RuntimeError(f"op {index}: the runtime's lookup for local_cp_size "
                                       f"{size} gives {dist.get_process_group_ranks(group)}, "
                                       f"the schedule's CP group is {members}")
                heard = _ring(group, members, index * RING_TAG_STRIDE, index)
                if heard != set(members) - {process}:
                    raise RuntimeError(f"op {index}: the ring reached {sorted(heard)} of "
                                       f"{members}")
                rings += 1
                sizes.add(size)
        exchanged = time.time()
        _sleep_until(exchanged + op["seconds"])
        ended = time.time()
        if op["send"] is not None:
            target, tag = op["send"]
            out = torch.tensor([process, op["microbatch"], int(op["forward"]), tag],
                               dtype=torch.int64)
            pending.append((dist.isend(out, dst=target, tag=tag), out))
        times.append([received - start, exchanged - start, ended - start])
    finish = times[-1][2] if times else 0.0
    for work, _ in pending:
        work.wait()
    if job["barrier_each_microbatch"] and ops:
        dist.barrier(group=whole)
    return {"process": process, "start": start, "finish": finish, "times": times,
            "rings": rings, "ring_sizes": sorted(sizes), "messages_received": messages,
            "messages_sent": len(pending)}


def main(argv):
    """Runs one process (argv: JOB_FILE PROCESS); returns the exit status."""
    job_file, process = pathlib.Path(argv[0]), int(argv[1])
    job = json.loads(job_file.read_text())
    faulthandler.dump_traceback_later(max(1.0, job["timeout"] * 0.8), exit=False)
    total, stages = job["total_gpus"], job["pipeline_stages"]
    dist.init_process_group("gloo", init_method=f"file://{job['rendezvous']}", rank=process,
                            world_size=total * stages,
                            timeout=datetime.timedelta(seconds=job["timeout"]))
    whole, blocks, created = start_groups(total, stages, job["min_cp_size"])
    links = {op[key][0] for op in job["ops"][process] for key in ("recv", "send")
             if op[key] is not None}
    _warm_up(created, links)
    record = run_ops(job, process, whole, blocks)
    record["torch"] = torch.__version__
    (job_file.parent / f"{process}.json").write_text(json.dumps(record))
    dist.barrier()
    faulthandler.cancel_dump_traceback_later()
    return 0


def process_main(job_file, process, log_path):
    """The target of a process distributed_step.py starts: main, its output
    into log_path."""
    sys.dont_write_bytecode = True
    log = os.open(log_path, os.O_WRONLY | os.O_APPEND)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    sys.exit(run([job_file, str(process)]))


def run(argv):
    """main(argv), with an exception printed and exit status 3."""
    try:
        return main(argv)
    except Exception:  # pylint: disable=broad-except
        traceback.print_exc()
        return 3


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
