"""python3 -m dcpsched.replay on a tiny layer shape, on the CPU, without a
GPU; and the schedule reader it uses (dcpsched.schedule_document). The
synthetic timer (conftest.SyntheticTimer) prices each rank load at a known
multiple of the model, so the report's errors are known in advance."""

import json
import os
import subprocess
import sys

import pytest

from conftest import REPO, SyntheticTimer
from dcpsched.cost_model import CostModel
from dcpsched.cost_profile import dump_profile, parse_profile
from dcpsched.schedule_document import RankGroup, ScheduleError, parse_schedule

torch = pytest.importorskip("torch")

from dcpsched import replay  # noqa: E402

SHAPE = ["--device", "cpu"]  # the layer shape is the profile's model block
SAMPLES = [[5, 100], [6, 40], [7, 20], [8, 48], [9, 60], [10, 30], [11, 30], [12, 64],
           [13, 64], [14, 10]]
# Microbatch 0: sample 5 on ranks 0-1 (cp 2); 1: sample 9 on ranks 0-1, 10 and 11
# alone (the same load); 2: 12 and 13 (the same load) and 14 on ranks 2-3 (cp 2).
GROUPS = [[[5], [5], [6, 7], [8]], [[9], [9], [10], [11]], [[12], [13], [14], [14]]]
# Power laws from 1 token up, so that every load of these tiny samples has its own price.
PROFILE = {
    "schema": "dcpsched.cost_profile.v1", "name": "tiny", "interpolation": "log-log",
    "attention": {"causal": {"lengths": [1, 1024], "seconds": [1e-9, 1e-9 * 1024 ** 2]},
                  "full": {"lengths": [1, 1024], "seconds": [2e-9, 2e-9 * 1024 ** 2]}},
    "non_attention": {"tokens": [1, 1024], "seconds": [1e-6, 1e-6 * 1024]},
    "communication": None,
    "model": {"name": "tiny", "hidden": 32, "q_heads": 4, "kv_heads": 2, "head_dim": 8,
              "ffn": 64},
}
MODEL = CostModel(parse_profile(PROFILE))


def v1():
    return {"format": "dcpsched.schedule_run.v1", "ok": True, "scheduler": "packing_aware",
            "parameters": {"total_gpus": 4, "max_seq_len_per_rank": 64}, "samples": SAMPLES,
            "groups": GROUPS}


def v2():
    microbatches = []
    for ranks in GROUPS:
        groups, r = [], 0
        while r < len(ranks):
            size = sum(1 for other in ranks[r:] if other == ranks[r])
            groups.append({"first_rank": r, "size": size, "ids": ranks[r],
                           "tokens_per_rank": 0.0, "work_per_rank": 0.0})
            r += size
        microbatches.append({"cp_groups": groups, "max_work": 0.0, "min_work": 0.0})
    return {"format": "dcpsched.schedule_run.v2", "ok": True,
            "parameters": {"total_gpus": 4}, "samples": SAMPLES, "microbatches": microbatches}


