"""Parity with every golden case of tests/golden/*.jsonl, through Python.

Each case was produced by running upstream Megatron-LM's Python scheduler
(format: docs/specification.md "Golden vectors"). The module must return exactly upstream's
values and types: ids and lens as ints, leftovers as (id, len) tuples, exec
times as floats equal bit for bit. Where upstream failed (ok: false), the
module must raise ValueError. Where upstream returned a schedule its own
runtime cannot run (invariant 11: a CP group Megatron-LM never creates), the
module reproduces it with runnable=False and refuses it by default with
UnschedulableError. Packing-aware cases carry upstream's
max_num_seqs (Megatron-LM PR #6479's cap; null on files from commits
without it), which the module is given as it is.
"""

import pytest

import dcpsched
from conftest import GOLDEN_DIR, golden_cases, same_bits

CASES = golden_cases()


def as_pairs(samples):
    """The case's [[id, len], ...] as upstream passes it: (id, len) tuples."""
    return [(sample_id, length) for sample_id, length in samples]


def upstream_verdict(case):
    """dcpsched.verify's findings on upstream's own result (a step: as a
    one-microbatch schedule of the samples it placed)."""
    expect = case["expect"]
    samples = as_pairs(case["samples"])
    vpp_group = case["vpp_group"]
    if case["kind"] == "step":
        leftover_ids = {sample_id for sample_id, _ in expect["leftovers"]}
        samples = [pair for pair in samples if pair[0] not in leftover_ids]
        schedule = [expect["sample_ids"]]
        vpp_group = None
    else:
        schedule = expect["groups"]
    return dcpsched.verify(schedule, samples, case["total_gpus"],
                           case["max_seq_len_per_rank"], min_cp_size=case["min_cp_size"],
                           vpp_group=vpp_group, max_num_seqs=case["max_num_seqs"])


def is_unrunnable(case):
    """A dynamic-CP schedule case whose upstream schedule breaks invariant 11."""
    return (case["kind"] == "schedule" and case["scheduler"] != "dp_balanced"
            and case["expect"]["ok"] and bool(case["samples"])
            and any(v.startswith("invariant 11 ") for v in upstream_verdict(case)))


def run(case, **rank):
    """Runs the case through the module; returns the module's result.

    `rank` is empty, or rank=r for the per-rank view, and may hold
    runnable=False for the schedulers that take it."""
    samples = as_pairs(case["samples"])
    if case["kind"] == "step":
        assert case["scheduler"] == "packing_aware"
        return dcpsched.next_group_packing_aware(
            samples, case["total_gpus"], case["max_seq_len_per_rank"],
            min_cp_size=case["min_cp_size"], max_num_seqs=case["max_num_seqs"], **rank)
    if case["scheduler"] == "packing_aware":
        return dcpsched.schedule_dynamic_cp(
            samples, case["total_gpus"], case["max_seq_len_per_rank"],
            min_cp_size=case["min_cp_size"], vpp_group=case["vpp_group"],
            max_num_seqs=case["max_num_seqs"], **rank)
    if case["scheduler"] == "legacy":
        return dcpsched.schedule_legacy(
            samples, case["total_gpus"], case["max_seq_len_per_rank"],
            min_cp_size=case["min_cp_size"], vpp_group=case["vpp_group"], **rank)
    assert case["scheduler"] == "dp_balanced"
    return dcpsched.schedule_dp_balanced(
        samples, case["dp_size"], case["cp_size"], case["max_seq_len_per_rank"],
        max_num_seqs=case["max_num_seqs"], vpp_group=case["vpp_group"], **rank)


def assert_int_lists(actual, expected):
    assert actual == expected
    assert all(type(value) is int for rank in actual for value in rank)


def assert_step_equal(actual, expected):
    assert isinstance(actual, tuple) and len(actual) == 4
    micro_batches, leftovers, exec_times, sample_ids = actual
    assert_int_lists(micro_batches, expected["micro_batches"])
    assert_int_lists(sample_ids, expected["sample_ids"])
    assert leftovers == [tuple(pair) for pair in expected["leftovers"]]
    assert all(type(pair) is tuple for pair in leftovers)
    assert len(exec_times) == len(expected["exec_times"])
    for rank, (got, want) in enumerate(zip(exec_times, expected["exec_times"])):
        assert type(got) is float
        assert same_bits(got, float(want)), (
            f"rank {rank}: exec time {got!r} ({got.hex()}), "
            f"upstream {float(want)!r} ({float(want).hex()})")


