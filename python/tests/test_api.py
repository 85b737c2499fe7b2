"""The module's interface: argument forms, result types, errors.

Wrong Python types raise TypeError naming the argument; input the core
rejects raises ValueError with the core's message; nothing crashes.
"""

import inspect
import random

import pytest

import dcpsched
from conftest import golden_cases

BATCH = [(7, 5000), (8, 300), (9, 1200)]
BATCH_SCHEDULE = [[[7], [7], [7], [7], [9, 8], [9, 8], [9, 8], [9, 8]]]


class Index:
    """An int-like object (as numpy.int64 or a 0-d integer tensor is)."""

    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


# --- argument forms -----------------------------------------------------------


def test_readme_example():
    assert dcpsched.schedule_dynamic_cp(BATCH, 8, 2048) == BATCH_SCHEDULE


def test_keywords_and_defaults():
    explicit = dcpsched.schedule_dynamic_cp(
        sample_id_seqlens=BATCH, total_gpus=8, max_seq_len_per_rank=2048,
        min_cp_size=1, vpp_group=None)
    assert explicit == dcpsched.schedule_dynamic_cp(BATCH, 8, 2048)


def test_pairs_may_be_lists_tuples_or_any_iterable():
    expected = dcpsched.schedule_dynamic_cp(BATCH, 8, 2048)
    assert dcpsched.schedule_dynamic_cp([list(p) for p in BATCH], 8, 2048) == expected
    assert dcpsched.schedule_dynamic_cp(tuple(BATCH), 8, 2048) == expected
    assert dcpsched.schedule_dynamic_cp(iter(BATCH), 8, 2048) == expected
    assert dcpsched.schedule_dynamic_cp((p for p in BATCH), 8, 2048) == expected


def test_int_like_objects_are_ints():
    batch = [(Index(i), Index(n)) for i, n in BATCH]
    assert dcpsched.schedule_dynamic_cp(batch, Index(8), Index(2048),
                                        min_cp_size=Index(1)) == BATCH_SCHEDULE


def test_ids_are_opaque_int64():
    low, high = -(2**63), 2**63 - 1
    schedule = dcpsched.schedule_dynamic_cp([(low, 10), (high, 20)], 2, 100)
    ids = {i for microbatch in schedule for rank in microbatch for i in rank}
    assert ids == {low, high}


def test_empty_batch():
    assert dcpsched.schedule_dynamic_cp([], 8, 2048) == []
    assert dcpsched.schedule_legacy([], 8, 2048) == []
    assert dcpsched.next_group_packing_aware([], 3, 2048) == (
        [[], [], []], [], [0.0, 0.0, 0.0], [[], [], []])


def test_results_are_fresh_lists():
    schedule = dcpsched.schedule_dynamic_cp(BATCH, 8, 2048)
    schedule[0][0].append(99)
    assert schedule[0][1] == [7]


def test_step_returns_upstreams_four_tuple():
    micro_batches, leftovers, exec_times, sample_ids = (
        dcpsched.next_group_packing_aware([(1, 100), (2, 300), (3, 200)], 2, 250))
    # 300 needs 2 ranks; then 200 and 100 fit beside it only at cp 2.
    assert sample_ids == [[2, 3], [2, 3]]
    assert micro_batches == [[300, 200], [300, 200]]
    assert exec_times == [300 * 300 / 2 + 200 * 200 / 2] * 2
    assert leftovers == [(1, 100)]


def test_vpp_group_aligns_the_microbatch_count():
    batch = [(i, 2048) for i in range(5)]
    assert len(dcpsched.schedule_dynamic_cp(batch, 1, 2048)) == 5
    assert len(dcpsched.schedule_dynamic_cp(batch, 1, 2048, vpp_group=1)) == 5


def test_dp_balanced_returns_positions_per_rank():
    samples = [(70, 500), (80, 300), (90, 1200), (100, 100)]
    schedule = dcpsched.schedule_dp_balanced(samples, dp_size=2, cp_size=2,
                                             max_seq_len_per_rank=1024)
    assert schedule == [[[0, 1, 2], [0, 1, 2], [3], [3]]]
    with_cap = dcpsched.schedule_dp_balanced(samples, 2, 2, 1024, max_num_seqs=1)
    assert with_cap == [[[0], [0], [1], [1]], [[2], [2], [3], [3]]]


# --- the per-rank view (rank=) ------------------------------------------------


