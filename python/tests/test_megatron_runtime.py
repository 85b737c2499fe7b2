"""dcpsched.megatron and the runtime its step times are modelled on:
install_into_megatron() reads P, V, N, the layers per stage, expert
parallelism and the dev or legacy path from (stand-ins for) a running
Megatron-LM, says what it read (the class's `runtime`, an INFO line), and
step_time() measures schedules on that runtime."""

import logging
import sys
import types

import pytest

import dcpsched
import dcpsched.megatron
from test_megatron import fake_megatron, fake_parallel_state

PROFILE = dcpsched.CostProfile("h200-llama3-8b")
BATCH = dcpsched.benchmark_workload(96)


def megatron_args(**settings):
    """Megatron-LM's parsed args as the drop-in reads them: a dense model,
    no pipelining, but for `settings`."""
    args = dict(pipeline_model_parallel_size=1, virtual_pipeline_model_parallel_size=None,
                microbatch_group_size_per_vp_stage=None, num_layers=32,
                decoder_first_pipeline_num_layers=None, decoder_last_pipeline_num_layers=None,
                expert_model_parallel_size=1, tensor_model_parallel_size=1,
                expert_tensor_parallel_size=1, num_experts=None,
                moe_router_load_balancing_type="aux_loss", hybrid_context_parallel=False)
    args.update(settings)
    return types.SimpleNamespace(**args)


def schedules_module(legacy=False):
    """megatron.core.pipeline_parallel.schedules as loaded: main's runs
    hybrid_context_parallel_forward_backward, dev's does not."""
    schedules = types.ModuleType("megatron.core.pipeline_parallel.schedules")
    if legacy:
        schedules.hybrid_context_parallel_forward_backward = lambda *args, **kwargs: None
    return schedules