def assert_schedule_equal(actual, expected):
    assert len(actual) == len(expected)
    for index, (got, want) in enumerate(zip(actual, expected)):
        assert got == want, f"microbatch {index} differs"
        assert all(type(i) is int for rank in got for i in rank)


@pytest.mark.parametrize("case", [case for _, case in CASES],
                         ids=[f"{where} {case['name']}" for where, case in CASES])
def test_matches_upstream(case):
    expect = case["expect"]
    if not expect["ok"]:
        with pytest.raises(ValueError):
            run(case)
        return
    if is_unrunnable(case):
        with pytest.raises(dcpsched.UnschedulableError,
                           match="^upstream returns a schedule its runtime cannot run: "
                                 "invariant 11 "):
            run(case)
        assert_schedule_equal(run(case, runnable=False), expect["groups"])
        return
    actual = run(case)
    if case["kind"] == "step":
        assert_step_equal(actual, expect)
    else:
        assert_schedule_equal(actual, expect["groups"])


def viewed_ranks(case):
    """Rank 0, a middle rank and the last rank of the case's G."""
    if case["scheduler"] == "dp_balanced":
        total = case["dp_size"] * case["cp_size"]
    else:
        total = case["total_gpus"]
    return sorted({0, total // 2, total - 1})


@pytest.mark.parametrize(
    "case",
    [case for _, case in CASES if case["expect"]["ok"]],
    ids=lambda case: case["name"])
def test_rank_view_is_the_slice(case):
    """rank=r gives rank r's part of upstream's result, on every golden case
    (schedule_dynamic_cp, schedule_legacy, schedule_dp_balanced,
    next_group_packing_aware)."""
    expect = case["expect"]
    extra = {"runnable": False} if is_unrunnable(case) else {}
    for rank in viewed_ranks(case):
        actual = run(case, rank=rank, **extra)
        if case["kind"] == "step":
            micro_batches, leftovers, exec_time, sample_ids = actual
            assert micro_batches == expect["micro_batches"][rank]
            assert sample_ids == expect["sample_ids"][rank]
            assert leftovers == [tuple(pair) for pair in expect["leftovers"]]
            assert type(exec_time) is float
            assert same_bits(exec_time, float(expect["exec_times"][rank]))
        else:
            assert actual == [microbatch[rank] for microbatch in expect["groups"]], (
                f"rank {rank}")
            assert all(type(i) is int for ids in actual for i in ids)


@pytest.mark.parametrize(
    "case",
    [case for _, case in CASES
     if case["expect"]["ok"] and case["scheduler"] != "dp_balanced"
     and case["samples"]],
    ids=lambda case: case["name"])
def test_verify_accepts_upstream_result(case):
    """Every dynamic-CP result upstream gave keeps the invariants, but for
    invariant 11 on its steps (a building block) and its unrunnable
    schedules, which break that one alone."""
    violations = upstream_verdict(case)
    if case["kind"] == "step" or is_unrunnable(case):
        violations = [v for v in violations if not v.startswith("invariant 11 ")]
    assert violations == []


def test_some_upstream_schedules_are_unrunnable():
    """The golden files hold schedules upstream returns and its runtime
    cannot run (non-power-of-two G); the counts are in README.md."""
    unrunnable = [case for _, case in CASES if is_unrunnable(case)]
    assert len(unrunnable) == 99
    assert all(case["total_gpus"] & (case["total_gpus"] - 1) for case in unrunnable)


def test_every_golden_file_is_read():
    files = {where.split(":")[0] for where, _ in CASES}
    assert files == {path.name for path in GOLDEN_DIR.glob("*.jsonl")}
    assert len(CASES) >= 1450
    # Megatron-LM PR #6479's vectors set max_num_seqs on some cases.
    assert any(case["max_num_seqs"] is not None for where, case in CASES
               if where.startswith("packing_aware_step_pr6479.jsonl"))