def test_rank_view_is_the_slice_of_the_full_schedule():
    samples = [(i, 100 + 37 * i) for i in range(40)]
    for vpp_group in (None, 3):
        full = dcpsched.schedule_dynamic_cp(samples, 8, 256, vpp_group=vpp_group)
        assert len(full) > 1
        for rank in range(8):
            assert dcpsched.schedule_dynamic_cp(
                samples, 8, 256, vpp_group=vpp_group, rank=rank) == [
                    microbatch[rank] for microbatch in full]


def test_rank_view_of_the_readme_batch():
    assert dcpsched.schedule_dynamic_cp(BATCH, 8, 2048, rank=0) == [[7]]
    assert dcpsched.schedule_dynamic_cp(BATCH, 8, 2048, rank=Index(5)) == [[9, 8]]
    assert dcpsched.schedule_dynamic_cp([], 8, 2048, rank=3) == []
    assert dcpsched.schedule_dynamic_cp(BATCH, 8, 2048, rank=None) == BATCH_SCHEDULE


def test_rank_view_lists_are_fresh():
    view = dcpsched.schedule_dynamic_cp(BATCH, 8, 2048, rank=4)
    view[0].append(99)
    assert dcpsched.schedule_dynamic_cp(BATCH, 8, 2048, rank=4) == [[9, 8]]


def test_rank_view_of_dp_balanced():
    samples = [(10, 500), (11, 600), (12, 300), (13, 900), (14, 100)]
    full = dcpsched.schedule_dp_balanced(samples, 2, 2, 512)
    for rank in range(4):
        assert dcpsched.schedule_dp_balanced(samples, 2, 2, 512, rank=rank) == [
            microbatch[rank] for microbatch in full]


def test_rank_view_of_legacy():
    samples = [(i, 100 + 37 * i) for i in range(40)]
    full = dcpsched.schedule_legacy(samples, 8, 256)
    assert len(full) > 1
    for rank in range(8):
        assert dcpsched.schedule_legacy(samples, 8, 256, rank=rank) == [
            microbatch[rank] for microbatch in full]


def test_rank_view_of_the_step_is_that_ranks_part():
    samples = [(1, 100), (2, 300), (3, 200), (4, 900)]
    lens, leftovers, exec_times, ids = dcpsched.next_group_packing_aware(samples, 4, 250)
    for rank in range(4):
        assert dcpsched.next_group_packing_aware(samples, 4, 250, rank=rank) == (
            lens[rank], leftovers, exec_times[rank], ids[rank])
    assert dcpsched.next_group_packing_aware([], 3, 2048, rank=2) == ([], [], 0.0, [])


@pytest.mark.parametrize("call, message", [
    (lambda: dcpsched.schedule_dynamic_cp(BATCH, 8, 2048, rank=8),
     "rank is 8; it must be in [0, 8)"),
    (lambda: dcpsched.schedule_dynamic_cp(BATCH, 8, 2048, rank=-1),
     "rank is -1; it must be in [0, 8)"),
    (lambda: dcpsched.next_group_packing_aware(BATCH, 4, 2048, rank=4),
     "rank is 4; it must be in [0, 4)"),
    (lambda: dcpsched.schedule_dp_balanced(BATCH, 2, 3, 2048, rank=6),
     "rank is 6; it must be in [0, 6)"),
    (lambda: dcpsched.schedule_legacy(BATCH, 8, 2048, rank=8),
     "rank is 8; it must be in [0, 8)"),
])
def test_rank_outside_the_ranks_raises_value_error_naming_the_range(call, message):
    with pytest.raises(dcpsched.InvalidInputError) as raised:
        call()
    assert message in str(raised.value)
    assert isinstance(raised.value, ValueError)


def test_rank_is_keyword_only():
    with pytest.raises(TypeError):
        dcpsched.schedule_dynamic_cp(BATCH, 8, 2048, 1, None, None, 0)
    with pytest.raises(TypeError):
        dcpsched.next_group_packing_aware(BATCH, 8, 2048, 1, None, 0)
    with pytest.raises(TypeError, match="rank must be an int"):
        dcpsched.schedule_dynamic_cp(BATCH, 8, 2048, rank=1.0)


