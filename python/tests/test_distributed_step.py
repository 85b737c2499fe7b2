"""The step check (dcpsched.conformance.distributed_step): the runtime step
model of docs/runtime_step.md against W = G x P gloo processes that wait
their modelled op times (scaled), exchange a ring message in the CP group
the runtime's lookup gives them and pass stage messages in Megatron-LM's op
order.

Default tier (W <= 8): P = 1 at G = 4 (two blocks of 2, the heavy group
rotating between them: the model is about 60 % of the barrier model) and at
G = 8 (groups of 2, 4 and the whole 8), P = 2 at G = 4 (through the command
line), each measured within 10 % of the model and more than 10 % away from
the barrier model, which differs from the model by more than 20 % on all
three; a negative control (the processes wait for each other after every
microbatch, as main's legacy runtime does) measures the barrier model and
fails; a CLI run document where the two models agree passes. Without
processes: the op order, the module's own reading of the model against the
core's on CLI documents (pipelining, interleaving, L, f, legacy), and the
stage messages pairing up. A process that fails (a lookup KeyError at
G = 6) ends the run: NOT CHECKED. W = 16 (P = 1 x G = 16, P = 2 x G = 8)
and an interleaved CLI document (P = 2, V = 2, W = 8) run in the nightly
tier only (DCPSCHED_NIGHTLY_DISTRIBUTED=1). The process tests are skipped
in sanitized builds (torch under ASan's preload; test_distributed.py is not
run there either).
"""

import json
import os
import pathlib
import subprocess
import sys

import pytest

import dcpsched
from dcpsched.conformance import distributed_step

CLI = pathlib.Path(os.environ.get(
    "DCPSCHED_CLI", pathlib.Path(dcpsched.__file__).resolve().parents[2] / "dcpsched"))
PROFILE = "h200-llama3-8b"
BUDGET = 8192  # max_seq_len_per_rank of the test schedules

needs_cli = pytest.mark.skipif(not CLI.is_file(), reason=f"no dcpsched program at {CLI} "
                                                         "(set DCPSCHED_CLI)")
needs_processes = pytest.mark.skipif(
    "asan" in os.environ.get("LD_PRELOAD", ""),
    reason="gloo processes that import torch under ASan's preload: plain build only")
nightly = pytest.mark.skipif(os.environ.get("DCPSCHED_NIGHTLY_DISTRIBUTED") != "1",
                             reason="nightly tier: DCPSCHED_NIGHTLY_DISTRIBUTED=1 "
                                    "(scripts/test.sh --nightly)")

HEAVY, LIGHT, SHORT = [16384], [8192], [4096]  # one sample each


def schedule(total, microbatches):
    """A dcpsched.schedule.v1 document: each microbatch a list of (CP size,
    [lengths]) tiling the ranks, every group one aligned block."""
    samples, groups = [], []
    for microbatch in microbatches:
        ranks = []
        for size, lengths in microbatch:
            ids = list(range(len(samples), len(samples) + len(lengths)))
            samples += [[i, length] for i, length in zip(ids, lengths)]
            ranks += [list(ids) for _ in range(size)]
        assert len(ranks) == total
        groups.append(ranks)
    return {"format": "dcpsched.schedule.v1", "total_gpus": total,
            "max_seq_len_per_rank": BUDGET, "samples": samples, "groups": groups}


def rotating(blocks, size, count, heavy=HEAVY, light=LIGHT):
    """`count` microbatches over `blocks` groups of `size` ranks, the heavy
    sample on block m mod blocks in microbatch m, a light one elsewhere."""
    return [[(size, heavy if b == m % blocks else light) for b in range(blocks)]
            for m in range(count)]


P1_G4 = schedule(4, rotating(2, 2, 8, HEAVY, SHORT))
P1_G8 = schedule(8, [[(4, [32768]), (2, SHORT), (2, SHORT)],
                     [(2, SHORT), (2, SHORT), (4, [32768])]]
                 + rotating(4, 2, 4, HEAVY, SHORT)
                 + [[(4, [8192]), (4, [32768])], [(4, [32768]), (4, [8192])], [(8, [65536])]])
# P = 2: the heavy group on either block, a microbatch on the whole group of 4.
P2_G4 = schedule(4, [[(2, HEAVY), (2, LIGHT)], [(2, LIGHT), (2, LIGHT)], [(4, [32768])],
                     [(2, LIGHT), (2, LIGHT)], [(2, LIGHT), (2, HEAVY)]])