def install_into(monkeypatch, args=None, parallel_state=None, schedules=None, **kwargs):
    """install_into_megatron(**kwargs) into fake_megatron() with `args` as
    megatron.training's (initialized) args, `parallel_state` and `schedules`
    loaded; returns the installed class."""
    packages = fake_megatron()
    if args is not None:
        global_vars = types.ModuleType("megatron.training.global_vars")
        global_vars.get_args = lambda: args
        packages["megatron.training"] = types.ModuleType("megatron.training")
        packages["megatron.training.global_vars"] = global_vars
    if parallel_state is not None:
        packages["megatron.core"].parallel_state = parallel_state
        packages["megatron.core.parallel_state"] = parallel_state
    if schedules is not None:
        packages["megatron.core.pipeline_parallel"] = types.ModuleType(
            "megatron.core.pipeline_parallel")
        packages["megatron.core.pipeline_parallel.schedules"] = schedules
    for name in ("megatron.training", "megatron.training.global_vars",
                 "megatron.core.pipeline_parallel", "megatron.core.pipeline_parallel.schedules"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    for name, module in packages.items():
        monkeypatch.setitem(sys.modules, name, module)
    return dcpsched.megatron.install_into_megatron(**kwargs)


def test_install_reads_the_runtime_from_megatron_args_and_says_so(monkeypatch, caplog):
    args = megatron_args(pipeline_model_parallel_size=4, virtual_pipeline_model_parallel_size=2,
                         num_layers=32, expert_model_parallel_size=8, num_experts=64)
    with caplog.at_level(logging.INFO, logger="dcpsched.megatron"):
        installed = install_into(monkeypatch, args, schedules=schedules_module(),
                                 cost_profile=PROFILE)
    runtime = installed.runtime
    assert runtime.from_megatron
    assert runtime.keywords == {"pipeline_stages": 4, "virtual_stages": 2,
                                "microbatch_group_size": None, "layers_per_stage": 8,
                                "forward_share": 1.0 / 3.0, "expert_parallel_size": 8,
                                "runtime": "dev"}
    assert runtime.describe() == (
        "dev runtime, interleaved 1F1B over P = 4 stages, V = 2 chunks in groups of N = 4, 8 "
        "layers per stage, forward 0.3333 of a layer, EP 8 DPxCP ranks in lockstep")
    read = "\n".join(runtime.read)
    for said in ("pipeline_model_parallel_size 4 (from args)",
                 "virtual_pipeline_model_parallel_size 2 (from args)",
                 "microbatch_group_size_per_vp_stage None (from args): Megatron-LM's default, P",
                 "num_layers 32 (from args): 8 per pipeline stage",
                 "expert_model_parallel_size 8 (from args): EP 8 x ETP 1 / TP 1 = 8 DPxCP ranks",
                 "path dev: megatron.core.pipeline_parallel.schedules does not run "
                 "hybrid_context_parallel_forward_backward"):
        assert said in read, read
    # One INFO line says what it runs and what it read.
    lines = [r.getMessage() for r in caplog.records if r.name == "dcpsched.megatron"]
    assert len(lines) == 1, lines
    assert lines[0].startswith("dcpsched: default_dynamic_cp schedules cost-aware under "
                               "h200-llama3-8b; step times modelled on the dev runtime, "
                               "interleaved 1F1B over P = 4 stages"), lines[0]
    assert "(read: pipeline_model_parallel_size 4 (from args);" in lines[0]
    # The step times it reports are on that runtime.
    scheduler = installed(2048, 4, 2, 4, max_num_seqs=None, min_cp_size=1)
    groups = scheduler.get_groups_and_subsamples(BATCH)
    figures = scheduler.step_time(BATCH, groups)
    assert figures == dcpsched.schedule_time(groups, BATCH, PROFILE, 2048, **runtime.keywords)
    assert figures["runtime"]["pipeline_stages"] == 4
    assert figures["runtime"]["microbatch_group_size"] == 4
    assert figures["runtime"]["expert_parallel_size"] == 8


@pytest.mark.parametrize("settings, path", [
    ({"hybrid_context_parallel": True}, "legacy"),
    ({"hybrid_context_parallel": False}, "dev"),
    ({"hybrid_context_parallel": True, "pipeline_model_parallel_size": 2}, "dev"),
])
def test_the_legacy_path_is_main_s_hybrid_cp_loop_without_pipelining(monkeypatch, settings,
                                                                      path):
    installed = install_into(monkeypatch, megatron_args(**settings),
                             schedules=schedules_module(legacy=True))
    assert installed.runtime.keywords["runtime"] == path
    assert f"path {path}: " in "\n".join(installed.runtime.read)


def test_a_dev_schedules_module_is_the_dev_path_whatever_the_flag(monkeypatch):
    installed = install_into(monkeypatch, megatron_args(hybrid_context_parallel=True),
                             schedules=schedules_module(legacy=False))
    assert installed.runtime.keywords["runtime"] == "dev"


def test_legacy_steps_are_the_barrier_steps(monkeypatch):
    installed = install_into(monkeypatch, megatron_args(hybrid_context_parallel=True,
                                                        num_layers=1),
                             schedules=schedules_module(legacy=True), cost_profile=PROFILE)
    scheduler = installed(2048, 4, 2, None, max_num_seqs=None, min_cp_size=1)
    figures = scheduler.step_time(BATCH, scheduler.get_groups_and_subsamples(BATCH))
    assert figures["runtime"]["path"] == "legacy"
    assert figures["runtime"]["step_seconds"] == figures["step_seconds"]


def fake_state_with(pipeline, virtual, expert, tensor, expert_tensor):
    """fake_parallel_state(8) with the world-size getters the drop-in reads."""
    state = fake_parallel_state(8)
    state.get_pipeline_model_parallel_world_size = lambda: pipeline
    state.get_virtual_pipeline_model_parallel_world_size = lambda: virtual
    state.get_expert_model_parallel_world_size = lambda: expert
    state.get_tensor_model_parallel_world_size = lambda: tensor
    state.get_expert_tensor_parallel_world_size = lambda: expert_tensor
    return state


def test_without_args_it_reads_an_initialized_parallel_state(monkeypatch):
    installed = install_into(monkeypatch, parallel_state=fake_state_with(2, None, 4, 2, 1))
    runtime = installed.runtime
    assert runtime.from_megatron
    assert runtime.keywords["pipeline_stages"] == 2
    assert runtime.keywords["virtual_stages"] == 1
    assert runtime.keywords["microbatch_group_size"] is None  # not in parallel_state: P
    assert runtime.keywords["layers_per_stage"] == 1
    assert runtime.keywords["expert_parallel_size"] == 2  # EP 4 x ETP 1 / TP 2
    read = "\n".join(runtime.read)
    assert "pipeline_model_parallel_size 2 (from parallel_state)" in read
    assert "expert_model_parallel_size 4 (from parallel_state): EP 4 x ETP 1 / TP 2 = 2" in read
    assert "path dev: megatron.core.pipeline_parallel.schedules is not loaded" in read


@pytest.mark.parametrize("expert, tensor, expert_tensor, ranks, why", [
    (1, 1, 1, None, "expert_model_parallel_size 1: no expert all-to-all"),
    (8, 1, 1, 8, "= 8 DPxCP ranks per expert-parallel group"),
    (4, 2, 2, 4, "EP 4 x ETP 2 / TP 2 = 4"),
    (4, 4, 1, None, "lies within one DPxCP rank"),
    (2, 4, 1, None, "lies within one DPxCP rank (EP 2 x ETP 1 <= TP 4)"),
    (3, 2, 1, None, "is no multiple of tensor_model_parallel_size 2"),
])
def test_expert_parallelism_counts_dp_cp_ranks(monkeypatch, expert, tensor, expert_tensor,
                                               ranks, why):
    args = megatron_args(expert_model_parallel_size=expert, tensor_model_parallel_size=tensor,
                         expert_tensor_parallel_size=expert_tensor, num_experts=16)
    runtime = install_into(monkeypatch, args).runtime
    assert runtime.keywords["expert_parallel_size"] == ranks
    assert why in "\n".join(runtime.read)


def test_global_aux_loss_puts_every_dp_cp_rank_in_lockstep(monkeypatch):
    args = megatron_args(expert_model_parallel_size=2, num_experts=16,
                         moe_router_load_balancing_type=["global_aux_loss"])
    installed = install_into(monkeypatch, args, cost_profile=PROFILE)
    assert installed.runtime.keywords["expert_parallel_size"] == "all"
    assert "EP over all DPxCP ranks in lockstep (global_aux_loss)" in (
        installed.runtime.describe())
    scheduler = installed(2048, 4, 2, None, max_num_seqs=None, min_cp_size=1)
    groups = scheduler.get_groups_and_subsamples(BATCH)
    figures = scheduler.step_time(BATCH, groups)
    assert figures["runtime"]["expert_parallel_size"] == 8
    assert figures == dcpsched.schedule_time(groups, BATCH, PROFILE, 2048,
                                             layers_per_stage=32, expert_parallel_size=8)


def test_uneven_stages_keep_one_layer_per_stage(monkeypatch):
    args = megatron_args(pipeline_model_parallel_size=4, num_layers=30,
                         decoder_first_pipeline_num_layers=6)
    runtime = install_into(monkeypatch, args).runtime
    assert runtime.keywords["layers_per_stage"] == 1
    assert ("num_layers 30 (from args), decoder_first_pipeline_num_layers evenly over the "
            "pipeline stages: step times are per 1 layer per stage") in "\n".join(runtime.read)


def test_with_nothing_to_read_it_keeps_the_defaults_then_reads_once_args_exist(monkeypatch,
                                                                                caplog):
    installed = install_into(monkeypatch)
    runtime = installed.runtime
    assert not runtime.from_megatron
    assert runtime.keywords == dcpsched.megatron.RUNTIME_DEFAULTS
    assert runtime.read[0].startswith("nothing read from Megatron-LM "
                                      "(megatron.training.global_vars is not loaded;")
    # Megatron-LM initializes its args later: the class reads them when built.
    global_vars = types.ModuleType("megatron.training.global_vars")
    global_vars.get_args = lambda: megatron_args(pipeline_model_parallel_size=2)
    monkeypatch.setitem(sys.modules, "megatron.training.global_vars", global_vars)
    with caplog.at_level(logging.INFO, logger="dcpsched.megatron"):
        installed(2048, 4, 2, None, max_num_seqs=None, min_cp_size=1)
        installed(2048, 4, 2, None, max_num_seqs=None, min_cp_size=1)
    assert installed.runtime.from_megatron
    assert installed.runtime.keywords["pipeline_stages"] == 2
    assert len([r for r in caplog.records if r.name == "dcpsched.megatron"]) == 1


def test_args_not_yet_initialized_are_said(monkeypatch):
    global_vars = types.ModuleType("megatron.training.global_vars")

    def get_args():
        raise AssertionError("args is not initialized.")
    global_vars.get_args = get_args
    monkeypatch.setitem(sys.modules, "megatron.training.global_vars", global_vars)
    runtime = dcpsched.megatron.read_megatron_runtime()
    assert not runtime.from_megatron
    assert ("get_args(): AssertionError: args is not initialized." in runtime.read[0]), runtime


def test_runtime_keywords_given_by_hand_win_and_are_said(monkeypatch):
    args = megatron_args(pipeline_model_parallel_size=4)
    installed = install_into(monkeypatch, args,
                             runtime={"forward_share": 0.25, "pipeline_stages": 2})
    assert installed.runtime.keywords["forward_share"] == 0.25
    assert installed.runtime.keywords["pipeline_stages"] == 2
    read = "\n".join(installed.runtime.read)
    assert "pipeline_model_parallel_size 4 (from args)" in read
    assert "pipeline_stages 2 (given by runtime=)" in read
    with pytest.raises(TypeError, match="runtime takes dcpsched.schedule_time's runtime "
                                        "keywords .*, not pp"):
        install_into(monkeypatch, args, runtime={"pp": 2})


def test_the_standalone_scheduler_steps_on_the_runtime_it_is_given():
    plain = dcpsched.megatron.DcpschedDynamicCPScheduler(2048, 4, 2, 4,
                                                         cost_profile="h200-llama3-8b")
    groups = plain.get_groups_and_subsamples(BATCH)
    assert plain.runtime.keywords == dcpsched.megatron.RUNTIME_DEFAULTS
    assert plain.step_time(BATCH, groups) == dcpsched.schedule_time(groups, BATCH, PROFILE,
                                                                    2048)
    piped = dcpsched.megatron.DcpschedDynamicCPScheduler(
        2048, 4, 2, 4, runtime={"pipeline_stages": 4, "virtual_stages": 2})
    assert piped.step_time(BATCH, groups, profile=PROFILE) == dcpsched.schedule_time(
        groups, BATCH, PROFILE, 2048, pipeline_stages=4, virtual_stages=2)
    with pytest.raises(ValueError, match="step_time needs a cost profile"):
        piped.step_time(BATCH, groups)
    with pytest.raises(dcpsched.InvalidInputError, match="--virtual-stages 2 needs a pipeline"):
        dcpsched.megatron.DcpschedDynamicCPScheduler(
            2048, 4, 2, 4, runtime={"virtual_stages": 2}).step_time(BATCH, groups, PROFILE)
