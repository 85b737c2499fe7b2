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
W = 8 runs in the nightly tier only (DCPSCHED_NIGHTLY_DISTRIBUTED=1,
scripts/test.sh --nightly). No Megatron-LM code is needed.
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

from conftest import EXAMPLES_DIR
from dcpsched.conformance import distributed, distributed_cases, distributed_timing, records

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
PIPELINE = FIXTURES / "megatron_pipeline"
DROP_IN = EXAMPLES_DIR / "megatron_drop_in.py"
CLOSING = re.compile(r"^distributed conformance: (\d+) cases on (\d+) ranks, (\d+) equal on "
                     r"every rank, (\d+) differ, (\d+) both reject \(on every rank\); (\d+) "
                     r"rank records compared$", re.M)


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
    status, output = harness("--megatron", PIPELINE, "--distributed", 4, "--batches", 8,
                             "--drop-in", DROP_IN)
    assert status == 0, output
    # Which upstream was checked: the fixture is none of the known ones.
    assert "upstream file: " in output and "sha256" in output
    assert "upstream files: NOT the files dcpsched was checked against" in output
    assert "shim: device" in output and "stand-in: RerunDataIterator" in output
    # 8 cases: 7 answered and equal, the last with a sample too long for its group.
    assert closing(output) == [8, 4, 7, 0, 1, 32]
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
    cases, world, equal, differ, _, _ = closing(output)
    assert (cases, world) == (3, 2) and differ >= 1 and equal + differ <= 3
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
    cases, world, equal, differ, both, compared = closing(output)
    assert (cases, world, differ, both, compared) == (24, 8, 0, 1, 24 * 8)
    assert equal == 23
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
    # 2 topologies x 2 repetitions, every one equal on both ranks.
    assert closing(output) == [4, 2, 4, 0, 0, 8]
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
