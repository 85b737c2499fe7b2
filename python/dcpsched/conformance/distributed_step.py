"""The step check: the runtime step model (docs/runtime_step.md) against real
processes that keep its dependency rules.

run_step_check() runs one schedule on W = G x P gloo processes, process
p * G + r being DPxCP rank r on pipeline rank p (distributed_step_rank.py),
started from the distributed harness's forkserver (distributed.py). Each
process runs its pipeline rank's ops in Megatron-LM's order (stage_order(),
written here from docs/runtime_step.md); for each op it receives the op's
input from the previous stage (forward) or the next (backward) over
point-to-point where the op has one, exchanges a ring message in the CP
group the runtime's lookup hands it (the dynamic-CP groups created at
start-up as Megatron-LM creates them; runtime_groups.py's rule) where it
holds samples (c - 1 steps of send-to-next, receive-from-previous in a
group of c, so no member goes on before all have arrived), waits the op's modelled duration times `scale` (a timed
sleep), and sends its output on with a non-blocking isend. Nothing else
makes a process wait, so the measured step (from a common start instant to
the last process's end) shows whether the model's rules (which ranks start
together, what waits for what, in which order) are the ones these
processes obey, up to the messages' latency, which the scale makes small
(every op lasts at least MIN_OP_SECONDS).

The schedule comes as

- a compact run document (`dcpsched schedule ... --cost-profile NAME --pp P
  --format json --compact`, dcpsched.schedule_run.v2): each CP group's
  `seconds_per_rank`, the runtime configuration and the model's step
  (`quality.runtime.step_seconds`) and barrier step
  (`quality.gpu_time.step_seconds`) are read from it; or
- a schedule file (dcpsched.schedule.v1) with a cost profile and the
  runtime options: each group's seconds by the Python reading of the cost
  model (dcpsched.cost_model, which agrees with the core's), the model's and
  the barrier step by `dcpsched verify FILE --cost-profile NAME --pp P ...`
  (the barrier step is checked against the Python seconds, so the processes
  wait the times the model uses).

The check: |measured / model - 1| <= TOLERANCE (10 %); and where the model
and the barrier model (every microbatch waits for its slowest rank:
quality.gpu_time's step, one layer, times L) differ by more than APART (20 %
of the model), the measured step must be more than TOLERANCE away from the
barrier model too. The step of simulate() (this module's own event-by-event
reading of docs/runtime_step.md) must equal the model's. A process that
fails or passes the deadline ends the run: NOT CHECKED (status 3).

    python3 -m dcpsched.conformance.distributed_step FILE [--cost-profile NAME]
        [--pp P] [--virtual-stages V] [--layers-per-stage L] [--forward-share F]
        [--runtime dev|legacy] [--ranks-as dev|legacy] [--scale S]
        [--target-seconds T] [--timeout S] [--dcpsched PATH]

Exit status: 0 PASS, 1 FAIL, 2 usage or input error, 3 NOT CHECKED.
"""

import argparse
import dataclasses
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from dcpsched.conformance import distributed, runtime_groups

TOLERANCE = 0.10      # measured within this share of the model
APART = 0.20          # model and barrier model "differ" beyond this share of the model
MIN_OP_SECONDS = 0.05  # the shortest op after scaling, against message latency
TARGET_SECONDS = 2.0   # the scaled model step when MIN_OP_SECONDS does not bind
EXIT_PASS, EXIT_FAIL, EXIT_USAGE, EXIT_NOT_CHECKED = 0, 1, 2, 3
# simulate() and the model must agree this closely (verify prints ms to 3 places).
SIMULATION_SLACK_SECONDS = 2e-6

# The processes come from the distributed harness's forkserver, which imports
# torch once; its own preload is kept, this module's rank code is added.
_CONTEXT = distributed._RANK_CONTEXT  # pylint: disable=protected-access
_CONTEXT.set_forkserver_preload(["dcpsched.conformance.distributed_rank",
                                 "dcpsched.conformance.distributed_step_rank"])


@dataclasses.dataclass(frozen=True)
class Group:
    """Ranks [first_rank, first_rank + size) of a microbatch: one CP group
    (holds samples) or a run of ranks without samples."""

    first_rank: int
    size: int
    seconds: float  # one layer, forward and backward, on each rank
    holds_samples: bool


@dataclasses.dataclass
class Plan:
    """A schedule with its op times, runtime configuration and model figures."""

    total_gpus: int
    min_cp_size: int
    microbatches: List[List[Group]]
    pipeline_stages: int = 1
    virtual_stages: int = 1
    microbatch_group_size: int = 0  # 0: P
    layers_per_stage: int = 1
    forward_share: float = 1.0 / 3.0
    path: str = "dev"
    model_seconds: float = 0.0     # the model's step (core/runtime_step.h)
    barrier_seconds: float = 0.0   # the barrier model's step, times L
    source: str = ""
    profile: str = ""


