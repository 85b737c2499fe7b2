"""dcpsched.megatron, the drop-in: equals the module, guards, plugs into
(a stand-in for) Megatron-LM's scheduler_map, and uses max_num_seqs as the
upstream it plugs into does (Megatron-LM PR #6479 caps with it; dev ignores
it), and warns when it serves an odd number of DPxCP ranks, which
Megatron-LM refuses for dynamic CP at start-up."""

import pathlib
import random
import shutil
import sys
import types
import warnings

import pytest

import dcpsched
import dcpsched.megatron
from dcpsched.conformance import upstream

FIXTURE = pathlib.Path(__file__).parent / "fixtures" / "megatron_calls_dcpsched"
DATASETS = pathlib.Path("megatron", "core", "datasets")


@pytest.fixture(name="drop_in", scope="module")
def fixture_drop_in():
    """The drop-in module."""
    return dcpsched.megatron


def test_the_drop_in_is_in_the_package():
    assert pathlib.Path(dcpsched.megatron.__file__).parent == (
        pathlib.Path(dcpsched.__file__).parent)
    for name in ("install_into_megatron", "DcpschedDynamicCPScheduler", "ScheduleViolation",
                 "OddDpCpSizeWarning", "DcpschedGroupsMixin", "upstream_applies_max_num_seqs",
                 "CostAwareFallbackWarning"):
        assert hasattr(dcpsched.megatron, name), name


@pytest.mark.parametrize("vpp", [None, 1, 2, 3])
def test_scheduler_equals_the_module(drop_in, vpp):
    batch = dcpsched.benchmark_workload()
    scheduler = drop_in.DcpschedDynamicCPScheduler(2048, 4, 2, vpp, min_cp_size=2,
                                                   verify=True)
    assert scheduler.total_hdp_gpus == 8
    assert scheduler.get_groups_and_subsamples(batch) == dcpsched.schedule_dynamic_cp(
        batch, 8, 2048, min_cp_size=2, vpp_group=vpp)


def test_invalid_batch_raises_value_error(drop_in):
    scheduler = drop_in.DcpschedDynamicCPScheduler(2048, 4, 2, None)
    with pytest.raises(ValueError, match="requires CP size 16"):
        scheduler.get_groups_and_subsamples([(0, 20000)])


def test_guard_raises_on_a_broken_schedule(drop_in, monkeypatch):
    batch = dcpsched.benchmark_workload(32)

    def lossy_scheduler(sample_id_seqlens, *args, **kwargs):
        """A scheduler that loses the first sample of its first microbatch."""
        groups = real_scheduler(sample_id_seqlens, *args, **kwargs)
        victim = groups[0][0][0]
        groups[0] = [[i for i in rank if i != victim] for rank in groups[0]]
        return groups

    real_scheduler = dcpsched.schedule_dynamic_cp
    monkeypatch.setattr(dcpsched, "schedule_dynamic_cp", lossy_scheduler)
    unguarded = drop_in.DcpschedDynamicCPScheduler(2048, 4, 2, None)
    assert unguarded.get_groups_and_subsamples(batch)  # passes silently
    guarded = drop_in.DcpschedDynamicCPScheduler(2048, 4, 2, None, verify=True)
    with pytest.raises(drop_in.ScheduleViolation) as error:
        guarded.get_groups_and_subsamples(batch)
    assert error.value.violations
    assert all(v.startswith("invariant ") for v in error.value.violations)
    assert "in no microbatch" in str(error.value)


def step_with_cap(sample_seqlens, total_gpus, max_seq_len_per_rank, min_cp_size=1,
                  max_num_seqs=None):
    """Megatron-LM PR #6479's signature of next_hdp_group_packing_aware."""
    raise AssertionError("upstream's step ran, not dcpsched's")


def step_without_cap(sample_seqlens, total_gpus, max_seq_len_per_rank, min_cp_size=1):
    """Megatron-LM dev's signature of next_hdp_group_packing_aware."""
    raise AssertionError("upstream's step ran, not dcpsched's")


def fake_megatron(step=step_with_cap):
    """The parts of megatron.core.datasets.data_schedule the drop-in uses,
    with upstream's constructor and attributes, and `step` as the
    next_hdp_group_packing_aware it imports."""
    data_schedule = types.ModuleType("megatron.core.datasets.data_schedule")
    data_schedule.next_hdp_group_packing_aware = step

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