def test_signatures_are_introspectable():
    assert str(inspect.signature(dcpsched.schedule_dynamic_cp)) == (
        "(sample_id_seqlens, total_gpus, max_seq_len_per_rank, *, min_cp_size=1, "
        "vpp_group=None, max_num_seqs=None, rank=None, runnable=True)")
    assert str(inspect.signature(dcpsched.next_group_packing_aware)) == (
        "(sample_seqlens, total_gpus, max_seq_len_per_rank, *, min_cp_size=1, "
        "max_num_seqs=None, rank=None)")
    assert str(inspect.signature(dcpsched.verify)) == (
        "(schedule, sample_id_seqlens, total_gpus, max_seq_len_per_rank, *, min_cp_size=1, "
        "vpp_group=None, max_num_seqs=None, scheduler=None)")
    assert str(inspect.signature(dcpsched.schedule_cost_aware)) == (
        "(sample_id_seqlens, total_gpus, max_seq_len_per_rank, *, profile, min_cp_size=1, "
        "vpp_group=None, max_num_seqs=None, rank=None, details=False, pipeline_stages=1, "
        "virtual_stages=1, microbatch_group_size=None, layers_per_stage=1, "
        "forward_share=0.3333333333333333, expert_parallel_size=None, runtime='dev')")
    assert str(inspect.signature(dcpsched.schedule_dp_balanced)) == (
        "(sample_id_seqlens, dp_size, cp_size, max_seq_len_per_rank, *, "
        "max_num_seqs=None, vpp_group=None, rank=None)")
    assert str(inspect.signature(dcpsched.schedule_legacy)) == (
        "(sample_id_seqlens, total_gpus, max_seq_len_per_rank, *, min_cp_size=1, "
        "vpp_group=None, rank=None, runnable=True)")
    assert str(inspect.signature(dcpsched.benchmark_workload)) == (
        "(num_samples=256, *, seed=5154, preset='benchmark')")
    assert dcpsched.__version__


# The required arguments of each function; everything after them is optional.
REQUIRED = {
    "schedule_dynamic_cp": (BATCH, 8, 2048),
    "schedule_legacy": (BATCH, 8, 2048),
    "next_group_packing_aware": (BATCH, 8, 2048),
    "schedule_dp_balanced": (BATCH, 2, 4, 2048),
    "verify": (BATCH_SCHEDULE, BATCH, 8, 2048),
}


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_optional_arguments_are_keyword_only(name):
    """schedule_dynamic_cp takes (..., vpp_group, max_num_seqs) and
    schedule_dp_balanced (..., max_num_seqs, vpp_group): a positional call
    could swap them unnoticed, so none is accepted."""
    function = getattr(dcpsched, name)
    required = REQUIRED[name]
    function(*required)  # the required ones stay positional
    with pytest.raises(TypeError, match="incompatible function arguments"):
        function(*required, 1)
    optional = [p for p in inspect.signature(function).parameters.values()
                if p.default is not inspect.Parameter.empty]
    assert optional and all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in optional)


# --- errors from the core: ValueError with its message -------------------------


@pytest.mark.parametrize("call, message", [
    (lambda: dcpsched.schedule_dynamic_cp(BATCH, 0, 2048),
     "total_gpus is 0; it must be in [1, 65536]"),
    (lambda: dcpsched.schedule_dynamic_cp(BATCH, 8, 0),
     "max_seq_len_per_rank is 0"),
    (lambda: dcpsched.schedule_dynamic_cp(BATCH, 8, 2048, min_cp_size=3),
     "min_cp_size is 3; it must be a power of two"),
    (lambda: dcpsched.schedule_dynamic_cp(BATCH, 8, 2048, vpp_group=0),
     "vpp_group is 0"),
    (lambda: dcpsched.schedule_dynamic_cp([(1, 5), (1, 6)], 8, 2048),
     "sample id 1 appears twice (indices 0 and 1)"),
    (lambda: dcpsched.schedule_dynamic_cp([(1, 0)], 8, 2048),
     "sample 1 (index 0) has length 0"),
    (lambda: dcpsched.schedule_dynamic_cp([(4, 9000)], 4, 2048),
     "Sequence length 9000 (sample 4) requires CP size 8, but only 4 DPxCP "
     "ranks are available"),
    (lambda: dcpsched.next_group_packing_aware([(4, 9000)], 4, 2048),
     "requires CP size 8"),
    (lambda: dcpsched.schedule_legacy([(1, 5)], -1, 2048),
     "total_gpus is -1"),
    (lambda: dcpsched.schedule_dp_balanced([(0, 3000)], 2, 1, 2048),
     "sample at position 0 has length 3000"),
    (lambda: dcpsched.schedule_dp_balanced([(0, 10)], 0, 1, 2048),
     "dp_size is 0"),
])
def test_invalid_input_raises_value_error_with_the_core_message(call, message):
    with pytest.raises(dcpsched.InvalidInputError) as error:
        call()
    assert isinstance(error.value, ValueError)
    assert message in str(error.value)