P1_G16 = schedule(16, [[(8, [65536]), (4, [16384]), (2, LIGHT), (2, LIGHT)],
                       [(2, LIGHT), (2, LIGHT), (4, [16384]), (8, [65536])],
                       [(16, [131072])]]
                  + rotating(8, 2, 8)
                  + [[(4, [32768] if b == i else [16384]) for b in range(4)] for i in range(4)])
P2_G8 = schedule(8, rotating(4, 2, 8) + [[(4, [16384]), (2, LIGHT), (2, LIGHT)]])


def check(document, stages, **options):
    result = distributed_step.run_step_check(document, stages, cost_profile=PROFILE,
                                             program=str(CLI), **options)
    return result, "\n".join(result.lines)


def assert_passes(result, report, apart):
    assert result.status == distributed_step.EXIT_PASS and result.passed, report
    assert abs(result.ratio - 1) <= distributed_step.TOLERANCE, report
    assert result.shortest_op_seconds >= distributed_step.MIN_OP_SECONDS * 0.999, report
    if apart:
        assert result.model_barrier_gap > distributed_step.APART, report
        assert abs(result.barrier_ratio - 1) > distributed_step.TOLERANCE, report
    assert "step check: PASS" in report


# Without processes.

def test_the_op_order_is_megatrons():
    order = distributed_step.stage_order
    f, b = (lambda m, c=0: (m, c, True)), (lambda m, c=0: (m, c, False))
    assert order(1, 1, 0, 2, 0) == [f(0), b(0), f(1), b(1)]
    # 1F1B, P = 2: one warm-up forward on pipeline rank 0, none on rank 1.
    assert order(2, 1, 0, 4, 0) == [f(0), f(1), b(0), f(2), b(1), f(3), b(2), b(3)]
    assert order(2, 1, 0, 4, 1) == [f(0), b(0), f(1), b(1), f(2), b(2), f(3), b(3)]
    assert order(3, 1, 0, 1, 0) == [f(0), b(0)]  # w = min(P - p - 1, M)
    # Interleaved, P = 2, V = 2, N = 2, M = 4: table (0,0) (1,0) (0,1) (1,1) (2,0)
    # (3,0) (2,1) (3,1); rank 0 warms up with w = 2 + 2 = 4 forwards.
    assert order(2, 2, 2, 4, 0) == [
        f(0, 0), f(1, 0), f(0, 1), f(1, 1), f(2, 0), b(0, 1), f(3, 0), b(1, 1), f(2, 1),
        b(0, 0), f(3, 1), b(1, 0), b(2, 1), b(3, 1), b(2, 0), b(3, 0)]
    assert order(2, 2, 2, 4, 1)[:3] == [f(0, 0), f(1, 0), f(0, 1)]
    for refused in [(1, 2, 0, 4), (2, 2, 3, 2), (2, 2, 1, 4), (2, 2, 3, 4)]:
        with pytest.raises(ValueError):
            order(*refused, 0)


def test_the_op_order_is_the_cores():
    # The module's own reading of the order against core/pipeline_order.h.
    try:
        core_order = dcpsched.pipeline_stage_order
    except (AttributeError, ImportError):
        pytest.skip("the extension has no pipeline_stage_order")
    compared = 0
    for stages, virtual, count, group in [(1, 1, 5, None), (2, 1, 1, None), (2, 1, 6, None),
                                          (4, 1, 3, None), (4, 1, 9, None), (2, 2, 4, None),
                                          (2, 2, 6, 3), (3, 2, 9, 3), (4, 3, 8, 4),
                                          (2, 4, 5, 5), (3, 2, 6, 3)]:
        for rank in range(stages):
            ours = distributed_step.stage_order(stages, virtual, group or 0, count, rank)
            theirs = core_order(stages, virtual, count, rank, microbatch_group_size=group)
            assert [tuple(op) for op in theirs] == ours, (stages, virtual, count, group, rank)
            compared += 1
    assert compared == 29
    for refused in [(3, 2, 7, 3), (2, 2, 4, 1), (1, 2, 4, None)]:
        with pytest.raises(ValueError):
            core_order(*refused[:3], 0, microbatch_group_size=refused[3])
        with pytest.raises(ValueError):
            distributed_step.stage_order(refused[0], refused[1], refused[3] or 0, refused[2], 0)


