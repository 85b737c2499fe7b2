"""dcpsched.schedule_time's runtime step and dcpsched.pipeline_stage_order:
the runtime step model of docs/runtime_step.md from Python, equal to what
the command line writes as quality.runtime."""

import inspect
import json
import os
import pathlib
import subprocess

import pytest

import dcpsched

PROFILE = dcpsched.CostProfile("h200-llama3-8b")
BATCH = dcpsched.benchmark_workload(64)
SCHEDULE = dcpsched.schedule_dynamic_cp(BATCH, 8, 2048, vpp_group=4)
assert len(SCHEDULE) == 8  # the refusals below are of 8 microbatches
# The keys of quality.runtime in a JSON run document (io/schedule_json.cc).
RUNTIME_KEYS = {"path", "pipeline_stages", "virtual_stages", "microbatch_group_size",
                "layers_per_stage", "forward_share", "expert_parallel_size", "step_seconds",
                "busiest_rank_seconds", "bubble_seconds", "bound_seconds"}


def runtime_of(**runtime):
    """schedule_time(SCHEDULE, ...)'s "runtime" dict under `runtime`."""
    return dcpsched.schedule_time(SCHEDULE, BATCH, PROFILE, 2048, **runtime)["runtime"]


def test_the_default_runtime_is_dev_without_pipelining():
    figures = dcpsched.schedule_time(SCHEDULE, BATCH, PROFILE, 2048)
    runtime = figures["runtime"]
    assert set(runtime) == RUNTIME_KEYS
    assert runtime["path"] == "dev"
    assert (runtime["pipeline_stages"], runtime["virtual_stages"],
            runtime["microbatch_group_size"], runtime["layers_per_stage"]) == (1, 1, 1, 1)
    assert runtime["forward_share"] == 1.0 / 3.0
    assert runtime["expert_parallel_size"] is None
    # No barrier: never slower than the barrier step, and its own bound holds.
    assert runtime["bound_seconds"] <= runtime["step_seconds"] <= figures["step_seconds"]
    assert runtime["bubble_seconds"] == runtime["step_seconds"] - runtime["busiest_rank_seconds"]
    # The other keys keep what schedule_time returned before the runtime came.
    assert set(figures) == {"step_seconds", "bound_seconds", "gpu_efficiency",
                            "microbatch_seconds", "communication_modelled", "runtime"}


def test_the_legacy_runtime_at_one_layer_is_the_barrier_step_bit_for_bit():
    figures = dcpsched.schedule_time(SCHEDULE, BATCH, PROFILE, 2048, runtime="legacy")
    assert figures["runtime"]["path"] == "legacy"
    assert figures["runtime"]["step_seconds"] == figures["step_seconds"]


def test_layers_and_pipelines_scale_the_step():
    one = runtime_of()
    four = runtime_of(layers_per_stage=4)
    assert four["busiest_rank_seconds"] == pytest.approx(4 * one["busiest_rank_seconds"])
    piped = runtime_of(pipeline_stages=4, layers_per_stage=4)
    assert piped["pipeline_stages"] == 4 and piped["microbatch_group_size"] == 4
    assert piped["bubble_seconds"] > 0  # the 1F1B warm-up and cool-down
    interleaved = runtime_of(pipeline_stages=2, virtual_stages=2, microbatch_group_size=2,
                             layers_per_stage=4, forward_share=0.25)
    assert (interleaved["virtual_stages"], interleaved["microbatch_group_size"],
            interleaved["forward_share"]) == (2, 2, 0.25)
    assert interleaved["bound_seconds"] <= interleaved["step_seconds"]
    lockstep = runtime_of(expert_parallel_size=8)
    assert lockstep["expert_parallel_size"] == 8
    assert lockstep["step_seconds"] >= one["step_seconds"]


def cli_program():
    """The dcpsched program of the build whose module the tests import."""
    path = pathlib.Path(os.environ.get(
        "DCPSCHED_CLI", pathlib.Path(dcpsched.__file__).resolve().parents[2] / "dcpsched"))
    if not path.is_file():
        pytest.skip(f"no dcpsched program at {path} (set DCPSCHED_CLI)")
    return path