@pytest.fixture
def profile(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(dump_profile(PROFILE))
    return str(path)


def write(tmp_path, doc, name="schedule.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def slow_by(factor):
    return lambda what: factor * MODEL.rank_seconds(what.samples)


# --- the schedule reader ----------------------------------------------------

def test_v1_and_v2_read_as_the_same_cp_groups():
    one, two = parse_schedule(v1()), parse_schedule(v2())
    assert one.microbatches == two.microbatches
    assert one.total_gpus == two.total_gpus == 4
    assert one.microbatches[0] == [RankGroup(0, 2, ((100, 2),)),
                                   RankGroup(2, 1, ((20, 1), (40, 1))),
                                   RankGroup(3, 1, ((48, 1),))]
    assert one.microbatches[2][2] == RankGroup(2, 2, ((10, 2),))


def test_a_hand_written_schedule_v1_reads_too():
    doc = {"format": "dcpsched.schedule.v1", "total_gpus": 4, "max_seq_len_per_rank": 64,
           "samples": SAMPLES, "groups": GROUPS}
    assert parse_schedule(doc).microbatches == parse_schedule(v1()).microbatches


@pytest.mark.parametrize("change, message", [
    ({"ok": False, "error": "too long"}, "the scheduler failed (ok is not true): too long"),
    ({"format": "dcpsched.schedule_run.v3"}, 'field "format"'),
    ({"groups": [[[5], [5], [6, 99], [8]]]}, 'field "groups[0][2]": id 99 is not among'),
    ({"samples": None}, 'field "samples"'),
])
def test_the_reader_says_what_is_wrong(change, message):
    with pytest.raises(ScheduleError) as raised:
        parse_schedule({**v1(), **change}, "s.json")
    assert message in str(raised.value)


# --- replay -----------------------------------------------------------------

def test_the_report_compares_measured_and_modelled_per_microbatch_and_step(tmp_path, profile,
                                                                          capsys):
    out = tmp_path / "report.json"
    timer = SyntheticTimer(slow_by(1.25))
    assert replay.main([*SHAPE, "--cost-profile", profile, write(tmp_path, v1()),
                        "--json", str(out)], timer=timer) == 0
    report = json.loads(out.read_text())
    assert report["schema"] == "dcpsched.replay.v1"
    assert report["profile"] == "tiny" and report["total_gpus"] == 4
    rows = report["microbatches"]
    assert [row["index"] for row in rows] == [0, 1, 2]
    for row, ranks in zip(rows, GROUPS):
        assert row["relative_error"] == pytest.approx(1 / 1.25 - 1)
        assert row["measured_s"] == pytest.approx(1.25 * row["modelled_s"])
    # lin(60) + causal(20) + causal(40) on rank 2 beats lin(50) + ring blocks on ranks 0-1.
    assert rows[0]["slowest_load"] == [[20, 1], [40, 1]] and rows[0]["slowest_rank"] == 2
    assert rows[0]["modelled_s"] == pytest.approx(60e-6 + 1e-9 * (20 ** 2 + 40 ** 2))
    step = report["step"]
    assert step["relative_error"] == pytest.approx(-0.2)
    assert step["modelled_s"] == pytest.approx(step["modelled_whole_schedule_s"])
    assert step["microbatches"] == step["microbatches_in_schedule"] == 3
    # Equal loads are timed once: 10 and 11 are both (30, 1), 12 and 13 both (64, 1).
    loads = [what.samples for what in timer.calls]
    assert len(loads) == len(set(loads)) == report["distinct_loads_timed"] == 7
    printed = capsys.readouterr().out
    assert "microbatch    2" in printed and "(-20.0%)" in printed
    assert "relative error -20.00%" in printed
    assert "real figures need CUDA" in printed


def test_v2_replays_as_v1(tmp_path, profile, capsys):
    reports = []
    for name, doc in (("one.json", v1()), ("two.json", v2())):
        out = tmp_path / f"{name}.report"
        assert replay.main([*SHAPE, "--cost-profile", profile, write(tmp_path, doc, name),
                            "--json", str(out)], timer=SyntheticTimer(slow_by(1.1))) == 0
        reports.append(json.loads(out.read_text()))
    assert reports[0]["microbatches"] == reports[1]["microbatches"]
    assert reports[1]["format"] == "dcpsched.schedule_run.v2"


def test_sampling_bounds_the_work(tmp_path, profile, capsys):
    out = tmp_path / "report.json"
    timer = SyntheticTimer(slow_by(1.0))
    assert replay.main([*SHAPE, "--cost-profile", profile, write(tmp_path, v1()),
                        "--max-microbatches", "2", "--ranks", "1", "--json", str(out)],
                       timer=timer) == 0
    report = json.loads(out.read_text())
    assert [row["index"] for row in report["microbatches"]] == [0, 2]
    assert all(row["loads_timed"] == 1 for row in report["microbatches"])
    assert len(timer.calls) == 2
    # The one load timed per microbatch is the one the model prices highest.
    for row in report["microbatches"]:
        assert row["measured_s"] == pytest.approx(row["modelled_s"])
    step = report["step"]
    assert step["microbatches"] == 2 and step["microbatches_in_schedule"] == 3
    assert step["modelled_s"] < step["modelled_whole_schedule_s"]


def test_the_time_limit_stops_after_the_microbatch_that_crosses_it(tmp_path, profile, capsys):
    out = tmp_path / "report.json"
    assert replay.main([*SHAPE, "--cost-profile", profile, write(tmp_path, v1()),
                        "--time-limit", "0", "--json", str(out)],
                       timer=SyntheticTimer(slow_by(1.0))) == 0
    step = json.loads(out.read_text())["step"]
    assert step["microbatches"] == 1 and step["stopped_by_time_limit"] is True


def test_spread_picks_evenly_including_the_ends():
    assert replay.spread(10, 3) == [0, 4, 9] or replay.spread(10, 3) == [0, 5, 9]
    assert replay.spread(3, 10) == [0, 1, 2]
    assert replay.spread(7, 1) == [0]
    assert replay.spread(5, None) == [0, 1, 2, 3, 4]


def test_the_cpu_pipeline_runs_with_the_wall_clock(tmp_path, profile, capsys):
    out = tmp_path / "report.json"
    assert replay.main([*SHAPE, "--cost-profile", profile, write(tmp_path, v1()),
                        "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert all(row["measured_s"] > 0 for row in report["microbatches"])
    assert report["layer"]["hidden"] == 32 and report["device"] == "cpu"


def test_the_shipped_profile_by_name_with_an_explicit_shape(tmp_path, capsys):
    shape = ["--hidden", "32", "--q-heads", "4", "--kv-heads", "2", "--head-dim", "8",
             "--ffn", "64"]
    out = tmp_path / "report.json"
    assert replay.main([*SHAPE, *shape, "--cost-profile", "h200-llama3-8b",
                        write(tmp_path, v1()), "--json", str(out)],
                       timer=SyntheticTimer(lambda what: 1e-3)) == 0
    report = json.loads(out.read_text())
    assert report["profile"] == "h200-llama3-8b"
    # Below the profile's smallest points every tiny load costs the same.
    assert len({row["modelled_s"] for row in report["microbatches"]}) == 1


def test_a_bad_profile_or_schedule_exits_2_with_a_message(tmp_path, profile, capsys):
    schedule = write(tmp_path, v1())
    assert replay.main([*SHAPE, "--cost-profile", "no-such", schedule]) == 2
    assert "not the name of a shipped profile" in capsys.readouterr().err
    bad = write(tmp_path, {**v1(), "ok": False}, "bad.json")
    assert replay.main([*SHAPE, "--cost-profile", profile, bad]) == 2
    assert "ok is not true" in capsys.readouterr().err


def test_without_cuda_the_cli_says_it_needs_cuda_and_exits_2(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), PYTHONDONTWRITEBYTECODE="1")
    result = subprocess.run([sys.executable, "-m", "dcpsched.replay", "--cost-profile",
                             "h200-llama3-8b", write(tmp_path, v1())], env=env,
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert "no CUDA device" in result.stderr and "real GPU" in result.stderr