def test_upstream_failures_raise_value_error():
    # Upstream raises IndexError here (docs/specification.md, expand-once defect).
    with pytest.raises(dcpsched.UnschedulableError, match="total_gpus=5"):
        dcpsched.schedule_dynamic_cp([(0, 1), (1, 1)], 5, 1)
    # Upstream hangs here (docs/specification.md, golden vectors section).
    with pytest.raises(dcpsched.UnschedulableError, match="VPP alignment"):
        dcpsched.schedule_dynamic_cp([(0, 1), (1, 1)], 3, 1, vpp_group=2)
    # Upstream: AssertionError "Not enough samples to move".
    with pytest.raises(dcpsched.UnschedulableError, match="not enough samples to move"):
        dcpsched.schedule_dp_balanced([(0, 2048)], 5, 1, 2048)
    assert issubclass(dcpsched.UnschedulableError, ValueError)
    assert not issubclass(dcpsched.UnschedulableError, dcpsched.InvalidInputError)


def test_align_to_vpp_group_is_the_schedulers_alignment():
    """On every golden VPP case upstream scheduled, aligning the unaligned
    schedule gives upstream's aligned one, and the argument is unchanged."""
    cases = [case for _, case in golden_cases()
             if case["kind"] == "schedule" and case["scheduler"] == "packing_aware"
             and case["vpp_group"] and case["vpp_group"] > 1 and case["expect"]["ok"]]
    assert len(cases) > 50
    for case in cases:
        samples = [tuple(pair) for pair in case["samples"]]
        # Upstream's schedule, runnable or not: alignment is upstream's step.
        unaligned = dcpsched.schedule_dynamic_cp(samples, case["total_gpus"],
                                                 case["max_seq_len_per_rank"],
                                                 min_cp_size=case["min_cp_size"], runnable=False)
        before = [[list(rank) for rank in microbatch] for microbatch in unaligned]
        aligned = dcpsched.align_to_vpp_group(unaligned, case["vpp_group"])
        assert aligned == case["expect"]["groups"], case["name"]
        assert unaligned == before


def test_align_to_vpp_group_errors():
    with pytest.raises(dcpsched.InvalidInputError, match="vpp_group"):
        dcpsched.align_to_vpp_group([[[1], [2]]], 0)
    with pytest.raises(dcpsched.InvalidInputError):
        dcpsched.align_to_vpp_group([[[1], [2]], [[3]]], 2)  # ragged
    with pytest.raises(dcpsched.UnschedulableError):
        dcpsched.align_to_vpp_group([[[1], [1]]], 2)  # one CP group: nothing to split
    with pytest.raises(TypeError, match="schedule"):
        dcpsched.align_to_vpp_group(None, 2)


# --- wrong Python types: TypeError naming the argument -------------------------


@pytest.mark.parametrize("call, message", [
    (lambda: dcpsched.schedule_dynamic_cp(None, 8, 2048),
     "sample_id_seqlens must be a list of (id, len) pairs, not NoneType"),
    (lambda: dcpsched.schedule_dynamic_cp(5, 8, 2048),
     "sample_id_seqlens must be a list of (id, len) pairs, not int"),
    (lambda: dcpsched.schedule_dynamic_cp("ab", 8, 2048),
     "sample_id_seqlens must be a list of (id, len) pairs, not str"),
    (lambda: dcpsched.schedule_dynamic_cp([(1, 5), 7], 8, 2048),
     "sample_id_seqlens[1] must be an (id, len) pair, not int"),
    (lambda: dcpsched.schedule_dynamic_cp([(1, 5, 6)], 8, 2048),
     "sample_id_seqlens[0] must be an (id, len) pair, not 3 items"),
    (lambda: dcpsched.schedule_dynamic_cp([(1, 5.0)], 8, 2048),
     "sample_id_seqlens[0][1] (len) must be an int, not float"),
    (lambda: dcpsched.schedule_dynamic_cp([("a", 5)], 8, 2048),
     "sample_id_seqlens[0][0] (id) must be an int, not str"),
    (lambda: dcpsched.schedule_dynamic_cp(BATCH, 8.0, 2048),
     "total_gpus must be an int, not float"),
    (lambda: dcpsched.schedule_dynamic_cp(BATCH, 8, "2048"),
     "max_seq_len_per_rank must be an int, not str"),
    (lambda: dcpsched.schedule_dynamic_cp(BATCH, 8, 2048, min_cp_size=None),
     "min_cp_size must be an int, not NoneType"),
    (lambda: dcpsched.schedule_dynamic_cp(BATCH, 8, 2048, vpp_group="2"),
     "vpp_group must be an int, not str"),
    (lambda: dcpsched.next_group_packing_aware({1: 2}.items(), 8, 2.5),
     "max_seq_len_per_rank must be an int, not float"),
    (lambda: dcpsched.schedule_dp_balanced(BATCH, 2, 2, 2048, max_num_seqs=1.5),
     "max_num_seqs must be an int, not float"),
    (lambda: dcpsched.verify([[[7]], 3], BATCH, 8, 2048),
     "schedule[1] must be a list of per-rank id lists, not int"),
    (lambda: dcpsched.verify([[[7, None]]], BATCH, 8, 2048),
     "schedule[0][0][1] must be an int, not NoneType"),
    (lambda: dcpsched.verify(None, BATCH, 8, 2048),
     "schedule must be a list of microbatches, not NoneType"),
])
def test_wrong_types_raise_type_error_naming_the_argument(call, message):
    with pytest.raises(TypeError) as error:
        call()
    assert str(error.value) == message