@needs_cli
@pytest.mark.parametrize("flags", [
    [], ["--pp", "2"], ["--pp", "3"], ["--pp", "4", "--total-gpus", "2", "--mslpr", "4096"],
    ["--pp", "2", "--virtual-stages", "2", "--vpp", "2"],
    ["--pp", "3", "--virtual-stages", "2", "--vpp", "3"],
    ["--pp", "2", "--virtual-stages", "3", "--vpp", "4"],
    ["--pp", "2", "--layers-per-stage", "3", "--forward-share", "0.5"],
    ["--runtime", "legacy", "--layers-per-stage", "2"]])
def test_the_modules_reading_of_the_model_is_the_cores(flags):
    command = [str(CLI), "schedule", "--samples", "96", "--cost-profile", PROFILE,
               "--format", "json", "--compact"] + flags
    if "--total-gpus" not in flags:
        command += ["--total-gpus", "4"]
    document = json.loads(subprocess.run(command, capture_output=True, text=True,
                                         check=True).stdout)
    plan = distributed_step.plan_from_run_document(document)
    simulated, finish = distributed_step.simulate(plan)
    assert simulated == pytest.approx(plan.model_seconds, rel=1e-12, abs=0)
    assert max(max(row) for row in finish) == simulated
    assert len(finish) == plan.pipeline_stages


def test_every_stage_message_is_received_once_with_its_tag():
    groups = [distributed_step.Group(0, 2, 0.01 * (m + 1), True) for m in range(6)]
    plan = distributed_step.Plan(total_gpus=2, min_cp_size=1, pipeline_stages=3,
                                 virtual_stages=2, microbatch_group_size=3,
                                 microbatches=[[g] for g in groups])
    ops = distributed_step.process_ops(plan, 1.0)
    sent = sorted((op["send"][0], op["send"][1], p) for p, mine in enumerate(ops)
                  for op in mine if op["send"])
    received = sorted((p, op["recv"][1], op["recv"][0]) for p, mine in enumerate(ops)
                      for op in mine if op["recv"])
    assert sent == received and len(sent) == len(set(sent))
    # Per microbatch and DPxCP rank: the forwards on stages 1..5 and the
    # backwards on stages 0..4 receive (the last stage's backward has its
    # input on its own rank).
    assert len(received) == 2 * (2 * 6 * (3 * 2 - 1))


@needs_cli
def test_refusals(tmp_path):
    with pytest.raises(ValueError, match="odd"):
        distributed_step.run_plan(distributed_step.Plan(
            total_gpus=3, min_cp_size=1, microbatches=[[distributed_step.Group(0, 3, 1.0, True)]],
            model_seconds=1.0, barrier_seconds=1.0))
    with pytest.raises(ValueError, match="cost profile"):
        distributed_step.load_plan(P1_G4)
    with pytest.raises(ValueError, match="legacy"):
        distributed_step.run_plan(distributed_step.load_plan(P1_G4, PROFILE, 2,
                                                             program=str(CLI)),
                                  ranks_as="legacy")
    document = json.loads(subprocess.run(
        [str(CLI), "schedule", "--total-gpus", "4", "--samples", "32", "--cost-profile",
         PROFILE, "--format", "json", "--compact"], capture_output=True, text=True,
        check=True).stdout)
    with pytest.raises(ValueError, match="pipeline_stages"):
        distributed_step.load_plan(document, pipeline_stages=2)
    # A schedule the runtime cannot run (a group of 2 on ranks 1-2): verify refuses it.
    broken = schedule(4, [[(1, SHORT), (2, HEAVY), (1, SHORT)]])
    with pytest.raises(ValueError, match="invariant 11"):
        distributed_step.load_plan(broken, PROFILE, program=str(CLI))


# On processes (default tier: W <= 8).

@needs_cli
@needs_processes
def test_p1_g4_heavy_group_rotating_between_two_blocks():
    result, report = check(P1_G4, 1)
    assert result.world == 4
    assert_passes(result, report, apart=True)
    # About 60 % of the barrier model: each block runs its own chain.
    assert result.model_seconds < 0.65 * result.barrier_seconds