def test_install_into_megatron(drop_in, monkeypatch):
    for name, module in fake_megatron().items():
        monkeypatch.setitem(sys.modules, name, module)
    installed = drop_in.install_into_megatron(verify=True)
    data_schedule = sys.modules["megatron.core.datasets.data_schedule"]
    assert data_schedule.scheduler_map["default_dynamic_cp"] is installed
    assert issubclass(installed, data_schedule.DefaultDynamicCPScheduler)
    # As Megatron-LM's wrap_data_iterator constructs it.
    scheduler = installed(2048, 4, 2, 2, max_num_seqs=None, min_cp_size=1)
    batch = dcpsched.benchmark_workload(64)
    assert scheduler.verify_schedules
    assert scheduler.get_groups_and_subsamples(batch) == dcpsched.schedule_dynamic_cp(
        batch, 8, 2048, vpp_group=2)


def fake_parallel_state(dp_cp_size, initialized=True):
    """megatron.core.parallel_state as the drop-in reads it: initialized or
    not, with a DPxCP group of dp_cp_size ranks."""
    parallel_state = types.ModuleType("megatron.core.parallel_state")
    parallel_state.model_parallel_is_initialized = lambda: initialized

    def get_data_parallel_world_size(with_context_parallel=False):
        assert with_context_parallel
        return dp_cp_size
    parallel_state.get_data_parallel_world_size = get_data_parallel_world_size
    return parallel_state


def install_with_parallel_state(drop_in, monkeypatch, parallel_state, **kwargs):
    """install_into_megatron(verify=True, **kwargs) into fake_megatron() with
    parallel_state as megatron.core.parallel_state; returns (the class, the
    OddDpCpSizeWarnings raised)."""
    packages = fake_megatron()
    if parallel_state is not None:
        packages["megatron.core"].parallel_state = parallel_state
        packages["megatron.core.parallel_state"] = parallel_state
    for name, module in packages.items():
        monkeypatch.setitem(sys.modules, name, module)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        installed = drop_in.install_into_megatron(verify=True, **kwargs)
    return installed, [w for w in caught if issubclass(w.category,
                                                       drop_in.OddDpCpSizeWarning)]


@pytest.mark.parametrize("dp_cp_size", [3, 5, 15])
def test_install_into_a_runtime_of_odd_dp_cp_size_warns(drop_in, monkeypatch, dp_cp_size):
    _, raised = install_with_parallel_state(drop_in, monkeypatch,
                                            fake_parallel_state(dp_cp_size))
    assert len(raised) == 1
    message = str(raised[0].message)
    assert message.startswith(f"{dp_cp_size} DPxCP ranks: Megatron-LM refuses an odd number "
                              "of DPxCP ranks for dynamic context parallelism at start-up")
    assert raised[0].filename == __file__  # pointed at the caller of install_into_megatron


@pytest.mark.parametrize("parallel_state, kwargs, warned", [
    (fake_parallel_state(6), {}, False),
    (fake_parallel_state(12), {}, False),
    (fake_parallel_state(3, initialized=False), {}, False),  # nothing to read yet
    (None, {}, False),                                        # no parallel_state at all
    (None, {"dp_cp_size": 7}, True),                          # said by the caller
    (fake_parallel_state(3), {"dp_cp_size": 4}, False),       # the caller's size wins
])
def test_install_warns_only_for_an_odd_size_it_knows(drop_in, monkeypatch, parallel_state,
                                                     kwargs, warned):
    _, raised = install_with_parallel_state(drop_in, monkeypatch, parallel_state, **kwargs)
    assert bool(raised) is warned


def test_the_installed_class_warns_when_built_for_an_odd_size(drop_in, monkeypatch):
    installed, raised = install_with_parallel_state(drop_in, monkeypatch, None)
    assert not raised
    with pytest.warns(drop_in.OddDpCpSizeWarning, match="^3 DPxCP ranks: Megatron-LM refuses"):
        scheduler = installed(2048, 1, 3, None, max_num_seqs=None, min_cp_size=1)
    # It still schedules, as upstream's scheduler would: the runtime is what refuses.
    assert scheduler.get_groups_and_subsamples([(0, 10)]) == dcpsched.schedule_dynamic_cp(
        [(0, 10)], 3, 2048)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        installed(2048, 2, 3, None, max_num_seqs=None, min_cp_size=1)  # 6 ranks: silent


def capped_batch():
    """A batch on which a cap of 2 changes the schedule of dp 2 x cp 4."""
    batch = [(i, 40 + 7 * i) for i in range(48)]
    assert dcpsched.schedule_dynamic_cp(batch, 8, 2048, max_num_seqs=2) != (
        dcpsched.schedule_dynamic_cp(batch, 8, 2048))
    return batch