@pytest.mark.parametrize("flags, keywords", [
    ([], {}),
    (["--pp", "2", "--virtual-stages", "2", "--vpp", "2", "--layers-per-stage", "3",
      "--ep", "4"],
     {"pipeline_stages": 2, "virtual_stages": 2, "microbatch_group_size": 2,
      "layers_per_stage": 3, "expert_parallel_size": 4}),
    (["--pp", "4", "--forward-share", "0.4"], {"pipeline_stages": 4, "forward_share": 0.4}),
    (["--runtime", "legacy", "--layers-per-stage", "2"],
     {"runtime": "legacy", "layers_per_stage": 2}),
])
def test_the_runtime_is_the_json_documents_quality_runtime(flags, keywords):
    """The CLI's `schedule --format json` run document and schedule_time of
    its schedule give the same object, bit for bit."""
    # The program links its own sanitizer runtime: the module's preloaded one
    # (the sanitized build's LD_PRELOAD) must not reach it.
    environment = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    result = subprocess.run(
        [str(cli_program()), "schedule", "--samples", "48", "--format", "json",
         "--cost-profile", "h200-llama3-8b", *flags],
        capture_output=True, text=True, check=True, env=environment)
    document = json.loads(result.stdout)
    total = document["parameters"]["total_gpus"]
    schedule = []
    for microbatch in document["microbatches"]:
        ranks = [None] * total
        for group in microbatch["cp_groups"]:
            for rank in range(group["first_rank"], group["first_rank"] + group["size"]):
                ranks[rank] = list(group["ids"])
        schedule.append(ranks)
    samples = [tuple(pair) for pair in document["samples"]]
    budget = document["parameters"]["max_seq_len_per_rank"]
    figures = dcpsched.schedule_time(schedule, samples, PROFILE, budget, **keywords)
    assert figures["runtime"] == document["quality"]["runtime"]


@pytest.mark.parametrize("keywords, message", [
    ({"pipeline_stages": 0}, "the pipeline has 0 stages"),
    ({"virtual_stages": 2}, "--virtual-stages 2 needs a pipeline"),
    ({"pipeline_stages": 3, "virtual_stages": 2, "microbatch_group_size": 3},
     "leaves a last group of 2, fewer than the 3 pipeline stages: Megatron-LM refuses"),
    ({"pipeline_stages": 2, "virtual_stages": 2, "microbatch_group_size": 64},
     "interleaving runs groups of 64 microbatches per virtual stage"),
    ({"pipeline_stages": 2, "runtime": "legacy"}, "the legacy runtime"),
    ({"runtime": "main"}, 'runtime is "main"; give "dev"'),
    ({"layers_per_stage": 0}, "--layers-per-stage is 0"),
    ({"forward_share": 1.0}, "--forward-share is 1"),
    ({"forward_share": float("nan")}, "--forward-share is nan"),
    ({"expert_parallel_size": 3}, "--ep 3 does not divide the 8 DPxCP ranks"),
    ({"microbatch_group_size": 0}, "microbatch_group_size is 0; give 1 or more, or None"),
])
def test_a_runtime_the_model_refuses_raises_value_error_with_the_core_message(keywords,
                                                                             message):
    with pytest.raises(dcpsched.InvalidInputError) as error:
        runtime_of(**keywords)
    assert message in str(error.value)


@pytest.mark.parametrize("keywords, message", [
    ({"pipeline_stages": 2.0}, "pipeline_stages must be an int, not float"),
    ({"forward_share": "0.3"}, "forward_share must be a float, not str"),
    ({"runtime": None}, 'runtime must be "dev" or "legacy", not NoneType'),
    ({"expert_parallel_size": "8"}, "expert_parallel_size must be an int, not str"),
])
def test_a_runtime_argument_of_the_wrong_type_raises_type_error(keywords, message):
    with pytest.raises(TypeError, match=message):
        runtime_of(**keywords)


def test_the_runtime_arguments_are_keyword_only():
    parameters = inspect.signature(dcpsched.schedule_time).parameters
    runtime = ["pipeline_stages", "virtual_stages", "microbatch_group_size", "layers_per_stage",
               "forward_share", "expert_parallel_size", "runtime"]
    assert list(parameters)[5:] == runtime
    assert all(parameters[name].kind is inspect.Parameter.KEYWORD_ONLY for name in runtime)
    assert parameters["forward_share"].default == 1.0 / 3.0
    assert str(inspect.signature(dcpsched.pipeline_stage_order)) == (
        "(stages, virtual_stages, num_microbatches, pipeline_rank, *, "
        "microbatch_group_size=None)")


# --- pipeline_stage_order -------------------------------------------------------


def rule_1f1b(stages, count, rank):
    """docs/runtime_step.md's 1F1B order of pipeline rank `rank`."""
    warmup = min(stages - rank - 1, count)
    order = [(m, 0, True) for m in range(warmup)]
    for i in range(count - warmup):
        order += [(warmup + i, 0, True), (i, 0, False)]
    return order + [(m, 0, False) for m in range(count - warmup, count)]