@needs_cli
@needs_processes
def test_processes_that_wait_for_each_other_every_microbatch_fail():
    # The negative control: main's legacy runtime (a barrier after every
    # microbatch) measures the barrier model, not the dev model.
    result, report = check(P1_G4, 1, ranks_as="legacy", target_seconds=1.2)
    assert result.status == distributed_step.EXIT_FAIL and not result.passed, report
    assert abs(result.barrier_ratio - 1) <= distributed_step.TOLERANCE, report
    assert result.ratio > 1.5, report
    assert "step check: FAIL" in report


@needs_cli
@needs_processes
def test_p1_g8_groups_of_2_4_and_8():
    result, report = check(P1_G8, 1)
    assert result.world == 8
    assert_passes(result, report, apart=True)
    assert "CP groups of [2, 4, 8] ranks" in report


@needs_cli
@needs_processes
def test_p2_g4_on_the_command_line(tmp_path):
    path = tmp_path / "p2_g4.json"
    path.write_text(json.dumps(P2_G4))
    result = subprocess.run(
        [sys.executable, "-m", "dcpsched.conformance.distributed_step", str(path),
         "--cost-profile", PROFILE, "--pp", "2", "--dcpsched", str(CLI)],
        capture_output=True, text=True, timeout=240, check=False)
    report = result.stdout + result.stderr
    assert result.returncode == 0, report
    assert "W = 8 gloo processes (G = 4 DPxCP ranks x P = 2 pipeline ranks)" in report
    assert "1F1B over P = 2 stages" in report and "stage messages" in report
    assert "(within 10%)" in report and "more than 10% away, as it must be" in report
    assert "step check: PASS" in report


@needs_cli
@needs_processes
def test_a_cli_run_document_where_the_two_models_agree():
    document = json.loads(subprocess.run(
        [str(CLI), "schedule", "--total-gpus", "4", "--samples", "32", "--cost-profile",
         PROFILE, "--format", "json", "--compact"], capture_output=True, text=True,
        check=True).stdout)
    result = distributed_step.run_step_check(document, 1, target_seconds=1.5)
    report = "\n".join(result.lines)
    assert_passes(result, report, apart=False)
    assert result.model_barrier_gap <= distributed_step.APART
    assert "not required apart" in report


@needs_processes
def test_a_process_that_fails_ends_the_run_not_checked():
    # G = 6: start-up creates groups of 1 and 2 (and the whole 6), so the
    # lookup for a group of 4 raises KeyError on ranks 0-3.
    Group = distributed_step.Group
    plan = distributed_step.Plan(total_gpus=6, min_cp_size=1, microbatches=[
        [Group(0, 4, 0.1, True), Group(4, 2, 0.1, True)]], model_seconds=0.1,
        barrier_seconds=0.1)
    result = distributed_step.run_plan(plan, scale=1.0, timeout=60)
    report = "\n".join(result.lines)
    assert result.status == distributed_step.EXIT_NOT_CHECKED and not result.passed, report
    assert "KeyError: 4" in report and "step check: NOT CHECKED: process(es) " in report
    assert result.wall_seconds < 30, report


# Nightly: W = 16.

@nightly
@needs_cli
@needs_processes
def test_nightly_w16_p1_g16():
    # Longer ops: a ring of 16 takes 15 message steps, each ~1 ms on 2 cores.
    result, report = check(P1_G16, 1, target_seconds=4.0)
    assert result.world == 16
    assert_passes(result, report, apart=True)
    assert "CP groups of [2, 4, 8, 16] ranks" in report


@nightly
@needs_cli
@needs_processes
def test_nightly_w16_p2_g8():
    result, report = check(P2_G8, 2, target_seconds=4.0)
    assert result.world == 16
    assert_passes(result, report, apart=True)


@nightly
@needs_cli
@needs_processes
def test_nightly_w8_interleaved_cli_document():
    # P = 2, V = 2 (interleaved 1F1B, groups of N = 2) at W = 8: every op of
    # both chunks, stage messages between the chunks included.
    document = json.loads(subprocess.run(
        [str(CLI), "schedule", "--total-gpus", "4", "--samples", "48", "--cost-profile",
         PROFILE, "--pp", "2", "--virtual-stages", "2", "--vpp", "2", "--format", "json",
         "--compact"], capture_output=True, text=True, check=True).stdout)
    result = distributed_step.run_step_check(document, 2, target_seconds=3.0)
    report = "\n".join(result.lines)
    assert result.world == 8
    assert_passes(result, report, apart=result.model_barrier_gap > distributed_step.APART)