# The op order (docs/runtime_step.md, "The op order of a pipeline stage").

def check_shape(stages: int, virtual: int, group_size: int, microbatches: int) -> None:
    """Raises ValueError where Megatron-LM (and the model) refuse the shape."""
    if stages < 1 or virtual < 1:
        raise ValueError(f"P = {stages}, V = {virtual}: both must be at least 1")
    if virtual > 1:
        if stages == 1:
            raise ValueError("V > 1 needs P > 1")
        n = group_size or stages
        if n > microbatches or n < stages or 0 < microbatches % n < stages:
            raise ValueError(f"interleaving refuses N = {n} with M = {microbatches} "
                             f"microbatches on P = {stages} stages")


def stage_order(stages: int, virtual: int, group_size: int, microbatches: int,
                pipeline_rank: int) -> List[Tuple[int, int, bool]]:
    """Pipeline rank `pipeline_rank`'s ops in Megatron-LM's order, as
    (microbatch, chunk, forward): forward_backward_no_pipelining at P = 1,
    1F1B at V = 1, interleaved 1F1B (get_schedule_table,
    get_pp_rank_microbatches, convert_schedule_table_to_order) at V > 1."""
    check_shape(stages, virtual, group_size, microbatches)
    count, p = microbatches, pipeline_rank
    if stages == 1:
        return [op for m in range(count) for op in ((m, 0, True), (m, 0, False))]
    if virtual == 1:
        warm = min(stages - p - 1, count)
        order = [(m, 0, True) for m in range(warm)]
        for i in range(count - warm):
            order += [(warm + i, 0, True), (i, 0, False)]
        return order + [(m, 0, False) for m in range(count - warm, count)]
    n = group_size or stages
    table = [(m, c) for first in range(0, count, n) for c in range(virtual)
             for m in range(first, min(first + n, count))]
    total = count * virtual
    warm = min((stages - p - 1) * 2 + (virtual - 1) * n, total)
    forward = [(m, c, True) for m, c in table]
    backward = [(m, virtual - 1 - c, False) for m, c in table]
    order = forward[:warm]
    for i in range(warm, total):
        order += [forward[i], backward[i - warm]]
    return order + backward[total - warm:]


