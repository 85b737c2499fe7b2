"""The two readings of the GPU-time rule agree: the core's
(dcpsched.schedule_time, core/gpu_time.h) and the pure-Python one
(dcpsched.cost_model, which calibrate and replay use on GPU machines where
nothing is compiled). Each prices every microbatch of real schedules by
every shipped profile, with and without a communication model; they must
agree within 1e-9 relative, so neither can drift from the rule alone."""

import copy
import json
import random

import pytest

import dcpsched
from dcpsched.cost_model import CostModel
from dcpsched.cost_profile import parse_profile, profile_path

PROFILES = ["h200-llama3-8b", "h200-llama3-70b-tp8", "h200-llama3-8b-graphs",
            "h200-llama3-70b-tp8-graphs"]


def python_microbatch_seconds(model, schedule, samples):
    lengths = dict(samples)
    result = []
    for microbatch in schedule:
        holders = {}
        for rank in microbatch:
            for sample_id in rank:
                holders[sample_id] = holders.get(sample_id, 0) + 1
        result.append(model.microbatch_seconds(
            [(lengths[i], holders[i]) for i in rank] for rank in microbatch))
    return result


def batches():
    rng = random.Random(39)
    for total_gpus, budget in [(8, 2048), (16, 4096), (4, 8192), (32, 1024)]:
        batch = [(i, max(1, min(budget * total_gpus, int(rng.lognormvariate(7.5, 1.4)))))
                 for i in range(rng.randint(20, 120))]
        yield total_gpus, budget, batch


@pytest.mark.parametrize("name", PROFILES)
@pytest.mark.parametrize("communication", [False, True])
def test_core_and_python_price_schedules_alike(name, communication):
    document = json.loads(profile_path(name).read_text())
    if communication:
        document = copy.deepcopy(document)
        document["communication"] = {"gpus_per_node": 8, "intra_node_gb_per_s": 400.0,
                                     "inter_node_gb_per_s": 25.0, "kv_bytes_per_token": 4096}
    core_profile = dcpsched.CostProfile.from_json(json.dumps(document))
    model = CostModel(parse_profile(document, name))
    compared = 0
    for total_gpus, budget, batch in batches():
        schedule = dcpsched.schedule_dynamic_cp(batch, total_gpus, budget)
        core = dcpsched.schedule_time(schedule, batch, core_profile, budget)
        ours = python_microbatch_seconds(model, schedule, batch)
        assert len(core["microbatch_seconds"]) == len(ours)
        for got, want in zip(core["microbatch_seconds"], ours):
            assert got == pytest.approx(want, rel=1e-9, abs=0.0)
            compared += 1
        assert core["step_seconds"] == pytest.approx(sum(ours), rel=1e-9, abs=0.0)
        assert core["communication_modelled"] == communication
    assert compared > 20