@pytest.mark.parametrize("step, applies", [(step_with_cap, True), (step_without_cap, False)])
def test_install_uses_max_num_seqs_as_the_upstream_step_does(drop_in, monkeypatch, step,
                                                            applies):
    for name, module in fake_megatron(step).items():
        monkeypatch.setitem(sys.modules, name, module)
    installed = drop_in.install_into_megatron(verify=True)
    assert installed.applies_max_num_seqs is applies
    batch = capped_batch()
    scheduler = installed(2048, 4, 2, None, max_num_seqs=2, min_cp_size=1)
    assert scheduler.get_groups_and_subsamples(batch) == dcpsched.schedule_dynamic_cp(
        batch, 8, 2048, max_num_seqs=2 if applies else None)


def test_the_standalone_scheduler_applies_max_num_seqs(drop_in):
    batch = capped_batch()
    capped = drop_in.DcpschedDynamicCPScheduler(2048, 4, 2, None, 2, verify=True)
    assert capped.get_groups_and_subsamples(batch) == dcpsched.schedule_dynamic_cp(
        batch, 8, 2048, max_num_seqs=2)
    uncapped = drop_in.DcpschedDynamicCPScheduler(2048, 4, 2, None)
    assert uncapped.get_groups_and_subsamples(batch) == dcpsched.schedule_dynamic_cp(
        batch, 8, 2048)


def installed_into(checkout, drop_in, monkeypatch):
    """install_into_megatron() into the checkout's modules, loaded as the
    conformance check loads them; returns (the installed class, upstream's)."""
    loaded = upstream.load(checkout)
    packages = {name: types.ModuleType(name) for name in
                ["megatron", "megatron.core", "megatron.core.datasets"]}
    packages["megatron.core.datasets"].data_schedule = loaded.schedule_module
    packages["megatron.core.datasets.data_schedule"] = loaded.schedule_module
    for name, module in packages.items():
        monkeypatch.setitem(sys.modules, name, module)
    return drop_in.install_into_megatron(verify=True), loaded.dynamic_cp_scheduler


def drop_pr6479_lines(checkout):
    """The fixture checkout as Megatron-LM dev (see test_conformance.as_dev)."""
    for path in (checkout / DATASETS).glob("*.py"):
        path.write_text("".join(line for line in path.read_text().splitlines(keepends=True)
                                if "# Megatron-LM PR #6479" not in line))


def groups_or_error(scheduler, batch):
    """The scheduler's groups of the batch, or the ValueError's message."""
    try:
        return scheduler.get_groups_and_subsamples(batch)
    except ValueError as error:
        return str(error)


@pytest.mark.parametrize("as_dev", [False, True])
def test_install_into_the_fixture_checkout_equals_its_scheduler(drop_in, monkeypatch,
                                                               tmp_path, as_dev):
    checkout = tmp_path / "checkout"
    shutil.copytree(FIXTURE, checkout)
    if as_dev:
        drop_pr6479_lines(checkout)
    installed, theirs = installed_into(checkout, drop_in, monkeypatch)
    assert installed.applies_max_num_seqs is not as_dev
    rng = random.Random(6479)
    capped_differently = 0  # batches where the cap changes the schedule
    for _ in range(30):
        batch = [(i, rng.randint(1, 3000)) for i in range(rng.randint(1, 60))]
        dp, cp = rng.choice([(1, 2), (2, 2), (2, 4), (3, 2)])
        vpp, cap = rng.choice([None, 2]), rng.choice([1, 2, 3, 4])
        groups = groups_or_error(installed(2048, cp, dp, vpp, max_num_seqs=cap,
                                           min_cp_size=1), batch)
        assert groups == groups_or_error(theirs(2048, cp, dp, vpp, max_num_seqs=cap,
                                                min_cp_size=1), batch)
        capped_differently += groups != groups_or_error(
            theirs(2048, cp, dp, vpp, min_cp_size=1), batch)
    assert (capped_differently == 0) is as_dev


# The cost-aware scheduler in the drop-in (docs/cost_aware.md).

# G = 6 with vpp 4: packing-aware refuses this batch (upstream returns a
# schedule its runtime cannot run, or none), cost-aware schedules it.
UNSCHEDULABLE_AT_6 = [(i, n) for i, n in enumerate([9000, 3000, 700, 500, 400, 300,
                                                    5000, 2500, 1200, 800])]


