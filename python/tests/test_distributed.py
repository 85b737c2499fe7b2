"""The distributed harness (python3 -m dcpsched.conformance --distributed W)
against the fixture checkout tests/fixtures/megatron_pipeline/ (a small
pipeline of this project's own, shaped like upstream's run(): gather,
schedule, reroute, pack, broadcast; scheduling by dcpsched), on W gloo
processes: everything equal at W = 4; a drop-in that swaps two samples
differs (exit 1) and one that raises on one rank only brings every rank
down under the deadline (exit 3, NOT CHECKED, no hang), both at W = 2 to
keep the default tier short; usage errors exit 2. The timing mode
(--timing) at W = 2 reports run() and scheduler times per topology, with
shares between 0 and 1, and reports no figure (exit 1) when outputs differ.
Every microbatch also goes through the fixture's CP group lookup and
get_batch (its parallel_state.py); at W = 6 (G = 6, not a power of two)
upstream's schedule fails there and the drop-in refuses it with invariant
11 (needs the core's invariant 11), and the comparison of lookup records is
tested on records alone. W = 8 and W = 12 run in the nightly tier only
(DCPSCHED_NIGHTLY_DISTRIBUTED=1, scripts/test.sh --nightly). No Megatron-LM
code is needed.
"""

import io
import os
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest
import torch

import dcpsched.megatron
from dcpsched.conformance import (cli, distributed, distributed_cases, distributed_timing,
                                  records)

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
PIPELINE = FIXTURES / "megatron_pipeline"
DROP_IN = pathlib.Path(dcpsched.megatron.__file__).resolve()
CLOSING = re.compile(r"^distributed conformance: (\d+) cases on (\d+) ranks, (\d+) equal on "
                     r"every rank, (\d+) differ, (\d+) both reject \(on every rank\), (\d+) "
                     r"upstream's runtime cannot run upstream's schedule \(dcpsched refuses: "
                     r"invariant 11\); (\d+) rank records compared, (\d+) microbatches through "
                     r"the CP group lookup$", re.M)
LOOKUP_LINE = re.compile(r"^group lookup: every microbatch of every rank, both variants, .*: "
                         r"(\d+) in all, get_batch run on \d+ .*; upstream's schedule fails "
                         r"there in (\d+) case\(s\); (\d+) case\(s\) at an odd G not looked "
                         r"up", re.M)


def harness(*args, timeout=240):
    """Runs the command; returns (exit status, stdout + stderr)."""
    result = subprocess.run(
        [sys.executable, "-m", "dcpsched.conformance", *map(str, args)],
        capture_output=True, text=True, timeout=timeout, check=False)
    return result.returncode, result.stdout + result.stderr


def closing(output):
    match = CLOSING.search(output)
    assert match, output
    return [int(x) for x in match.groups()]


def test_the_fixture_pipeline_is_equal_on_every_rank_at_w4():
    # No --drop-in: the package's own, dcpsched/megatron.py.
    status, output = harness("--megatron", PIPELINE, "--distributed", 4, "--batches", 8)
    assert status == 0, output
    assert f"drop-in {DROP_IN}" in output, output
    # Which upstream was checked: the fixture is none of the known ones.
    assert "upstream file: " in output and "sha256" in output
    assert "upstream files: NOT the files dcpsched was checked against" in output
    assert "shim: device" in output and "stand-in: RerunDataIterator" in output
    # 8 cases: 7 answered and equal, the last with a sample too long for its group;
    # every microbatch of every rank of the 7 went through the CP group lookup.
    cases, world, equal, differ, both, runtime, compared, lookups = closing(output)
    assert (cases, world, equal, differ, both, runtime, compared) == (8, 4, 7, 0, 1, 0, 32)
    assert LOOKUP_LINE.search(output).groups() == (str(lookups), "0", "0"), output
    assert lookups >= 2 * 4 * 7  # two variants, four ranks, at least one microbatch each
    assert "NOT CHECKED" not in output and "differ:" not in output