@pytest.mark.parametrize("stages", [1, 2, 3, 8])
@pytest.mark.parametrize("count", [1, 2, 5, 9])
def test_without_interleaving_the_order_is_1f1b(stages, count):
    for rank in range(stages):
        assert dcpsched.pipeline_stage_order(stages, 1, count, rank) == (
            rule_1f1b(stages, count, rank)), (stages, count, rank)


def test_without_pipelining_each_forward_is_followed_by_its_backward():
    assert dcpsched.pipeline_stage_order(1, 1, 3, 0) == [
        (0, 0, True), (0, 0, False), (1, 0, True), (1, 0, False), (2, 0, True), (2, 0, False)]


def test_the_interleaved_order_of_the_upstream_example():
    """get_schedule_table's docstring example, PP 2 N 3 M 5 with VP 2: the
    table 0 1 2 0 1 2 3 4 3 4 over chunks 0 0 0 1 1 1 0 0 1 1; rank 0 warms
    up with (2 - 0 - 1) * 2 + (2 - 1) * 3 = 5 forwards."""
    order = dcpsched.pipeline_stage_order(2, 2, 5, 0, microbatch_group_size=3)
    table = [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1), (3, 0), (4, 0), (3, 1), (4, 1)]
    forwards = [(m, c) for m, c, forward in order if forward]
    backwards = [(m, 1 - c) for m, c, forward in order if not forward]
    assert forwards == table and backwards == table
    # convert_schedule_table_to_order's docstring, warm-up 5: chunk c + 1 for a
    # forward, -(c + 1) for a backward.
    signed = [c + 1 if forward else -(c + 1) for _, c, forward in order]
    assert signed == [1, 1, 1, 2, 2, 2, -2, 1, -2, 1, -2, 2, -1, 2, -1, -1, -2, -2, -1, -1]


@pytest.mark.parametrize("stages, chunks, count, group", [
    (2, 2, 4, None), (4, 2, 8, None), (3, 3, 10, 5), (4, 4, 12, 6), (2, 3, 6, 4)])
def test_every_op_runs_once_and_a_backward_after_its_forward(stages, chunks, count, group):
    for rank in range(stages):
        order = dcpsched.pipeline_stage_order(stages, chunks, count, rank,
                                              microbatch_group_size=group)
        assert len(order) == 2 * count * chunks
        assert sorted(order) == sorted((m, c, f) for m in range(count) for c in range(chunks)
                                       for f in (True, False))
        for m in range(count):
            for c in range(chunks):
                assert order.index((m, c, True)) < order.index((m, c, False))
        assert all(isinstance(m, int) and isinstance(c, int) and isinstance(f, bool)
                   for m, c, f in order)


@pytest.mark.parametrize("arguments, keywords, message", [
    ((2, 2, 5, 0), {}, "leaves a last group of 1, fewer than the 2 pipeline stages"),
    ((4, 2, 8, 0), {"microbatch_group_size": 2}, "which must lie in [4 (the pipeline size), 8"),
    ((2, 2, 3, 0), {"microbatch_group_size": 4}, "which must lie in [2 (the pipeline size), 3"),
    ((1, 2, 4, 0), {}, "--virtual-stages 2 needs a pipeline"),
    ((0, 1, 4, 0), {}, "the pipeline has 0 stages"),
    ((2, 0, 4, 0), {}, "the pipeline has 0 virtual stages per rank"),
    ((2, 1, -1, 0), {}, "the step has -1 microbatches; a step has 0 or more"),
    ((2, 1, 4, 2), {}, "pipeline_rank is 2; it must be in [0, 2)"),
    ((2, 1, 4, -1), {}, "pipeline_rank is -1; it must be in [0, 2)"),
    ((2, 2, 4, 0), {"microbatch_group_size": 0}, "microbatch_group_size is 0"),
    ((2, 1, 1 << 40, 0), {}, "dcpsched models at most"),
])
def test_pipeline_stage_order_refuses_with_the_core_message(arguments, keywords, message):
    with pytest.raises(dcpsched.InvalidInputError) as error:
        dcpsched.pipeline_stage_order(*arguments, **keywords)
    assert message in str(error.value)


def test_pipeline_stage_order_takes_ints_only():
    with pytest.raises(TypeError, match="num_microbatches must be an int, not float"):
        dcpsched.pipeline_stage_order(2, 1, 4.0, 0)
    with pytest.raises(TypeError):
        dcpsched.pipeline_stage_order(2, 2, 4, 0, 2)  # the group size is keyword-only
    assert dcpsched.pipeline_stage_order(2, 1, 0, 1) == []