def test_missing_arguments_raise_type_error():
    with pytest.raises(TypeError):
        dcpsched.schedule_dynamic_cp(BATCH)
    with pytest.raises(TypeError):
        dcpsched.schedule_dynamic_cp(BATCH, 8, 2048, unknown=1)


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 10**30])
def test_ints_outside_int64_raise_value_error(value):
    with pytest.raises(ValueError, match="must fit in a signed 64-bit integer"):
        dcpsched.schedule_dynamic_cp([(value, 5)], 8, 2048)
    with pytest.raises(ValueError, match="total_gpus is"):
        dcpsched.schedule_dynamic_cp(BATCH, value, 2048)


def test_errors_raised_while_reading_arguments_pass_through():
    class Broken:
        def __index__(self):
            raise KeyError("from __index__")

    def samples():
        yield (1, 5)
        raise KeyError("from the iterator")

    with pytest.raises(KeyError, match="from __index__"):
        dcpsched.schedule_dynamic_cp([(1, Broken())], 8, 2048)
    with pytest.raises(KeyError, match="from the iterator"):
        dcpsched.schedule_dynamic_cp(samples(), 8, 2048)


def test_a_list_emptied_while_it_is_read_does_not_crash():
    batch = [(1, 100), (2, 200), (3, 300)]

    class Emptying:
        def __index__(self):
            batch.clear()
            return 10

    batch.insert(0, (Emptying(), 50))
    # The pair being read is held; the rest of the (now empty) list is gone.
    assert dcpsched.schedule_dynamic_cp(batch, 2, 2048) == [[[10], [10]]]


def test_runnable_refuses_what_the_runtime_cannot_run():
    """At G = 12 upstream puts a 10000-token sample on 8 ranks, a CP group the
    runtime never creates there (1, 2, 4 and 12): refused by default, and
    upstream's schedule as it is with runnable=False, which verify flags."""
    batch = [(0, 10000)] + [(i, 500) for i in range(1, 6)]
    for schedule in (dcpsched.schedule_dynamic_cp, dcpsched.schedule_legacy):
        with pytest.raises(dcpsched.UnschedulableError,
                           match=r"^upstream returns a schedule its runtime cannot run: "
                                 r"invariant 11 \(runtime groups\): microbatch 0 ranks 0-7"):
            schedule(batch, 12, 2048)
        upstream = schedule(batch, 12, 2048, runnable=False)
        assert upstream[0][:8] == [[0]] * 8
        violations = dcpsched.verify(upstream, batch, 12, 2048)
        assert len(violations) == 1 and violations[0].startswith("invariant 11 (runtime groups)")
        assert schedule(batch, 12, 2048, rank=3, runnable=False) == [[0]]


# --- max_num_seqs: Megatron-LM PR #6479's cap on the samples of one rank ------


def random_batch(rng, count):
    """`count` samples of 1..600 tokens, ids 0..count-1."""
    return [(i, rng.randint(1, 600)) for i in range(count)]


def most_samples_on_a_rank(schedule):
    return max(len(rank) for microbatch in schedule for rank in microbatch)