def test_install_with_a_cost_profile_schedules_cost_aware(drop_in, monkeypatch):
    for name, module in fake_megatron().items():
        monkeypatch.setitem(sys.modules, name, module)
    installed = drop_in.install_into_megatron(verify=True, cost_profile="h200-llama3-8b")
    data_schedule = sys.modules["megatron.core.datasets.data_schedule"]
    assert data_schedule.scheduler_map["default_dynamic_cp"] is installed
    assert isinstance(installed.cost_profile, dcpsched.CostProfile)
    scheduler = installed(16384, 8, 8, None, max_num_seqs=None, min_cp_size=1)
    batch = dcpsched.benchmark_workload(256)
    profile = dcpsched.CostProfile("h200-llama3-8b")
    expected = dcpsched.schedule_cost_aware(batch, 64, 16384, profile=profile)
    assert scheduler.get_groups_and_subsamples(batch) == expected
    # Not packing-aware's schedule where cost-aware plans a faster one.
    long_batch = [(i, 512 + (i * 7919) % 60000) for i in range(96)]
    planned = dcpsched.schedule_cost_aware(long_batch, 64, 16384, profile=profile,
                                           details=True)
    assert scheduler.get_groups_and_subsamples(long_batch) == planned["schedule"]


def test_the_cost_aware_drop_in_verifies_what_cost_aware_promises(drop_in, monkeypatch):
    """verify=True checks every invariant but the work cap: a schedule that
    breaks the cap passes, one that loses a sample does not."""
    batch = UNSCHEDULABLE_AT_6
    real = dcpsched.schedule_cost_aware
    scheduler = drop_in.DcpschedDynamicCPScheduler(4096, 1, 6, 4, verify=True,
                                                   cost_profile="h200-llama3-8b")
    groups = scheduler.get_groups_and_subsamples(batch)
    assert len(groups) % 4 == 0
    assert dcpsched.verify(groups, batch, 6, 4096, vpp_group=4, scheduler="cost_aware") == []

    def lossy(*args, **kwargs):
        result = real(*args, **kwargs)
        victim = result[0][0][0]
        result[0] = [[i for i in rank if i != victim] for rank in result[0]]
        return result

    monkeypatch.setattr(dcpsched, "schedule_cost_aware", lossy)
    with pytest.raises(drop_in.ScheduleViolation, match="in no microbatch"):
        scheduler.get_groups_and_subsamples(batch)


def test_only_where_upstream_fails_keeps_packing_aware_elsewhere(drop_in, monkeypatch):
    for name, module in fake_megatron().items():
        monkeypatch.setitem(sys.modules, name, module)
    profile = dcpsched.CostProfile("h200-llama3-8b")
    installed = drop_in.install_into_megatron(verify=True, cost_profile=profile,
                                              only_where_upstream_fails=True)
    assert installed.cost_profile is profile
    # Where packing-aware schedules: its schedule, bit for bit, and no warning.
    scheduler = installed(16384, 8, 8, None, max_num_seqs=None, min_cp_size=1)
    long_batch = [(i, 512 + (i * 7919) % 60000) for i in range(96)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert scheduler.get_groups_and_subsamples(long_batch) == (
            dcpsched.schedule_dynamic_cp(long_batch, 64, 16384))
    # Where it refuses: cost-aware's schedule, with a warning that says why.
    at_6 = installed(4096, 1, 6, 4, max_num_seqs=None, min_cp_size=1)
    with pytest.raises(dcpsched.UnschedulableError):
        dcpsched.schedule_dynamic_cp(UNSCHEDULABLE_AT_6, 6, 4096, vpp_group=4)
    with pytest.warns(drop_in.CostAwareFallbackWarning,
                      match="^packing-aware cannot schedule this batch of 10 samples") as caught:
        groups = at_6.get_groups_and_subsamples(UNSCHEDULABLE_AT_6)
    assert "h200-llama3-8b" in str(caught[0].message)
    assert groups == dcpsched.schedule_cost_aware(UNSCHEDULABLE_AT_6, 6, 4096, profile=profile,
                                                  vpp_group=4)


def test_the_fallback_needs_a_profile_and_profiles_are_checked(drop_in, monkeypatch):
    for name, module in fake_megatron().items():
        monkeypatch.setitem(sys.modules, name, module)
    with pytest.raises(ValueError, match="only_where_upstream_fails=True needs a cost_profile"):
        drop_in.install_into_megatron(only_where_upstream_fails=True)
    with pytest.raises(TypeError, match="cost_profile must be a dcpsched.CostProfile"):
        drop_in.install_into_megatron(cost_profile=8)
    with pytest.raises(FileNotFoundError):
        drop_in.install_into_megatron(cost_profile="no-such-profile")