SWAPPING_DROP_IN = '''
import importlib.util
spec = importlib.util.spec_from_file_location("real_drop_in", {example!r})
real = importlib.util.module_from_spec(spec)
spec.loader.exec_module(real)


def install_into_megatron(verify=False):
    """The example's drop-in, but it swaps two samples of the first
    microbatch whose first and last ranks hold different ids."""
    base = real.install_into_megatron(verify)

    class Swapping(base):
        def get_groups_and_subsamples(self, sample_id_seqlens):
            groups = super().get_groups_and_subsamples(sample_id_seqlens)
            for microbatch in groups:
                first, last = microbatch[0], microbatch[-1]
                if first and last and first[0] not in last and last[0] not in first:
                    a, b = first[0], last[0]
                    for ranks in microbatch:
                        ranks[:] = [b if i == a else a if i == b else i for i in ranks]
                    break
            return groups

    from megatron.core.datasets import data_schedule
    data_schedule.scheduler_map["default_dynamic_cp"] = Swapping
    return Swapping
'''


def test_a_drop_in_that_swaps_two_samples_differs(tmp_path):
    wrong = tmp_path / "wrong_drop_in.py"
    wrong.write_text(SWAPPING_DROP_IN.format(example=str(DROP_IN)))
    # W = 2 keeps the default tier short; the W = 4 run above covers W = 4.
    status, output = harness("--megatron", PIPELINE, "--distributed", 2, "--batches", 3,
                             "--drop-in", wrong)
    assert status == 1, output
    cases, world, equal, differ, _, runtime, _, _ = closing(output)
    assert (cases, world, runtime) == (3, 2, 0) and differ >= 1 and equal + differ <= 3
    assert "NOT CHECKED" not in output
    assert re.search(r"^differ: case \d+ .*\n  rank \d+: ", output, re.M), output


ONE_RANK_RAISES = '''
import importlib.util
import torch.distributed
spec = importlib.util.spec_from_file_location("real_drop_in", {example!r})
real = importlib.util.module_from_spec(spec)
spec.loader.exec_module(real)


def install_into_megatron(verify=False):
    base = real.install_into_megatron(verify)

    class RaisesOnRankOne(base):
        def get_groups_and_subsamples(self, sample_id_seqlens):
            if torch.distributed.get_rank() == 1:
                raise ValueError("planted: rank 1 only")
            return super().get_groups_and_subsamples(sample_id_seqlens)

    from megatron.core.datasets import data_schedule
    data_schedule.scheduler_map["default_dynamic_cp"] = RaisesOnRankOne
    return RaisesOnRankOne
'''


def test_a_rank_that_fails_alone_brings_the_others_down(tmp_path):
    wrong = tmp_path / "one_rank_raises.py"
    wrong.write_text(ONE_RANK_RAISES.format(example=str(DROP_IN)))
    status, output = harness("--megatron", PIPELINE, "--distributed", 2, "--batches", 2,
                             "--drop-in", wrong, "--distributed-timeout", 10, timeout=120)
    assert status == 3, output
    assert "NOT CHECKED" in output and "0 rank records compared" in output


def test_the_default_drop_in_is_the_packages():
    """Without --drop-in the harness installs the drop-in the package ships,
    wherever the package is installed (a wheel has no python/examples/)."""
    assert cli._default_drop_in() == DROP_IN  # pylint: disable=protected-access
    assert DROP_IN.parent == pathlib.Path(dcpsched.__file__).resolve().parent


def test_usage_and_input_errors_exit_2(tmp_path):
    status, output = harness("--megatron", PIPELINE, "--distributed", 1)
    assert status == 2 and "W >= 2" in output
    # The scheduling-only fixture has no wrap_data_iterator: named, exit 2.
    status, output = harness("--megatron", FIXTURES / "megatron_calls_dcpsched",
                             "--distributed", 4, "--drop-in", DROP_IN)
    assert status == 2 and "wrap_data_iterator" in output, output
    status, output = harness("--megatron", PIPELINE, "--distributed", 4, "--drop-in",
                             tmp_path / "none.py")
    assert status == 2 and "drop-in file" in output, output
    status, output = harness("--megatron", tmp_path, "--distributed", 4)
    assert status == 2 and "not found" in output, output
    status, output = harness("--megatron", PIPELINE, "--timing")
    assert status == 2 and "--timing needs --distributed" in output, output
    status, output = harness("--megatron", PIPELINE, "--distributed", 2, "--timing",
                             "--timing-samples", 3, "--drop-in", DROP_IN)
    assert status == 2 and "multiple of W" in output, output