@pytest.mark.parametrize("cap", [1, 2, 3, 4])
def test_max_num_seqs_caps_the_samples_of_every_rank(cap):
    rng = random.Random(cap)
    binding = 0  # batches where the cap had something to cap
    for _ in range(40):
        batch = random_batch(rng, rng.randint(1, 60))
        total_gpus, budget = rng.choice([(2, 1024), (4, 2048), (6, 1024), (8, 4096)])
        # Upstream's schedule: at G = 6 its fill widens groups to 4 ranks,
        # which the runtime does not create there (invariant 11, refused by
        # default); every other invariant holds.
        capped = dcpsched.schedule_dynamic_cp(batch, total_gpus, budget, max_num_seqs=cap,
                                              runnable=False)
        assert most_samples_on_a_rank(capped) <= cap
        violations = dcpsched.verify(capped, batch, total_gpus, budget, max_num_seqs=cap)
        assert all(v.startswith("invariant 11 ") for v in violations), violations
        assert not violations or total_gpus == 6
        step = dcpsched.next_group_packing_aware(batch, total_gpus, budget, max_num_seqs=cap)
        assert max(len(ids) for ids in step[3]) <= cap
        binding += most_samples_on_a_rank(
            dcpsched.schedule_dynamic_cp(batch, total_gpus, budget, runnable=False)) > cap
    assert binding > 0


def test_a_cap_of_at_least_the_sample_count_changes_nothing():
    rng = random.Random(6479)
    for _ in range(40):
        batch = random_batch(rng, rng.randint(1, 40))
        total_gpus, budget, vpp = rng.choice([(2, 1024, None), (4, 2048, 2), (8, 512, 3)])
        uncapped = dcpsched.schedule_dynamic_cp(batch, total_gpus, budget, vpp_group=vpp)
        uncapped_step = dcpsched.next_group_packing_aware(batch, total_gpus, budget)
        for cap in (len(batch), len(batch) + 1, 1 << 40):
            assert dcpsched.schedule_dynamic_cp(batch, total_gpus, budget, vpp_group=vpp,
                                                max_num_seqs=cap) == uncapped
            assert dcpsched.next_group_packing_aware(batch, total_gpus, budget,
                                                     max_num_seqs=cap) == uncapped_step


def test_rank_view_under_a_cap_is_the_slice():
    batch = random_batch(random.Random(3), 50)
    full = dcpsched.schedule_dynamic_cp(batch, 4, 1024, max_num_seqs=2)
    for rank in range(4):
        assert dcpsched.schedule_dynamic_cp(batch, 4, 1024, max_num_seqs=2, rank=rank) == [
            microbatch[rank] for microbatch in full]


CAPPED_CALLS = {
    "schedule_dynamic_cp": lambda cap: dcpsched.schedule_dynamic_cp(
        BATCH, 8, 2048, max_num_seqs=cap),
    "next_group_packing_aware": lambda cap: dcpsched.next_group_packing_aware(
        BATCH, 8, 2048, max_num_seqs=cap),
    "verify": lambda cap: dcpsched.verify(BATCH_SCHEDULE, BATCH, 8, 2048, max_num_seqs=cap),
}


@pytest.mark.parametrize("function", sorted(CAPPED_CALLS))
@pytest.mark.parametrize("cap, message", [
    (0, "max_num_seqs is 0; it must be absent or at least 1"),
    (-1, "max_num_seqs is -1; it must be absent or at least 1"),
    (2.0, "max_num_seqs must be None (no cap) or an int >= 1"),
    ("3", "max_num_seqs must be None (no cap) or an int >= 1"),
])
def test_a_bad_max_num_seqs_is_refused_saying_what_to_pass(function, cap, message):
    with pytest.raises(dcpsched.InvalidInputError) as error:
        CAPPED_CALLS[function](cap)
    assert message in str(error.value)


def test_verify_reports_a_schedule_that_breaks_the_cap():
    batch = [(i, 10) for i in range(6)]
    schedule = dcpsched.schedule_dynamic_cp(batch, 2, 1000)
    assert most_samples_on_a_rank(schedule) == 3  # three samples on each of two ranks
    assert dcpsched.verify(schedule, batch, 2, 1000) == []
    assert dcpsched.verify(schedule, batch, 2, 1000, max_num_seqs=3) == []
    violations = dcpsched.verify(schedule, batch, 2, 1000, max_num_seqs=2)
    assert violations and all(v.startswith("invariant 10 (sequence cap)") for v in violations)
    assert "holds 3 samples > max_num_seqs 2" in violations[0]
