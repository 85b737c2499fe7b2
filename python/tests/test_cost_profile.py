"""dcpsched.CostProfile and dcpsched.schedule_time: schedules in GPU seconds."""

import json

import pytest

import dcpsched
from conftest import REPO

SHIPPED = ["h200-llama3-70b-tp8", "h200-llama3-70b-tp8-graphs", "h200-llama3-8b",
           "h200-llama3-8b-graphs"]


def test_every_shipped_profile_loads_by_name():
    assert dcpsched.CostProfile.shipped_names() == SHIPPED
    for name in SHIPPED:
        profile = dcpsched.CostProfile(name)
        assert profile.name == name
        assert profile.device == "NVIDIA H200"
        assert not profile.communication_modelled
        assert repr(profile) == f"<dcpsched.CostProfile {name}>"


def test_a_profile_loads_by_path_and_reads_its_measured_points():
    path = REPO / "profiles" / "h200-llama3-8b.json"
    document = json.loads(path.read_text())
    profile = dcpsched.CostProfile(str(path))
    causal = document["attention"]["causal"]
    for length, seconds in zip(causal["lengths"], causal["seconds"]):
        assert profile.causal_attention_seconds(length) == seconds
    rest = document["non_attention"]
    assert profile.non_attention_seconds(rest["tokens"][2]) == rest["seconds"][2]
    assert profile.non_attention_seconds(0) == 0.0


def test_a_malformed_profile_names_the_field(tmp_path):
    document = json.loads((REPO / "profiles" / "h200-llama3-8b.json").read_text())
    document["attention"]["causal"]["seconds"][3] = -1
    with pytest.raises(dcpsched.InvalidInputError,
                       match=r"attention\.causal\.seconds\[3\] is -1"):
        dcpsched.CostProfile.from_json(json.dumps(document))
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    with pytest.raises(ValueError, match=r"attention\.causal\.seconds\[3\]"):
        dcpsched.CostProfile(str(path))
    with pytest.raises(FileNotFoundError, match="h200-llama3-8b"):
        dcpsched.CostProfile("no-such-profile")


def test_schedule_time_of_each_scheduler_is_at_least_the_bound():
    profile = dcpsched.CostProfile("h200-llama3-8b")
    samples = [(i, 256 + (i * 7919) % 12000) for i in range(64)]
    schedules = {
        "packing_aware": dcpsched.schedule_dynamic_cp(samples, 8, 8192),
        "legacy": dcpsched.schedule_legacy(samples, 8, 8192),
    }
    positions = dcpsched.schedule_dp_balanced(samples, 2, 4, 8192)
    schedules["dp_balanced"] = [[[samples[p][0] for p in rank] for rank in mb]
                                for mb in positions]
    bounds = set()
    for name, schedule in schedules.items():
        figures = dcpsched.schedule_time(schedule, samples, profile, 8192, cp_size=4)
        assert figures["step_seconds"] == pytest.approx(sum(figures["microbatch_seconds"]))
        assert len(figures["microbatch_seconds"]) == len(schedule), name
        assert 0 < figures["bound_seconds"] <= figures["step_seconds"], name
        assert figures["gpu_efficiency"] == pytest.approx(
            figures["bound_seconds"] / figures["step_seconds"])
        assert figures["communication_modelled"] is False
        bounds.add(figures["bound_seconds"])
    assert len(bounds) == 1  # the bound depends on the samples, not the schedule


def test_schedule_time_one_sample_on_one_rank():
    profile = dcpsched.CostProfile("h200-llama3-8b")
    figures = dcpsched.schedule_time([[[7]]], [(7, 4096)], profile, 4096)
    expected = profile.non_attention_seconds(4096) + profile.causal_attention_seconds(4096)
    assert figures["step_seconds"] == pytest.approx(expected, rel=1e-12)


def test_schedule_time_refuses_an_unknown_id():
    profile = dcpsched.CostProfile("h200-llama3-8b")
    with pytest.raises(dcpsched.InvalidInputError, match="sample id 9"):
        dcpsched.schedule_time([[[9]]], [(7, 100)], profile, 4096)
    with pytest.raises(TypeError):
        dcpsched.schedule_time([[[7]]], [(7, 100)], "h200-llama3-8b", 4096)