def test_records_are_bit_for_bit():
    zero = records.of_result((iter([{"x": torch.tensor([0.0])}]), 1, 2.0, 4.0))
    negative_zero = records.of_result((iter([{"x": torch.tensor([-0.0])}]), 1, 2.0, 4.0))
    assert records.difference(zero, zero) is None
    assert "x" in records.difference(zero, negative_zero)
    wider = records.of_result((iter([{"x": torch.tensor([0.0], dtype=torch.float64)}]), 1,
                               2.0, 4.0))
    assert "tensor" in records.difference(zero, wider)
    int_count = records.of_result((iter([]), 1, 2.0, 4.0))
    float_count = records.of_result((iter([]), 1.0, 2.0, 4.0))
    assert "num_micro_batches" in records.difference(int_count, float_count)
    raised = records.of_error(ValueError("no"))
    assert records.difference(zero, raised)


def test_the_cases_cover_the_issue_topologies_and_families():
    cases = distributed_cases.generate(8, 40, 5154)
    shapes = {(c["tp"], c["dp"], c["cp"]) for c in cases}
    assert {(1, 8, 1), (1, 4, 2), (1, 2, 4), (1, 1, 8), (2, 4, 1), (2, 2, 2)} <= shapes
    assert {c["family"] for c in cases} == {"benchmark", "long", "short", "boundary",
                                            "too_long"}
    assert {c["vpp"] for c in cases} == {None, 2}
    assert {c["min_cp_size"] for c in cases} == {1, 2}
    assert any(c["thd_max_packed_sequences"] for c in cases)
    for case in cases:
        assert all(len(items) == case["num_microbatches"] for items in case["items"])
        assert all(item for items in case["items"] for item in items)
    assert cases == distributed_cases.generate(8, 40, 5154)


@pytest.mark.skipif(os.environ.get("DCPSCHED_NIGHTLY_DISTRIBUTED") != "1",
                    reason="nightly tier: DCPSCHED_NIGHTLY_DISTRIBUTED=1 (scripts/test.sh "
                           "--nightly)")
def test_the_fixture_pipeline_is_equal_on_every_rank_at_w8():
    status, output = harness("--megatron", PIPELINE, "--distributed", 8, "--batches", 24,
                             "--drop-in", DROP_IN, timeout=900)
    assert status == 0, output
    cases, world, equal, differ, both, runtime, compared, lookups = closing(output)
    assert (cases, world, differ, both, runtime, compared) == (24, 8, 0, 1, 0, 24 * 8)
    assert equal == 23 and lookups > 0
    print(textwrap.indent(output, "  "))


TIMING_LINE = re.compile(
    r"^timing: tp 1 x dp (\d+) x cp (\d+): (\d+) samples, (\d+) per DP rank, (\d+) "
    r"microbatches; run\(\) upstream ([\d.e-]+ m?s) \(scheduler ([\d.e-]+ m?s), share "
    r"([\d.]+)\), drop-in ([\d.e-]+ m?s) \(scheduler ([\d.e-]+ m?s), share ([\d.]+)\); "
    r"run\(\) upstream/drop-in ([\d.]+)x, scheduler upstream/drop-in ([\d.e+-]+)x; equal "
    r"on every rank in all (\d+) repetitions$", re.M)


def seconds(text):
    """'12.3 ms' or '1.2 s' in seconds."""
    number, unit = text.split()
    return float(number) / (1000 if unit == "ms" else 1)