def input_of(stages: int, virtual: int, pipeline_rank: int, chunk: int,
             forward: bool) -> Optional[Tuple[int, int, bool]]:
    """The op (pipeline rank, chunk, forward) of the same microbatch and
    DPxCP rank whose output this op needs, or None: a forward on virtual
    stage v > 0 needs the forward on v - 1, a backward on v < PV - 1 the
    backward on v + 1, a backward on the last stage that stage's forward."""
    last = stages * virtual - 1
    v = chunk * stages + pipeline_rank
    if forward:
        return None if v == 0 else ((v - 1) % stages, (v - 1) // stages, True)
    if v == last:
        return (pipeline_rank, chunk, True)
    return ((v + 1) % stages, (v + 1) // stages, False)


def op_seconds(plan: Plan, group: Group, forward: bool) -> float:
    """An op's modelled duration: d = L t / V (the division only when
    V > 1); at P = 1 the forward takes d (forward and backward as one op),
    else the forward d f and the backward d - d f; 0 without samples."""
    if not group.holds_samples:
        return 0.0
    d = plan.layers_per_stage * group.seconds
    if plan.virtual_stages > 1:
        d /= plan.virtual_stages
    f = d if plan.pipeline_stages == 1 else d * plan.forward_share
    return f if forward else d - f


def _group_of(microbatch: Sequence[Group], rank: int) -> Group:
    for group in microbatch:
        if group.first_rank <= rank < group.first_rank + group.size:
            return group
    raise ValueError(f"no group covers rank {rank}")


def simulate(plan: Plan) -> Tuple[float, List[List[float]]]:
    """The step by docs/runtime_step.md, event by event: (step, finish time
    of every pipeline rank of every DPxCP rank, [p][r]). Independent of the
    core: here every op of a pipeline rank runs for all its DPxCP ranks
    once its inputs exist."""
    total, stages, count = plan.total_gpus, plan.pipeline_stages, len(plan.microbatches)
    if plan.path == "legacy":
        if stages != 1:
            raise ValueError("the legacy runtime exists only without pipelining (P = 1)")
        begin, finish = 0.0, [0.0] * total
        for microbatch in plan.microbatches:
            finish = [begin + op_seconds(plan, _group_of(microbatch, r), True)
                      for r in range(total)]
            begin = max(finish)
        return max(finish, default=0.0), [finish]
    orders = [stage_order(stages, plan.virtual_stages, plan.microbatch_group_size, count, p)
              for p in range(stages)]
    done: Dict[Tuple[int, int, int, bool], List[float]] = {}
    ready = [[0.0] * total for _ in range(stages)]
    position = [0] * stages
    moved = True
    while moved:
        moved = False
        for p in range(stages):
            while position[p] < len(orders[p]):
                m, chunk, forward = orders[p][position[p]]
                needs = input_of(stages, plan.virtual_stages, p, chunk, forward)
                if needs is not None and (needs[0], m, needs[1], needs[2]) not in done:
                    break
                arrived = done[(needs[0], m, needs[1], needs[2])] if needs else [0.0] * total
                earliest = [max(a, b) for a, b in zip(ready[p], arrived)]
                finish = list(earliest)
                for group in plan.microbatches[m]:
                    if group.holds_samples:
                        ranks = range(group.first_rank, group.first_rank + group.size)
                        start = max(earliest[r] for r in ranks)
                        for r in ranks:
                            finish[r] = start + op_seconds(plan, group, forward)
                done[(p, m, chunk, forward)] = finish
                ready[p] = finish
                position[p] += 1
                moved = True
    if any(position[p] < len(orders[p]) for p in range(stages)):
        raise RuntimeError("the op orders wait on each other: no step")
    return max(max(row) for row in ready), ready


# Reading the schedule.

def _tiles(microbatches: List[List[Group]], total: int, source: str) -> None:
    for m, microbatch in enumerate(microbatches):
        at = 0
        for group in microbatch:
            if group.first_rank != at or group.size < 1:
                raise ValueError(f"{source}: microbatch {m}: its groups do not tile ranks "
                                 f"0..{total - 1}")
            at += group.size
        if at != total:
            raise ValueError(f"{source}: microbatch {m}: its groups end at rank {at}, not {total}")


def plan_from_run_document(document: Dict[str, Any], source: str = "run document") -> Plan:
    """The Plan of a compact run document with a cost profile
    (dcpsched.schedule_run.v2 from `dcpsched schedule --cost-profile NAME
    --format json --compact`)."""
    if document.get("format") != "dcpsched.schedule_run.v2":
        raise ValueError(f"{source}: not a compact run document (dcpsched schedule --format "
                         "json --compact); got format " + repr(document.get("format")))
    if document.get("ok") is not True:
        raise ValueError(f"{source}: the scheduler failed: {document.get('error')}")
    quality = document.get("quality", {})
    runtime, barrier = quality.get("runtime"), quality.get("gpu_time")
    if runtime is None or barrier is None:
        raise ValueError(f"{source}: no quality.runtime / quality.gpu_time: schedule with "
                         "--cost-profile NAME")
    if runtime.get("expert_parallel_size") is not None:
        raise ValueError(f"{source}: expert parallelism is not run by this check")
    parameters = document["parameters"]
    total = int(parameters["total_gpus"])
    microbatches = []
    for microbatch in document["microbatches"]:
        microbatches.append([Group(int(g["first_rank"]), int(g["size"]),
                                   float(g.get("seconds_per_rank", 0.0)), bool(g["ids"]))
                             for g in microbatch["cp_groups"]])
    _tiles(microbatches, total, source)
    layers = int(runtime["layers_per_stage"])
    return Plan(total_gpus=total, min_cp_size=int(parameters.get("min_cp_size") or 1),
                microbatches=microbatches, pipeline_stages=int(runtime["pipeline_stages"]),
                virtual_stages=int(runtime["virtual_stages"]),
                microbatch_group_size=int(runtime.get("microbatch_group_size") or 0),
                layers_per_stage=layers, forward_share=float(runtime["forward_share"]),
                path=runtime["path"], model_seconds=float(runtime["step_seconds"]),
                barrier_seconds=layers * float(barrier["step_seconds"]), source=source,
                profile=document.get("cost_profile", {}).get("name", ""))


def dcpsched_program(program: Optional[str] = None) -> str:
    """The dcpsched command line program: `program`, else $DCPSCHED_CLI,
    else `dcpsched` on PATH, else the build directory's (beside the
    package's build copy)."""
    import dcpsched  # pylint: disable=import-outside-toplevel
    candidates = [program, os.environ.get("DCPSCHED_CLI"), shutil.which("dcpsched"),
                  str(pathlib.Path(dcpsched.__file__).resolve().parents[2] / "dcpsched")]
    for candidate in candidates:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise FileNotFoundError("no dcpsched program: give its path (--dcpsched) or set "
                            "DCPSCHED_CLI")


_VERIFY_BARRIER = re.compile(r"^time \([^)]*\): barrier step ([0-9.]+) ms", re.M)
_VERIFY_STEP = re.compile(r"^step \(([^)]*)\): ([0-9.]+) ms", re.M)


def plan_from_schedule(path: pathlib.Path, cost_profile: str, pipeline_stages: int = 1,
                       virtual_stages: int = 1, layers_per_stage: int = 1,
                       forward_share: Optional[float] = None, path_name: str = "dev",
                       program: Optional[str] = None, source: Optional[str] = None) -> Plan:
    """The Plan of a schedule file (dcpsched.schedule.v1): group seconds by
    dcpsched.cost_model, the model's and the barrier step by `dcpsched
    verify` with the same runtime options. The microbatch group size N is
    the file's vpp_group, as verify takes it."""
    # pylint: disable=import-outside-toplevel
    from dcpsched import cost_model, cost_profile as profiles, schedule_document
    document = json.loads(pathlib.Path(path).read_text())
    if document.get("format", "dcpsched.schedule.v1") != "dcpsched.schedule.v1":
        raise ValueError(f"{path}: not a schedule file (dcpsched.schedule.v1)")
    schedule = schedule_document.parse_schedule(document, str(path))
    model = cost_model.CostModel(profiles.load_profile(cost_profile))
    microbatches = [[Group(g.first_rank, g.ranks, model.rank_seconds(g.load), bool(g.load))
                     for g in microbatch] for microbatch in schedule.microbatches]
    _tiles(microbatches, schedule.total_gpus, str(path))
    command = [dcpsched_program(program), "verify", str(path), "--cost-profile", cost_profile,
               "--pp", str(pipeline_stages), "--virtual-stages", str(virtual_stages),
               "--layers-per-stage", str(layers_per_stage), "--runtime", path_name]
    if forward_share is not None:
        command += ["--forward-share", repr(forward_share)]
    result = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
    barrier, step = _VERIFY_BARRIER.search(result.stdout), _VERIFY_STEP.search(result.stdout)
    if result.returncode != 0 or not barrier or not step:
        raise ValueError(f"{path}: `{' '.join(command)}` did not give the runtime's step "
                         f"(exit {result.returncode}): {(result.stdout + result.stderr)[:600]}")
    plan = Plan(total_gpus=schedule.total_gpus,
                min_cp_size=int(document.get("min_cp_size") or 1), microbatches=microbatches,
                pipeline_stages=pipeline_stages, virtual_stages=virtual_stages,
                microbatch_group_size=int(document.get("vpp_group") or 0),
                layers_per_stage=layers_per_stage,
                forward_share=1.0 / 3.0 if forward_share is None else forward_share,
                path=path_name, model_seconds=float(step.group(2)) * 1e-3,
                barrier_seconds=layers_per_stage * float(barrier.group(1)) * 1e-3,
                source=f"{source or path} ({step.group(1)})", profile=model.profile.name)
    ours = sum(max(g.seconds for g in microbatch) for microbatch in microbatches)
    if abs(ours * layers_per_stage - plan.barrier_seconds) > 1e-6 + 1e-6 * ours:
        raise ValueError(f"{path}: the Python cost model's barrier step {ours * 1e3:.6f} ms "
                         f"is not verify's {barrier.group(1)} ms: the processes would not "
                         "wait the model's times")
    return plan


def load_plan(document, cost_profile: Optional[str] = None, pipeline_stages: Optional[int] = None,
              virtual_stages: Optional[int] = None, layers_per_stage: Optional[int] = None,
              forward_share: Optional[float] = None, runtime: Optional[str] = None,
              program: Optional[str] = None) -> Plan:
    """The Plan of `document`: a path to, or the decoded form of, a compact
    run document (the runtime options then come from it, and any given must
    agree) or a schedule file (with cost_profile and the runtime options)."""
    path = None
    if isinstance(document, (str, pathlib.Path)):
        path = pathlib.Path(document)
        document = json.loads(path.read_text())
    if document.get("format") == "dcpsched.schedule_run.v2":
        plan = plan_from_run_document(document, str(path or "run document"))
        given = {"pipeline_stages": pipeline_stages, "virtual_stages": virtual_stages,
                 "layers_per_stage": layers_per_stage, "forward_share": forward_share,
                 "path": runtime}
        for name, value in given.items():
            if value is not None and value != getattr(plan, name):
                raise ValueError(f"{plan.source}: {name} is {getattr(plan, name)!r} in the "
                                 f"document, {value!r} given (schedule again with it)")
        return plan
    if cost_profile is None:
        raise ValueError("a schedule file needs a cost profile (e.g. h200-llama3-8b)")
    source = None if path else "schedule document"
    with tempfile.TemporaryDirectory(prefix="dcpsched-step-") as tmp:
        if path is None:
            path = pathlib.Path(tmp) / "schedule.json"
            path.write_text(json.dumps(document))
        return plan_from_schedule(path, cost_profile, pipeline_stages or 1, virtual_stages or 1,
                                  layers_per_stage or 1, forward_share, runtime or "dev",
                                  program, source)


# The processes' ops.

def _tag(microbatch: int, chunk: int, forward: bool, virtual: int) -> int:
    """The tag of a stage message: the receiving op's microbatch, chunk and pass."""
    return (microbatch * virtual + chunk) * 2 + (0 if forward else 1)


def process_ops(plan: Plan, scale: float) -> List[List[Dict[str, Any]]]:
    """Every process's ops in order (index p * G + r); at P = 1 one op per
    microbatch (the model's backward there takes no time and no input)."""
    total, stages, virtual = plan.total_gpus, plan.pipeline_stages, plan.virtual_stages
    last = stages * virtual - 1
    processes = []
    for p in range(stages):
        order = stage_order(stages, virtual, plan.microbatch_group_size,
                            len(plan.microbatches), p)
        for r in range(total):
            ops = []
            for m, chunk, forward in order:
                if stages == 1 and not forward:
                    continue
                group = _group_of(plan.microbatches[m], r)
                v = chunk * stages + p
                receive = send = None
                if forward:
                    if v > 0:
                        receive = [((v - 1) % stages) * total + r, _tag(m, chunk, True, virtual)]
                    if v < last:
                        send = [((v + 1) % stages) * total + r,
                                _tag(m, (v + 1) // stages, True, virtual)]
                else:
                    if v < last:
                        receive = [((v + 1) % stages) * total + r,
                                   _tag(m, chunk, False, virtual)]
                    if v > 0:
                        send = [((v - 1) % stages) * total + r,
                                _tag(m, (v - 1) // stages, False, virtual)]
                ops.append({"microbatch": m, "chunk": chunk, "forward": forward,
                            "cp": [group.first_rank, group.size] if group.holds_samples else None,
                            "seconds": op_seconds(plan, group, forward) * scale,
                            "recv": receive, "send": send})
            processes.append(ops)
    return processes


def shortest_op(plan: Plan) -> float:
    """The shortest op with samples the processes run (unscaled)."""
    ops = process_ops(plan, 1.0)
    return min((op["seconds"] for ops_of in ops for op in ops_of if op["seconds"] > 0),
               default=0.0)


def choose_scale(plan: Plan, target_seconds: float = TARGET_SECONDS,
                 min_op_seconds: float = MIN_OP_SECONDS) -> float:
    """The scale that makes the model's step target_seconds, or more if
    then an op would last less than min_op_seconds."""
    if plan.model_seconds <= 0:
        raise ValueError("the model's step is 0: nothing to time")
    shortest = shortest_op(plan)
    return max(target_seconds / plan.model_seconds,
               min_op_seconds / shortest if shortest > 0 else 0.0)


class _Processes(distributed._Ranks):  # pylint: disable=protected-access,too-few-public-methods
    """The W processes; the harness's wait (one deadline, the first failure
    ends it), end (by pid) and log tail."""

    def __init__(self, job_file, world, log_dir):  # pylint: disable=super-init-not-called
        self.procs, self.logs = [], []
        for process in range(world):
            log = open(log_dir / f"{process}.log", "w+b")  # pylint: disable=consider-using-with
            self.logs.append(log)
            proc = _CONTEXT.Process(target=_target(), args=(str(job_file), process, log.name))
            proc.start()
            self.procs.append(proc)


def _target():
    # pylint: disable-next=import-outside-toplevel
    from dcpsched.conformance import distributed_step_rank
    return distributed_step_rank.process_main


@dataclasses.dataclass
class StepCheck:
    """What run_step_check found; `lines` is the report."""

    status: int
    passed: bool
    world: int = 0
    scale: float = 0.0
    measured_seconds: Optional[float] = None
    model_seconds: float = 0.0        # scaled
    barrier_seconds: float = 0.0      # scaled
    simulated_seconds: float = 0.0    # scaled
    ratio: Optional[float] = None     # measured / model
    barrier_ratio: Optional[float] = None  # measured / barrier
    model_barrier_gap: float = 0.0    # |barrier / model - 1|
    shortest_op_seconds: float = 0.0  # scaled
    largest_finish_deviation: Optional[float] = None  # seconds, any process
    wall_seconds: float = 0.0
    lines: List[str] = dataclasses.field(default_factory=list)
    # Per process (index p * G + r): its ops as run (process_ops) and its
    # record (distributed_step_rank.run_ops: per op the seconds after the
    # start at which its input was there, its ring exchange ended, it ended).
    ops: List[List[Dict[str, Any]]] = dataclasses.field(default_factory=list)
    records: List[Dict[str, Any]] = dataclasses.field(default_factory=list)


def _expected_counts(ops):
    rings = sum(op["cp"] is not None and op["cp"][1] > 1 for op in ops)
    return rings, sum(op["recv"] is not None for op in ops), sum(op["send"] is not None
                                                                 for op in ops)


def _latency_line(ops, records, total):
    """What the messages cost: per CP size, the median and longest time from
    the last member's arrival to the end of the ring exchange (the model's
    op starts there), and the sleeps' median overshoot."""
    spans: Dict[int, List[float]] = {}
    for first_process in range(0, len(ops), total):
        for index in range(len(ops[first_process])):
            seen = set()
            for process in range(first_process, first_process + total):
                op = ops[process][index]
                if op["cp"] is None or op["cp"][1] < 2 or tuple(op["cp"]) in seen:
                    continue
                seen.add(tuple(op["cp"]))
                members = range(first_process + op["cp"][0],
                                first_process + op["cp"][0] + op["cp"][1])
                arrived = max(records[m]["times"][index][0] for m in members)
                spans.setdefault(op["cp"][1], []).append(
                    max(records[m]["times"][index][1] for m in members) - arrived)
    overshoot = sorted(times[2] - times[1] - op["seconds"]
                       for record, mine in zip(records, ops)
                       for times, op in zip(record["times"], mine) if op["seconds"] > 0)
    parts = [f"{size}: {sorted(found)[len(found) // 2] * 1e3:.1f}/{max(found) * 1e3:.1f}"
             for size, found in sorted(spans.items())]
    return ("latency: ring exchange after its last member arrived, median/longest ms by CP "
            f"size: {', '.join(parts) or 'none'}; timed waits overshoot by "
            f"{overshoot[len(overshoot) // 2] * 1e3 if overshoot else 0:.2f} ms (median)")


def run_plan(plan: Plan, scale: Optional[float] = None, ranks_as: Optional[str] = None,
             tolerance: float = TOLERANCE, apart: float = APART,
             target_seconds: float = TARGET_SECONDS, min_op_seconds: float = MIN_OP_SECONDS,
             timeout: Optional[float] = None, out=None) -> StepCheck:
    """Runs `plan` on its processes and compares (see the module docstring).
    ranks_as: what the processes do, "dev" (no barrier between microbatches)
    or "legacy" (a barrier after every microbatch); default the plan's path."""
    out = out if out is not None else sys.stdout
    started = time.monotonic()
    total, stages = plan.total_gpus, plan.pipeline_stages
    world = total * stages
    ranks_as = ranks_as or plan.path
    if runtime_groups.odd_group_refused(total):
        raise ValueError(f"G = {total} is odd: Megatron-LM refuses it for dynamic CP at start-up")
    if ranks_as == "legacy" and stages != 1:
        raise ValueError("the legacy runtime exists only without pipelining (P = 1)")
    if plan.model_seconds <= 0 or plan.barrier_seconds <= 0:
        raise ValueError("the model's step is 0: nothing to time")
    simulated, finish = simulate(plan)
    scale = scale or choose_scale(plan, target_seconds, min_op_seconds)
    ops = process_ops(plan, scale)
    shortest = min((op["seconds"] for o in ops for op in o if op["seconds"] > 0), default=0.0)
    check = StepCheck(status=EXIT_NOT_CHECKED, passed=False, world=world, scale=scale,
                      model_seconds=plan.model_seconds * scale,
                      barrier_seconds=plan.barrier_seconds * scale,
                      simulated_seconds=simulated * scale, shortest_op_seconds=shortest,
                      model_barrier_gap=abs(plan.barrier_seconds / plan.model_seconds - 1))

    def say(line):
        check.lines.append(line)
        print(line, file=out, flush=True)

    say(f"step check: W = {world} gloo processes (G = {total} DPxCP ranks x P = {stages} "
        f"pipeline ranks), {len(plan.microbatches)} microbatches, {plan.source}"
        f"{', profile ' + plan.profile if plan.profile else ''}; V {plan.virtual_stages}, "
        f"L {plan.layers_per_stage}, forward share {plan.forward_share:.4g}, model runtime "
        f"{plan.path}, processes run as {ranks_as}")
    say(f"scale {scale:.4g}: shortest op {shortest * 1e3:.1f} ms; model step "
        f"{check.model_seconds:.3f} s, barrier model {check.barrier_seconds:.3f} s (they differ "
        f"by {check.model_barrier_gap:.0%} of the model), this module's reading of "
        f"docs/runtime_step.md {check.simulated_seconds:.3f} s")
    agrees = abs(simulated - plan.model_seconds) <= (SIMULATION_SLACK_SECONDS
                                                     + 1e-9 * plan.model_seconds)
    if timeout is None:
        timeout = 60.0 + 3.0 * max(check.model_seconds, check.barrier_seconds) + 2.0 * world
    with tempfile.TemporaryDirectory(prefix="dcpsched-step-") as tmp:
        tmp = pathlib.Path(tmp)
        job_file = tmp / "job.json"
        job_file.write_text(json.dumps({
            "total_gpus": total, "pipeline_stages": stages, "min_cp_size": plan.min_cp_size,
            "rendezvous": str(tmp / "rendezvous"), "timeout": timeout,
            "barrier_each_microbatch": ranks_as == "legacy", "ops": ops}))
        processes = _Processes(job_file, world, tmp)
        try:
            codes, timed_out = processes.wait(time.monotonic() + timeout)
        finally:
            processes.end()
        failed = [p for p, code in enumerate(codes) if code != 0]
        if timed_out or failed:
            why = (f"the run passed its {timeout:g} s deadline" if timed_out else
                   f"process(es) {', '.join(map(str, failed))} failed (exit "
                   f"{', '.join(str(codes[p]) for p in failed)})")
            for process in failed[:2] or [0]:
                say(f"process {process} output:")
                for line in processes.tail(process):
                    say(f"  {line}")
            check.wall_seconds = time.monotonic() - started
            say(f"step check: NOT CHECKED: {why}")
            return check
        records = [json.loads((tmp / f"{p}.json").read_text()) for p in range(world)]
    check.ops, check.records = ops, records
    problems = []
    for process, (record, mine) in enumerate(zip(records, ops)):
        rings, received, sent = _expected_counts(mine)
        if (record["rings"], record["messages_received"], record["messages_sent"]) != (
                rings, received, sent):
            problems.append(f"process {process} made {record['rings']} ring exchanges, "
                            f"received {record['messages_received']} and sent "
                            f"{record['messages_sent']} stage messages; its ops have {rings}, "
                            f"{received} and {sent}")
    measured = max(record["finish"] for record in records)
    check.measured_seconds = measured
    check.ratio = measured / check.model_seconds
    check.barrier_ratio = measured / check.barrier_seconds if check.barrier_seconds else None
    deviations = [(abs(record["finish"] - finish[p // total][p % total] * scale), p)
                  for p, record in enumerate(records)]
    worst, worst_process = max(deviations)
    check.largest_finish_deviation = worst
    within = abs(check.ratio - 1) <= tolerance
    differ = check.model_barrier_gap > apart
    away = check.barrier_ratio is not None and abs(check.barrier_ratio - 1) > tolerance
    say(f"ran: {sum(len(o) for o in ops)} ops, "
        f"{sum(r['rings'] for r in records)} ring exchanges in CP groups of "
        f"{sorted({s for r in records for s in r['ring_sizes']}) or 'no'} ranks (the runtime's "
        f"lookup), {sum(r['messages_sent'] for r in records)} stage messages; torch "
        f"{records[0]['torch']}")
    say(f"measured {measured:.3f} s: {check.ratio:.3f} of the model ("
        f"{'within' if within else 'NOT within'} {tolerance:.0%}), "
        f"{check.barrier_ratio:.3f} of the barrier model ("
        + (f"{'more' if away else 'NOT more'} than {tolerance:.0%} away, as it must be: they "
           f"differ by more than {apart:.0%}" if differ else
           f"not required apart: they differ by {apart:.0%} or less")
        + f"); largest finish deviation from the model {worst * 1e3:.1f} ms (process "
          f"{worst_process}: DPxCP rank {worst_process % total}, pipeline rank "
          f"{worst_process // total})")
    say(_latency_line(ops, records, total))
    for problem in problems:
        say(f"internal: {problem}")
    if not agrees:
        say(f"differ: this module's reading of docs/runtime_step.md gives "
            f"{simulated * 1e3:.6f} ms unscaled, the model {plan.model_seconds * 1e3:.6f} ms")
    check.passed = within and (away or not differ) and agrees and not problems
    check.status = EXIT_PASS if check.passed else EXIT_FAIL
    check.wall_seconds = time.monotonic() - started
    say(f"step check: {'PASS' if check.passed else 'FAIL'}: W = {world}, measured "
        f"{measured:.3f} s, model {check.model_seconds:.3f} s, barrier model "
        f"{check.barrier_seconds:.3f} s, measured/model {check.ratio:.3f}; "
        f"whole run {check.wall_seconds:.1f} s")
    return check


def run_step_check(document, pipeline_stages: Optional[int] = None,
                   scale: Optional[float] = None, *, cost_profile: Optional[str] = None,
                   virtual_stages: Optional[int] = None, layers_per_stage: Optional[int] = None,
                   forward_share: Optional[float] = None, runtime: Optional[str] = None,
                   ranks_as: Optional[str] = None, program: Optional[str] = None,
                   tolerance: float = TOLERANCE, apart: float = APART,
                   target_seconds: float = TARGET_SECONDS,
                   min_op_seconds: float = MIN_OP_SECONDS, timeout: Optional[float] = None,
                   out=None) -> StepCheck:
    """Runs `document` (a compact run document or a schedule file, a path
    or decoded; see load_plan) on G x P gloo processes and compares the
    measured step with the model's and the barrier model's (module
    docstring). scale: seconds waited per modelled second (default
    choose_scale's). The processes start from a forkserver: a script that
    calls this guards its main code with `if __name__ == "__main__":`."""
    plan = load_plan(document, cost_profile, pipeline_stages, virtual_stages, layers_per_stage,
                     forward_share, runtime, program)
    return run_plan(plan, scale, ranks_as, tolerance, apart, target_seconds, min_op_seconds,
                    timeout, out)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python3 -m dcpsched.conformance.distributed_step",
        description="Run a schedule on G x P gloo processes that keep the runtime step "
                    "model's dependency rules (ring exchange in each CP group, stage messages "
                    "in Megatron-LM's op order, timed waits) and compare the measured step "
                    "with the model's (docs/runtime_step.md).",
        epilog="exit status: 0 PASS, 1 FAIL, 2 usage or input error, 3 NOT CHECKED (a "
               "process failed or passed the deadline)")
    parser.add_argument("file", metavar="FILE",
                        help="a compact run document (dcpsched schedule --cost-profile NAME "
                             "--format json --compact [--pp P ...]) or a schedule file "
                             "(dcpsched.schedule.v1, with --cost-profile)")
    parser.add_argument("--cost-profile", metavar="NAME", help="for a schedule file")
    parser.add_argument("--pp", type=int, metavar="P", help="pipeline stages (schedule file)")
    parser.add_argument("--virtual-stages", type=int, metavar="V")
    parser.add_argument("--layers-per-stage", type=int, metavar="L")
    parser.add_argument("--forward-share", type=float, metavar="F")
    parser.add_argument("--runtime", choices=["dev", "legacy"],
                        help="the model's runtime path (schedule file; default dev)")
    parser.add_argument("--ranks-as", choices=["dev", "legacy"],
                        help="what the processes do (default: the model's path); legacy "
                             "adds a barrier after every microbatch")
    parser.add_argument("--scale", type=float, metavar="S",
                        help=f"seconds waited per modelled second (default: the model's step "
                             f"takes --target-seconds, every op at least "
                             f"{MIN_OP_SECONDS * 1e3:g} ms)")
    parser.add_argument("--target-seconds", type=float, default=TARGET_SECONDS, metavar="T")
    parser.add_argument("--tolerance", type=float, default=TOLERANCE, metavar="X")
    parser.add_argument("--timeout", type=float, metavar="SECONDS")
    parser.add_argument("--dcpsched", metavar="PATH", help="the dcpsched program (schedule file)")
    return parser


def main(argv=None) -> int:
    """The command line; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        plan = load_plan(pathlib.Path(args.file), args.cost_profile, args.pp,
                         args.virtual_stages, args.layers_per_stage, args.forward_share,
                         args.runtime, args.dcpsched)
        check = run_plan(plan, args.scale, args.ranks_as, args.tolerance, APART,
                         args.target_seconds, MIN_OP_SECONDS, args.timeout)
    except (OSError, ValueError) as error:
        print(f"step check: {error}", file=sys.stderr)
        return EXIT_USAGE
    return check.status


if __name__ == "__main__":
    sys.exit(main())
