"""python/examples/megatron_drop_in.py: runs as a script, equals the module,
guards, and plugs into (a stand-in for) Megatron-LM's scheduler_map."""

import importlib.util
import os
import subprocess
import sys
import types

import pytest

import dcpsched
from conftest import EXAMPLES_DIR

EXAMPLE = EXAMPLES_DIR / "megatron_drop_in.py"


@pytest.fixture(name="example", scope="module")
def fixture_example():
    spec = importlib.util.spec_from_file_location("megatron_drop_in", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_runs_as_a_script():
    result = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True,
                            text=True, timeout=120, env=dict(os.environ),
                            check=False)
    assert result.returncode == 0, result.stderr
    assert "256 samples on dp 2 x cp 4" in result.stdout
    assert "guard on a schedule that lost sample" in result.stdout
    assert "invariant 1 (no empty rank)" in result.stdout
    assert "ValueError: Sequence length 20000 (sample 0) requires CP size 16" in result.stdout


@pytest.mark.parametrize("vpp", [None, 1, 2, 3])
def test_scheduler_equals_the_module(example, vpp):
    batch = example.benchmark_batch()
    scheduler = example.DcpschedDynamicCPScheduler(2048, 4, 2, vpp, min_cp_size=2,
                                                   verify=True)
    assert scheduler.total_hdp_gpus == 8
    assert scheduler.get_groups_and_subsamples(batch) == dcpsched.schedule_dynamic_cp(
        batch, 8, 2048, min_cp_size=2, vpp_group=vpp)


def test_invalid_batch_raises_value_error(example):
    scheduler = example.DcpschedDynamicCPScheduler(2048, 4, 2, None)
    with pytest.raises(ValueError, match="requires CP size 16"):
        scheduler.get_groups_and_subsamples([(0, 20000)])


def test_guard_raises_on_a_broken_schedule(example, monkeypatch):
    batch = example.benchmark_batch(32)

    def lossy_scheduler(sample_id_seqlens, *args, **kwargs):
        """A scheduler that loses the first sample of its first microbatch."""
        groups = real_scheduler(sample_id_seqlens, *args, **kwargs)
        victim = groups[0][0][0]
        groups[0] = [[i for i in rank if i != victim] for rank in groups[0]]
        return groups

    real_scheduler = dcpsched.schedule_dynamic_cp
    monkeypatch.setattr(dcpsched, "schedule_dynamic_cp", lossy_scheduler)
    unguarded = example.DcpschedDynamicCPScheduler(2048, 4, 2, None)
    assert unguarded.get_groups_and_subsamples(batch)  # passes silently
    guarded = example.DcpschedDynamicCPScheduler(2048, 4, 2, None, verify=True)
    with pytest.raises(example.ScheduleViolation) as error:
        guarded.get_groups_and_subsamples(batch)
    assert error.value.violations
    assert all(v.startswith("invariant ") for v in error.value.violations)
    assert "in no microbatch" in str(error.value)


def fake_megatron():
    """The parts of megatron.core.datasets.data_schedule the example uses,
    with upstream's constructor and attributes."""
    data_schedule = types.ModuleType("megatron.core.datasets.data_schedule")

    class DefaultDynamicCPScheduler:
        def __init__(self, max_seqlen_per_dp_cp_rank, cp_size, dp_size,
                     microbatch_group_size_per_vp_stage, max_num_seqs=None,
                     min_cp_size=1):
            self.max_seqlen_per_dp_cp_rank = max_seqlen_per_dp_cp_rank
            self.cp_size = cp_size
            self.dp_size = dp_size
            self.microbatch_group_size_per_vp_stage = microbatch_group_size_per_vp_stage
            self.max_num_seqs = max_num_seqs
            self.is_dynamic_cp = True
            self.max_seq_len_per_rank = max_seqlen_per_dp_cp_rank
            self.total_hdp_gpus = dp_size * cp_size
            self.min_cp_size = min_cp_size

        def get_groups_and_subsamples(self, sample_id_seqlens):
            raise AssertionError("upstream's scheduler ran, not dcpsched's")

    data_schedule.DefaultDynamicCPScheduler = DefaultDynamicCPScheduler
    data_schedule.scheduler_map = {"default_dynamic_cp": DefaultDynamicCPScheduler}
    packages = {name: types.ModuleType(name) for name in
                ["megatron", "megatron.core", "megatron.core.datasets"]}
    packages["megatron"].core = packages["megatron.core"]
    packages["megatron.core"].datasets = packages["megatron.core.datasets"]
    packages["megatron.core.datasets"].data_schedule = data_schedule
    packages["megatron.core.datasets.data_schedule"] = data_schedule
    return packages


def test_install_into_megatron(example, monkeypatch):
    for name, module in fake_megatron().items():
        monkeypatch.setitem(sys.modules, name, module)
    installed = example.install_into_megatron(verify=True)
    data_schedule = sys.modules["megatron.core.datasets.data_schedule"]
    assert data_schedule.scheduler_map["default_dynamic_cp"] is installed
    assert issubclass(installed, data_schedule.DefaultDynamicCPScheduler)
    # As Megatron-LM's wrap_data_iterator constructs it.
    scheduler = installed(2048, 4, 2, 2, max_num_seqs=None, min_cp_size=1)
    batch = example.benchmark_batch(64)
    assert scheduler.verify_schedules
    assert scheduler.get_groups_and_subsamples(batch) == dcpsched.schedule_dynamic_cp(
        batch, 8, 2048, vpp_group=2)