def test_the_timing_mode_reports_run_and_scheduler_times_at_w2():
    status, output = harness("--megatron", PIPELINE, "--distributed", 2, "--timing",
                             "--timing-samples", 32, "--repeats", 2, "--drop-in", DROP_IN)
    assert status == 0, output
    assert "timing: W = 2, one global batch of 32 samples" in output
    lines = TIMING_LINE.findall(output)
    assert [(int(dp), int(cp)) for dp, cp, *_ in lines] == [(2, 1), (1, 2)], output
    for (dp, _, samples, per_rank, microbatches, up_run, up_sched, up_share, our_run,
         our_sched, our_share, _, _, repeats) in lines:
        assert (int(samples), int(per_rank), int(repeats)) == (32, 32 // int(dp), 2)
        assert int(microbatches) >= 1
        assert 0 < seconds(up_sched) <= seconds(up_run)
        assert 0 < seconds(our_sched) <= seconds(our_run)
        assert 0 < float(up_share) < 1 and 0 < float(our_share) < 1
    # 2 topologies x 2 repetitions, every one equal on both ranks (no lookup: timing only).
    assert closing(output) == [4, 2, 4, 0, 0, 0, 8, 0]
    assert "NOT " not in output.split("distributed: W = 2")[1]


def test_the_timing_mode_reports_nothing_when_outputs_differ():
    cases = distributed_timing.cases(2, 4, 1, 5154)
    record = records.of_result((iter([{"x": torch.tensor([1])}]), 1, 2.0, 4.0))
    other = records.of_result((iter([{"x": torch.tensor([2])}]), 1, 2.0, 4.0))
    timed = {"seconds": 1.0, "run_seconds": 1.0, "scheduler_seconds": 0.5, "ids": None}

    def rank_result(drop_in):
        return {"shims": [], "stand_ins": [], "torch": "test",
                "classes": {"upstream": "Theirs", "drop_in": "Ours"},
                "cases": [{"index": case["index"],
                           "upstream": {**record, **timed, "scheduler_calls": ["Theirs"]},
                           "drop_in": {**(drop_in if case["index"] == 1 else record), **timed,
                                       "scheduler_calls": ["Ours"]}}
                          for case in cases]}
    out = io.StringIO()
    results = [rank_result(other), rank_result(record)]
    report = distributed._report  # pylint: disable=protected-access
    status = report(cases, results, 2, 1.0, out, "", timing=(4, 1))
    assert status == 1
    text = out.getvalue()
    assert "timing: NOT REPORTED" in text and "run() upstream" not in text
    assert re.search(r"^differ: case 1 .*\n  rank 0: ", text, re.M), text
    # The same records, all equal: figures, exit 0.
    out = io.StringIO()
    status = report(cases, [rank_result(record)] * 2, 2, 1.0, out, "", timing=(4, 1))
    assert status == 0 and len(TIMING_LINE.findall(out.getvalue())) == 2, out.getvalue()
    with pytest.raises(ValueError):
        distributed_timing.cases(8, 12, 1, 5154)


def test_at_w6_upstreams_schedule_fails_the_lookup_and_dcpsched_refuses():
    """dp 3 x cp 2 and dp 6 x cp 1 (G = 6, not a power of two: the runtime
    has CP groups of 1, 2 and 6 only) and tp 2 x dp 3 (G = 3, odd: start-up
    refuses it). The fixture's scheduler returns upstream's schedule, a CP
    group of 4 among it; the drop-in refuses it with invariant 11 (needs the
    core's invariant 11)."""
    status, output = harness("--megatron", PIPELINE, "--distributed", 6, "--batches", 3,
                             "--drop-in", DROP_IN)
    assert status == 0, output
    assert "1x3x2" in output and "1x6x1" in output and "2x3x1" in output
    cases, world, equal, differ, both, runtime, compared, lookups = closing(output)
    assert (cases, world, equal, differ, both, runtime, compared) == (3, 6, 1, 0, 0, 2, 18)
    _, failed, odd = LOOKUP_LINE.search(output).groups()
    assert (failed, odd) == ("2", "1"), output
    # Upstream's variant went through the lookup on every rank; the drop-in's none.
    assert lookups >= 2 * 6
    reports = re.findall(r"^runtime cannot run: case (\d+) \(runtime_groups\): tp 1 x dp (\d) x "
                         r"cp (\d).*\n  upstream's runtime: rank \d+ stage 0 microbatch \d+: "
                         r"local_cp_size 4: the lookup raises KeyError: 4\n(?:  upstream's .*\n)?"
                         r"  drop-in: UnschedulableError: upstream returns a schedule its runtime "
                         r"cannot run: invariant 11 \(runtime groups\): ", output, re.M)
    assert sorted((int(d), int(c)) for _, d, c in reports) == [(3, 2), (6, 1)], output
    assert "shim: torch.distributed.new_group" in output


@pytest.mark.skipif(os.environ.get("DCPSCHED_NIGHTLY_DISTRIBUTED") != "1",
                    reason="nightly tier: DCPSCHED_NIGHTLY_DISTRIBUTED=1 (scripts/test.sh "
                           "--nightly)")
def test_at_w12_every_schedule_the_runtime_cannot_run_is_refused():
    """G = 12 and 6 (tp 2): no CP group of 8 (or 4) exists there; the first
    case of each tp 1 topology is of the runtime-groups family."""
    status, output = harness("--megatron", PIPELINE, "--distributed", 12, "--batches", 12,
                             "--drop-in", DROP_IN, timeout=1200)
    assert status == 0, output
    cases, world, equal, differ, both, runtime, compared, _ = closing(output)
    assert (cases, world, differ, both, compared) == (12, 12, 0, 1, 12 * 12)
    assert runtime >= 3 and equal + runtime == 11, output  # 3 tp 1 topologies
    print(textwrap.indent(output, "  "))


def test_the_w6_cases_have_a_non_power_of_two_g_and_the_runtime_family():
    cases = distributed_cases.generate(6, 8, 5154)
    shapes = [(c["tp"], c["dp"], c["cp"]) for c in cases]
    assert shapes[:3] == [(1, 6, 1), (1, 3, 2), (2, 3, 1)]
    assert [c["family"] for c in cases[:3]] == ["runtime_groups", "runtime_groups", "benchmark"]
    for case in cases[:2]:  # upstream's schedule of it is one the runtime cannot run
        assert distributed_cases.runtime_cannot_run(case)
    # On a power-of-two G there is no such family.
    assert "runtime_groups" not in {c["family"] for c in distributed_cases.generate(8, 40, 5154)}


# The comparison of the records alone (no processes): one case on G = 6 ranks
# (tp 1), upstream's schedule [[0], [0], [0], [0], [1], [2]]: sample 0 on a CP
# group of 4, which the runtime does not have at G = 6.
SCHEDULE = [[[0], [0], [0], [0], [1], [2]]]
CASE = {"index": 0, "family": "runtime_groups", "tp": 1, "dp": 6, "cp": 1,
        "max_seqlen_per_dp_cp_rank": 8, "min_cp_size": 1, "vpp": None,
        "microbatch_group_size_per_vp_stage": None, "thd_max_packed_sequences": None,
        "num_microbatches": 1, "items": [[[1]]] * 6, "seed": 1}
REFUSAL = {"error": "UnschedulableError", "message": "upstream returns a schedule its runtime "
           "cannot run: invariant 11 (runtime groups): microbatch 0 ranks 0-3: ..."}


def lookup_entries(schedule, rank, failing):
    """One rank's lookup entries: the group the rule gives, or the KeyError
    where `failing` says the lookup raised."""
    entries = []
    for index, microbatch in enumerate(schedule):
        holders = [[sample, [r for r, ids in enumerate(microbatch) if sample in ids]]
                   for sample in microbatch[rank]]
        size = len(holders[0][1])
        entry = {"stage": 0, "microbatch": index, "local_cp_size": size, "holders": holders}
        if failing:
            entry["lookup_error"] = f"KeyError: {size}"
            entry["get_batch"] = None
        else:
            start = rank // size * size
            entry["group"] = list(range(start, start + size))
            entry["get_batch"] = [None] * 5 + [{"cp_group": {"group": entry["group"]}}, None]
        entries.append(entry)
    return entries


def records_of(upstream_failing, drop_in, schedule=SCHEDULE):
    """The six ranks' results: upstream answered with `schedule`, its lookup
    failing on ranks 0-3 where upstream_failing; the drop-in's record is
    REFUSAL, or "same" (upstream's, lookups included)."""
    results = []
    for rank in range(6):
        answered = {"num_micro_batches": {"type": "int", "repr": "1"},
                    "ids": [mb[rank] for mb in schedule], "seconds": 0.1, "run_seconds": 0.1,
                    "scheduler_seconds": 0.0, "scheduler_calls": ["Theirs"],
                    "lookup": lookup_entries(schedule, rank, upstream_failing and rank < 4)}
        ours = ({**answered, "scheduler_calls": ["Ours"]} if drop_in == "same" else
                {**drop_in, "seconds": 0.1, "run_seconds": 0.1, "scheduler_seconds": 0.0,
                 "scheduler_calls": []})
        results.append({"shims": [], "stand_ins": [], "torch": "test",
                        "classes": {"upstream": "Theirs", "drop_in": "Ours"},
                        "cases": [{"index": 0, "upstream": answered, "drop_in": ours}]})
    return results


def report(results):
    out = io.StringIO()
    status = distributed._report([CASE], results, 6, 1.0, out, "")  # pylint: disable=protected-access
    return status, out.getvalue()


def test_a_refusal_the_lookup_confirms_is_its_own_outcome():
    status, output = report(records_of(True, REFUSAL))
    assert status == 0, output
    assert closing(output)[3:6] == [0, 0, 1], output
    assert "upstream's runtime: rank 0 stage 0 microbatch 0: local_cp_size 4: the lookup " \
           "raises KeyError: 4" in output


def test_a_refusal_the_lookup_does_not_confirm_differs():
    runnable = [[[0], [0], [1], [1], [2], [3]]]
    status, output = report(records_of(False, REFUSAL, runnable))
    assert status == 1 and closing(output)[3:6] == [1, 0, 0], output
    assert "the drop-in refuses with invariant 11, unconfirmed" in output


def test_a_schedule_the_runtime_cannot_run_from_the_drop_in_differs():
    status, output = report(records_of(True, "same"))
    assert status == 1 and closing(output)[3:6] == [1, 0, 0], output
    assert "the drop-in returns a schedule the runtime cannot run" in output


def test_the_lookup_and_the_rule_must_agree():
    # A lookup that raises where runtime_groups.py finds the schedule runnable.
    runnable = [[[0], [0], [1], [1], [2], [3]]]
    status, output = report(records_of(True, REFUSAL, runnable))
    assert status == 1 and closing(output)[3:6] == [1, 0, 0], output
    status, output = report(records_of(True, "same", runnable))
    assert status == 1 and "differ:" in output, output


# The cost-aware mode (--cost-profile): the drop-in installed with
# install_into_megatron(cost_profile=P), and with only_where_upstream_fails=True,
# each rank checked against dcpsched.schedule_cost_aware's schedule of the batch.
PROFILE = "h200-llama3-8b"
COST_AWARE_CLOSING = re.compile(
    r"^cost-aware: (\d+) cases on (\d+) ranks \(profile (\S+); drop-in variants cost_aware, "
    r"only_where_upstream_fails\), (\d+) runnable and received as scheduled, (\d+) received "
    r"as scheduled at an odd G \(start-up refuses it: not looked up\), (\d+) refused on every "
    r"rank as dcpsched refuses, (\d+) differ; (\d+) rank records compared, (\d+) microbatches "
    r"through the CP group lookup(.*)$", re.M)
COST_AWARE_EXPECTED = re.compile(
    r"^cost-aware expected: .*packing-aware \(upstream's scheduler\) has no runnable schedule "
    r"for (\d+) of the (\d+) scheduled batches; the two variants' schedules differ in (\d+)$",
    re.M)
COST_AWARE_LOOKUPS = re.compile(r"^group lookup: .*: (\d+) in all, (\d+) checked against the CP "
                                r"group the expected schedule implies and found it", re.M)


def cost_aware_closing(output):
    """(cases, world, scheduled, odd, refused, differ, compared, lookups, suffix)."""
    match = COST_AWARE_CLOSING.search(output)
    assert match, output
    cases, world, profile, *counts, suffix = match.groups()
    assert profile == PROFILE
    return [int(cases), int(world)] + [int(x) for x in counts] + [suffix]


def test_cost_aware_ranks_receive_the_cost_aware_schedule_at_w2():
    """tp 1 x dp 1 x cp 2, tp 1 x dp 2 x cp 1 (looked up) and tp 2 x dp 1
    (G = 1, odd: received as scheduled, not looked up); the two variants'
    schedules differ (cost-aware's is not packing-aware's) in some cases."""
    status, output = harness("--megatron", PIPELINE, "--distributed", 2, "--batches", 3,
                             "--cost-profile", PROFILE)
    assert status == 0, output
    assert "upstream's scheduler not run" in output
    cases, world, scheduled, odd, refused, differ, compared, lookups, suffix = \
        cost_aware_closing(output)
    assert (cases, world, scheduled, odd, refused, differ, compared, suffix) == \
        (3, 2, 2, 1, 0, 0, 3 * 2 * 2, "")
    assert lookups >= 2 * 2 * 2  # two cases, two variants, two ranks, a microbatch at least
    total, confirmed = COST_AWARE_LOOKUPS.search(output).groups()
    assert int(total) == lookups and int(confirmed) == lookups, output  # tp 1: every entry
    _, scheduled_batches, apart = COST_AWARE_EXPECTED.search(output).groups()
    assert scheduled_batches == "3" and int(apart) >= 1, output
    assert "differ:" not in output and "NOT CHECKED" not in output


def test_cost_aware_schedules_where_packing_aware_cannot_at_w6():
    """G = 6 (tp 1 x dp 6, tp 1 x dp 3 x cp 2): both batches are of the
    runtime-groups family, where upstream's schedule is one its runtime
    cannot run (and packing-aware refuses: invariant 11); cost-aware
    schedules them, and every rank's lookup finds the scheduled group."""
    status, output = harness("--megatron", PIPELINE, "--distributed", 6, "--batches", 2,
                             "--cost-profile", PROFILE)
    assert status == 0, output
    assert "1x3x2" in output and "1x6x1" in output
    cases, world, scheduled, odd, refused, differ, compared, lookups, _ = \
        cost_aware_closing(output)
    assert (cases, world, scheduled, odd, refused, differ, compared) == (2, 6, 2, 0, 0, 0, 24)
    assert COST_AWARE_EXPECTED.search(output).groups()[:2] == ("2", "2"), output
    total, confirmed = COST_AWARE_LOOKUPS.search(output).groups()
    assert int(total) == int(confirmed) == lookups >= 2 * 2 * 6, output


COST_AWARE_REORDERING_DROP_IN = '''
import importlib.util
spec = importlib.util.spec_from_file_location("real_drop_in", {example!r})
real = importlib.util.module_from_spec(spec)
spec.loader.exec_module(real)


def install_into_megatron(verify=False, dp_cp_size=None, **cost_aware):
    """The real cost-aware drop-in, but it swaps the first two microbatches
    that differ: every sample still once, on one CP group, every lookup
    right; only the order is not the schedule's."""
    base = real.install_into_megatron(verify, dp_cp_size, **cost_aware)

    class Reordering(base):
        def get_groups_and_subsamples(self, sample_id_seqlens):
            groups = super().get_groups_and_subsamples(sample_id_seqlens)
            if len(groups) > 1 and groups[0] != groups[1]:
                groups[0], groups[1] = groups[1], groups[0]
            return groups

    from megatron.core.datasets import data_schedule
    data_schedule.scheduler_map["default_dynamic_cp"] = Reordering
    return Reordering
'''


def test_a_cost_aware_drop_in_that_reorders_microbatches_differs(tmp_path):
    """The first two batches at W = 2 put every sample on both ranks
    (min_cp_size 2), so no two samples can be swapped between ranks there:
    the planted error swaps two microbatches."""
    wrong = tmp_path / "wrong_cost_aware_drop_in.py"
    wrong.write_text(COST_AWARE_REORDERING_DROP_IN.format(example=str(DROP_IN)))
    status, output = harness("--megatron", PIPELINE, "--distributed", 2, "--batches", 2,
                             "--cost-profile", PROFILE, "--drop-in", wrong)
    assert status == 1, output
    cases, world, scheduled, _, _, differ, _, _, _ = cost_aware_closing(output)
    assert (cases, world, scheduled, differ) == (2, 2, 0, 2), output
    for variant in distributed_cases.COST_AWARE_VARIANTS:
        assert re.search(rf"^differ: case \d+ .*: {variant}\n  rank 0: the scheduler gave this "
                         r"rank microbatch 0: ids ", output, re.M), output
    assert "NOT CHECKED" not in output


def test_cost_aware_usage_errors_exit_2(capsys):
    assert cli.run(["--megatron", str(PIPELINE), "--cost-profile", PROFILE]) == 2
    assert "--cost-profile needs --distributed" in capsys.readouterr().err
    assert cli.run(["--megatron", str(PIPELINE), "--distributed", "2", "--cost-profile",
                    "no-such-profile"]) == 2
    assert "--cost-profile no-such-profile" in capsys.readouterr().err


# The cost-aware report on records alone (no processes): G = 2 (tp 1 x dp 2),
# one microbatch, sample 0 on rank 0 and sample 1 on rank 1.
COST_AWARE_SCHEDULE = [[[0], [1]]]
COST_AWARE_CASE = {"index": 0, "family": "benchmark", "tp": 1, "dp": 2, "cp": 1,
                   "max_seqlen_per_dp_cp_rank": 8, "min_cp_size": 1, "vpp": None,
                   "microbatch_group_size_per_vp_stage": None, "thd_max_packed_sequences": None,
                   "num_microbatches": 1, "items": [[[5]], [[7]]], "seed": 1,
                   "cost_aware": {"references": [COST_AWARE_SCHEDULE], "expected": {
                       "cost_aware": {"reference": 0},
                       "only_where_upstream_fails": {"reference": 0}}}}
TOO_LONG_REFUSAL = {"error": "InvalidInputError", "message": "sample 1 is too long"}


def cost_aware_records(change=None):
    """The two ranks' results, as received; change(rank, entry) alters them."""
    results = []
    for rank in range(2):
        received = {"num_micro_batches": {"type": "int", "repr": "1"}, "ids": [[rank]],
                    "seconds": 0.1, "run_seconds": 0.1, "scheduler_seconds": 0.0,
                    "batch_as_generated": True}
        lookup = [{"stage": 0, "microbatch": 0, "local_cp_size": 1, "holders": [[rank, [rank]]],
                   "group": [rank], "get_batch": [None] * 5 + [{"cp_group": {"group": [rank]}},
                                                               None]}]
        entry = {"index": 0, "reference 0": {**received, "scheduler_calls": ["Given"]}}
        for variant in distributed_cases.COST_AWARE_VARIANTS:
            entry[variant] = {**received, "scheduler_calls": [variant], "lookup": lookup}
        if change:
            change(rank, entry)
        results.append({"shims": [], "stand_ins": [], "torch": "test", "cases": [entry],
                        "classes": {"cost_aware": "cost_aware", "reference": "Given",
                                    "only_where_upstream_fails": "only_where_upstream_fails"}})
    return results


def cost_aware_report(results, case=None):
    out = io.StringIO()
    status = distributed._report_cost_aware(  # pylint: disable=protected-access
        [case or COST_AWARE_CASE], results, 2, 1.0, out, "",
        {"profile": PROFILE, "applies_max_num_seqs": True})
    return status, out.getvalue()


def test_the_cost_aware_report_on_records():
    status, output = cost_aware_report(cost_aware_records())
    assert status == 0 and cost_aware_closing(output)[2:8] == [1, 0, 0, 0, 4, 4], output

    def other_group(rank, entry):  # rank 1's lookup finds the group of ranks 0-1
        if rank == 1:
            entry["cost_aware"]["lookup"] = [{**entry["cost_aware"]["lookup"][0],
                                              "group": [0, 1], "get_batch": None}]
    status, output = cost_aware_report(cost_aware_records(other_group))
    assert status == 1 and cost_aware_closing(output)[5] == 1, output
    assert "rank 1 stage 0 microbatch 0: the lookup found the CP group of ranks 0-1, the " \
           "schedule implies rank 1" in output

    def other_tokens(rank, entry):  # what rank 0 received is not what run() packs
        if rank == 0:
            entry["only_where_upstream_fails"]["num_micro_batches"] = {"type": "int",
                                                                       "repr": "2"}
    status, output = cost_aware_report(cost_aware_records(other_tokens))
    assert status == 1 and "only_where_upstream_fails\n  rank 0: received other " in output

    def another_batch(rank, entry):
        entry["cost_aware"]["batch_as_generated"] = False
    status, output = cost_aware_report(cost_aware_records(another_batch))
    assert status == 3 and "NOT CHECKED" in output and "another global batch" in output


def test_the_cost_aware_report_on_refusals():
    refused = {**COST_AWARE_CASE, "cost_aware": {"references": [], "expected": {
        variant: TOO_LONG_REFUSAL for variant in distributed_cases.COST_AWARE_VARIANTS}}}

    def raised(rank, entry):
        del entry["reference 0"]
        for variant in distributed_cases.COST_AWARE_VARIANTS:
            entry[variant] = {**TOO_LONG_REFUSAL, "seconds": 0.1, "run_seconds": 0.1,
                              "scheduler_seconds": 0.0, "scheduler_calls": [],
                              "batch_as_generated": None}
            if rank == 1 and variant == "cost_aware":
                entry[variant]["message"] = "another message"
    # Every rank refuses as dcpsched does: nothing received as scheduled (exit 4).
    status, output = cost_aware_report(cost_aware_records(
        lambda rank, entry: raised(0, entry)), refused)
    assert status == 4 and "NOTHING CHECKED" in output, output
    assert cost_aware_closing(output)[2:6] == [0, 0, 1, 0]
    status, output = cost_aware_report(cost_aware_records(raised), refused)
    assert status == 1 and "rank 1: dcpsched refuses the batch (InvalidInputError" in output


@pytest.mark.skipif(os.environ.get("DCPSCHED_NIGHTLY_DISTRIBUTED") != "1",
                    reason="nightly tier: DCPSCHED_NIGHTLY_DISTRIBUTED=1 (scripts/test.sh "
                           "--nightly)")
@pytest.mark.parametrize("world, batches", [(8, 24), (12, 12)])
def test_cost_aware_on_every_rank_at_w8_and_w12(world, batches):
    status, output = harness("--megatron", PIPELINE, "--distributed", world, "--batches",
                             batches, "--cost-profile", PROFILE, timeout=1200)
    assert status == 0, output
    cases, ranks, scheduled, odd, refused, differ, compared, lookups, _ = \
        cost_aware_closing(output)
    assert (cases, ranks, refused, differ, compared) == (batches, world, 1, 0,
                                                         batches * world * 2)
    assert scheduled + odd == batches - 1 and scheduled > 0 and lookups > 0
    print(textwrap.indent(output, "  "))
