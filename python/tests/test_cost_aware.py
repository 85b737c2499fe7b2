"""dcpsched.schedule_cost_aware: the cost-aware scheduler from Python.

Its options are keyword-only and its profile a dcpsched.CostProfile; its
schedule passes verify(..., scheduler="cost_aware") (every invariant but the
work cap), is never slower than packing-aware's by schedule_time on the
runtime it schedules for (pipelines, interleaving, EP, both paths), and
exists where packing-aware's runtime has no groups for one (G = 6, VPP 4).
"""

import random

import pytest

import dcpsched

PROFILE = dcpsched.CostProfile("h200-llama3-8b")


def workload(count=96, seed=5154):
    """A deterministic batch shaped like upstream's DCP benchmark."""
    rng = random.Random(seed)
    return [(1000 + i, min(8192, max(128, int(rng.lognormvariate(6.5, 1.2)))))
            for i in range(count)]


BATCH = workload()


def runtime_step_seconds(schedule, mslpr, **runtime):
    """The schedule's step as the runtime runs it (by default dev, P = 1)."""
    return dcpsched.schedule_time(schedule, BATCH, PROFILE, mslpr, **runtime)["runtime"][
        "step_seconds"]


def test_schedule_keeps_every_invariant_but_the_work_cap():
    schedule = dcpsched.schedule_cost_aware(BATCH, 8, 2048, profile=PROFILE)
    assert dcpsched.verify(schedule, BATCH, 8, 2048, scheduler="cost_aware") == []


def test_never_slower_than_packing_aware():
    cost_aware = dcpsched.schedule_cost_aware(BATCH, 8, 2048, profile=PROFILE)
    packing_aware = dcpsched.schedule_dynamic_cp(BATCH, 8, 2048)
    assert runtime_step_seconds(cost_aware, 2048) <= runtime_step_seconds(packing_aware, 2048)


def test_details_say_whose_schedule_and_why():
    result = dcpsched.schedule_cost_aware(BATCH, 8, 2048, profile=PROFILE, details=True)
    assert result["source"] in ("planned", "packing_aware")
    assert result["reason"]
    assert result["step_seconds"] == runtime_step_seconds(result["schedule"], 2048)
    assert result["packing_aware_step_seconds"] >= result["step_seconds"]


def test_schedules_where_packing_aware_has_no_runnable_schedule():
    with pytest.raises(dcpsched.UnschedulableError):
        dcpsched.schedule_dynamic_cp(BATCH, 6, 2048, vpp_group=4)
    result = dcpsched.schedule_cost_aware(BATCH, 6, 2048, profile=PROFILE, vpp_group=4,
                                          details=True)
    assert result["source"] == "planned"
    assert result["packing_aware_step_seconds"] is None
    assert len(result["schedule"]) % 4 == 0
    assert dcpsched.verify(result["schedule"], BATCH, 6, 2048, vpp_group=4,
                           scheduler="cost_aware") == []


def test_one_rank_gets_its_own_lists():
    full = dcpsched.schedule_cost_aware(BATCH, 8, 2048, profile=PROFILE)
    mine = dcpsched.schedule_cost_aware(BATCH, 8, 2048, profile=PROFILE, rank=3)
    assert mine == [microbatch[3] for microbatch in full]


def test_options_are_keyword_only_and_the_profile_a_cost_profile():
    with pytest.raises(TypeError):
        dcpsched.schedule_cost_aware(BATCH, 8, 2048, PROFILE)
    with pytest.raises(TypeError, match="CostProfile"):
        dcpsched.schedule_cost_aware(BATCH, 8, 2048, profile="h200-llama3-8b")


def test_too_few_samples_for_vpp_says_what_to_change():
    with pytest.raises(dcpsched.UnschedulableError, match="vpp_group"):
        dcpsched.schedule_cost_aware(BATCH[:3], 8, 2048, profile=PROFILE, vpp_group=4)


def test_verify_checks_the_work_cap_unless_told_cost_aware():
    # One microbatch whose second rank carries far more len^2 work than the
    # cap allows for its tallest sample: invariant 5 only.
    batch = [(1, 2048), (2, 64), (3, 64), (4, 64), (5, 64)]
    schedule = [[[1], [2, 3, 4, 5]]]
    assert dcpsched.verify(schedule, batch, 2, 2048, scheduler="cost_aware") == []
    assert all(m.startswith("invariant 5") for m in dcpsched.verify(schedule, batch, 2, 2048))


@pytest.mark.parametrize("runtime", [
    {},
    {"pipeline_stages": 4},
    {"pipeline_stages": 2, "virtual_stages": 2, "microbatch_group_size": 4},
    {"runtime": "legacy"},
    {"expert_parallel_size": 8, "layers_per_stage": 2},
])
def test_minimises_the_step_of_the_runtime_it_is_given(runtime):
    vpp_group = runtime.get("microbatch_group_size")
    result = dcpsched.schedule_cost_aware(BATCH, 8, 2048, profile=PROFILE, vpp_group=vpp_group,
                                          details=True, **runtime)
    assert dcpsched.verify(result["schedule"], BATCH, 8, 2048, vpp_group=vpp_group,
                           scheduler="cost_aware") == []
    assert result["step_seconds"] == runtime_step_seconds(result["schedule"], 2048, **runtime)
    assert result["runtime"]["step_seconds"] == result["step_seconds"]
    assert 1 <= result["token_budget"] <= 2048
    packing_aware = dcpsched.schedule_dynamic_cp(BATCH, 8, 2048, vpp_group=vpp_group)
    assert result["packing_aware_step_seconds"] == runtime_step_seconds(packing_aware, 2048,
                                                                        **runtime)
    assert result["step_seconds"] <= result["packing_aware_step_seconds"]


def test_a_pipeline_trades_a_smaller_budget_for_a_shorter_step():
    batch = [(i, n) for i, n in enumerate([16384, 12000, 9000, 4096] * 8 + [512] * 64)]
    result = dcpsched.schedule_cost_aware(batch, 8, 16384, profile=PROFILE, details=True,
                                          pipeline_stages=4)
    alone = dcpsched.schedule_cost_aware(batch, 8, 16384, profile=PROFILE, details=True)
    assert result["token_budget"] < 16384
    assert len(result["schedule"]) > len(alone["schedule"])
    assert "tokens per rank" in result["reason"]


def test_a_runtime_that_runs_nothing_is_refused_with_what_to_change():
    with pytest.raises(dcpsched.InvalidInputError, match="legacy"):
        dcpsched.schedule_cost_aware(BATCH, 8, 2048, profile=PROFILE, pipeline_stages=2,
                                     runtime="legacy")
    with pytest.raises(TypeError, match="runtime"):
        dcpsched.schedule_cost_aware(BATCH, 8, 2048, profile=PROFILE, runtime=1)
