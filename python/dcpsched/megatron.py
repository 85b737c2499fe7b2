"""dcpsched.megatron: Megatron-LM's DefaultDynamicCPScheduler, scheduling by dcpsched.

Upstream's DefaultDynamicCPScheduler (megatron/core/datasets/data_schedule.py)
computes each global batch's schedule in get_groups_and_subsamples. The
classes here compute the same schedule (bit for bit: the golden vectors say
so) with the C++ core, with the GIL released, and raise ValueError with a
message saying what to change where upstream would crash, hang or return a
broken schedule. Everything else of the data pipeline (run(): the gather,
the rerouting, THD packing, the broadcasts) stays upstream's.

In a training job (a Megatron-LM fork), install it once per process, after
the process groups exist and before the first training step:

    from dcpsched.megatron import install_into_megatron
    install_into_megatron()

Megatron-LM's wrap_data_iterator looks its scheduler class up in
data_schedule.scheduler_map by config.sequence_packing_scheduler on every
global batch; install_into_megatron() puts a subclass of upstream's
DefaultDynamicCPScheduler there under "default_dynamic_cp". Where in the
fork that goes: python/README.md, "The drop-in in a training job".

max_num_seqs (the cap on the samples one rank holds in a microbatch) is
used as upstream uses it: Megatron-LM PR #6479 passes it to its
packing-aware step, Megatron-LM dev accepts it in the constructor and ignores
it. install_into_megatron() reads which from the installed upstream (does
its next_hdp_group_packing_aware take max_num_seqs?); the standalone class
applies it, as PR #6479 does (pass max_num_seqs=None for dev's behaviour).

Megatron-LM refuses an odd number of DPxCP ranks for dynamic CP at start-up
(initialize_model_parallel(dynamic_context_parallel=True) asserts an even
number), so no runtime runs default_dynamic_cp's schedules there:
install_into_megatron() warns (OddDpCpSizeWarning) when the runtime it is
installed into has an odd DPxCP size, and so does constructing the installed
class for an odd dp_size * cp_size (a runtime that installs before
initializing its process groups is caught there).

Optional runtime guard: with verify=True every schedule is also checked by
dcpsched.verify (linear in its size), and ScheduleViolation is raised if it
breaks an invariant, before any rank acts on it.

The cost-aware scheduler (docs/cost_aware.md) under the same name: with
cost_profile=P (a dcpsched.CostProfile, or a shipped profile's name or a
profile file's path), install_into_megatron() installs dcpsched's
cost-aware scheduler as "default_dynamic_cp" (Megatron-LM's dynamic CP only
runs that name), the profile bound at install time: each batch gets the
fastest runnable schedule it finds under P, never slower there than
packing-aware's. With only_where_upstream_fails=True as well, every batch
gets packing-aware's schedule (upstream's, bit for bit) and cost-aware's only
where packing-aware has none (upstream fails, hangs, or returns a schedule
its runtime cannot run), with a CostAwareFallbackWarning saying why. verify
then checks what cost-aware promises: every invariant but the work cap.

Standalone (no Megatron-LM needed):

    scheduler = DcpschedDynamicCPScheduler(
        max_seqlen_per_dp_cp_rank=2048, cp_size=4, dp_size=2,
        microbatch_group_size_per_vp_stage=None, min_cp_size=1, verify=True)
    groups = scheduler.get_groups_and_subsamples([(0, 5000), (1, 300)])

python/examples/megatron_drop_in.py is a short standalone use of it.
"""

import inspect
import warnings

import dcpsched


class ScheduleViolation(RuntimeError):
    """A schedule broke an invariant; .violations lists dcpsched.verify's
    messages."""

    def __init__(self, violations):
        self.violations = list(violations)
        shown = "\n  ".join(self.violations[:10])
        more = len(self.violations) - 10
        super().__init__(
            f"schedule breaks {len(self.violations)} invariant check(s):\n  {shown}"
            + (f"\n  ... and {more} more" if more > 0 else ""))


class CostAwareFallbackWarning(UserWarning):
    """A batch packing-aware cannot schedule got cost-aware's schedule
    (install_into_megatron(cost_profile=..., only_where_upstream_fails=True))."""


def as_cost_profile(profile):
    """`profile` as a dcpsched.CostProfile: one already, or a shipped
    profile's name or a profile file's path (None stays None)."""
    if profile is None or isinstance(profile, dcpsched.CostProfile):
        return profile
    if isinstance(profile, (str, bytes)) or hasattr(profile, "__fspath__"):
        return dcpsched.CostProfile(str(profile))
    raise TypeError(f"cost_profile must be a dcpsched.CostProfile, a shipped profile's "
                    f"name or a profile file's path, not {type(profile).__name__}")


class OddDpCpSizeWarning(UserWarning):
    """The drop-in serves a runtime of an odd number of DPxCP ranks, which
    Megatron-LM refuses for dynamic CP at start-up."""


def odd_dp_cp_size_message(dp_cp_size):
    """What OddDpCpSizeWarning says for `dp_cp_size` ranks."""
    return (f"{dp_cp_size} DPxCP ranks: Megatron-LM refuses an odd number of DPxCP ranks "
            "for dynamic context parallelism at start-up "
            "(initialize_model_parallel(dynamic_context_parallel=True) asserts an even "
            "number), so its runtime cannot run default_dynamic_cp's schedules here; make "
            "data_parallel_size * context_parallel_size even")


def warn_if_odd(dp_cp_size, stacklevel=3):
    """Warns OddDpCpSizeWarning if dp_cp_size (None: unknown) is odd."""
    if dp_cp_size is not None and dp_cp_size % 2 == 1:
        warnings.warn(odd_dp_cp_size_message(dp_cp_size), OddDpCpSizeWarning,
                      stacklevel=stacklevel)


def runtime_dp_cp_size():
    """The DPxCP size of the running Megatron-LM (its parallel_state, once
    its groups are initialized), or None where there is none to read."""
    try:
        from megatron.core import parallel_state  # pylint: disable=import-outside-toplevel
        if not parallel_state.model_parallel_is_initialized():
            return None
        return int(parallel_state.get_data_parallel_world_size(with_context_parallel=True))
    except (ImportError, AttributeError, AssertionError, RuntimeError, TypeError):
        return None


class DcpschedGroupsMixin:
    """get_groups_and_subsamples by dcpsched, for any class holding
    DefaultDynamicCPScheduler's attributes: total_hdp_gpus,
    max_seq_len_per_rank, min_cp_size, microbatch_group_size_per_vp_stage,
    max_num_seqs. Set verify_schedules = True for the runtime guard, and
    applies_max_num_seqs = False where upstream ignores max_num_seqs
    (Megatron-LM dev). Set cost_profile (a dcpsched.CostProfile) to schedule
    with the cost-aware scheduler, and cost_aware_only_where_upstream_fails
    to use it only where packing-aware has no schedule."""

    verify_schedules = False
    applies_max_num_seqs = True
    cost_profile = None
    cost_aware_only_where_upstream_fails = False

    def _cap(self):
        """The max_num_seqs dcpsched schedules with (None: no cap)."""
        if not self.applies_max_num_seqs:
            return None
        return getattr(self, "max_num_seqs", None)

    def _schedule(self, sample_id_seqlens, options):
        """(schedule, the scheduler whose invariants it keeps: None for
        packing-aware, "cost_aware")."""
        args = (sample_id_seqlens, self.total_hdp_gpus, self.max_seq_len_per_rank)
        if self.cost_profile is None:
            return dcpsched.schedule_dynamic_cp(*args, **options), None
        if self.cost_aware_only_where_upstream_fails:
            try:
                return dcpsched.schedule_dynamic_cp(*args, **options), None
            except dcpsched.UnschedulableError as error:
                warnings.warn(f"packing-aware cannot schedule this batch of "
                              f"{len(sample_id_seqlens)} samples ({error}); it gets "
                              f"cost-aware's schedule under {self.cost_profile.name}",
                              CostAwareFallbackWarning, stacklevel=3)
        return (dcpsched.schedule_cost_aware(*args, profile=self.cost_profile, **options),
                "cost_aware")

    def get_groups_and_subsamples(self, sample_id_seqlens):
        """Upstream's result: per microbatch, per DPxCP rank, the sample ids.

        sample_id_seqlens: list of (id, len) pairs of the global batch.
        Raises ValueError where the scheduler cannot schedule the batch, and
        ScheduleViolation (with verify_schedules) if the schedule is broken.
        """
        options = dict(min_cp_size=self.min_cp_size,
                       vpp_group=self.microbatch_group_size_per_vp_stage,
                       max_num_seqs=self._cap())
        groups, scheduler = self._schedule(sample_id_seqlens, options)
        if self.verify_schedules:
            violations = dcpsched.verify(
                groups, sample_id_seqlens, self.total_hdp_gpus,
                self.max_seq_len_per_rank, scheduler=scheduler, **options)
            if violations:
                raise ScheduleViolation(violations)
        return groups


class DcpschedDynamicCPScheduler(DcpschedGroupsMixin):
    """Standalone stand-in for upstream's DefaultDynamicCPScheduler: the same
    constructor arguments and get_groups_and_subsamples, without Megatron-LM.

    Args (upstream's):
      max_seqlen_per_dp_cp_rank: token budget of one DPxCP rank.
      cp_size, dp_size: the static CP and DP sizes; dp_size * cp_size ranks.
      microbatch_group_size_per_vp_stage: None without VPP; else the
        microbatch count becomes a multiple of it (when > 1).
      max_num_seqs: None, or at most this many samples per rank and
        microbatch, as Megatron-LM PR #6479's scheduler caps them
        (Megatron-LM dev ignores it: pass None for its schedules).
      min_cp_size: smallest CP group a sample may use (a power of two).
    Args (dcpsched's):
      verify: check every schedule with dcpsched.verify (runtime guard).
      cost_profile: None (packing-aware), or a dcpsched.CostProfile (or a
        shipped profile's name or a file's path): the cost-aware scheduler.
      only_where_upstream_fails: with cost_profile, packing-aware's schedule
        wherever it has one, cost-aware's only where it has none.
    """

    def __init__(self, max_seqlen_per_dp_cp_rank, cp_size, dp_size,
                 microbatch_group_size_per_vp_stage=None, max_num_seqs=None,
                 *, min_cp_size=1, verify=False, cost_profile=None,
                 only_where_upstream_fails=False):
        self.max_seqlen_per_dp_cp_rank = max_seqlen_per_dp_cp_rank
        self.cp_size = cp_size
        self.dp_size = dp_size
        self.microbatch_group_size_per_vp_stage = microbatch_group_size_per_vp_stage
        self.max_num_seqs = max_num_seqs
        self.is_dynamic_cp = True
        self.max_seq_len_per_rank = max_seqlen_per_dp_cp_rank
        self.total_hdp_gpus = dp_size * cp_size
        self.min_cp_size = min_cp_size
        self.verify_schedules = verify
        self.cost_profile = as_cost_profile(cost_profile)
        self.cost_aware_only_where_upstream_fails = only_where_upstream_fails


def upstream_applies_max_num_seqs(data_schedule):
    """True if the data_schedule module's DefaultDynamicCPScheduler caps the
    samples per rank with max_num_seqs: if the next_hdp_group_packing_aware
    it calls takes max_num_seqs (Megatron-LM PR #6479; dev's does not)."""
    step = data_schedule.next_hdp_group_packing_aware
    return "max_num_seqs" in inspect.signature(step).parameters


def install_into_megatron(verify=False, dp_cp_size=None, *, cost_profile=None,
                          only_where_upstream_fails=False):
    """Registers a subclass of Megatron-LM's DefaultDynamicCPScheduler whose
    get_groups_and_subsamples is dcpsched's as scheduler_map's
    "default_dynamic_cp"; returns the subclass. It uses max_num_seqs as the
    installed upstream does (upstream_applies_max_num_seqs). Needs
    Megatron-LM.

    cost_profile: None schedules as upstream's packing-aware scheduler; a
    dcpsched.CostProfile (or a shipped profile's name, or a profile file's
    path), read here, once, schedules with the cost-aware scheduler under it.
    only_where_upstream_fails (with cost_profile): packing-aware's schedule
    wherever it has one, cost-aware's where it has none, with a
    CostAwareFallbackWarning.

    Warns OddDpCpSizeWarning if the runtime's DPxCP size is odd: dp_cp_size
    where given, else the initialized parallel_state's (runtime_dp_cp_size);
    the installed class warns too when constructed for an odd size."""
    if only_where_upstream_fails and cost_profile is None:
        raise ValueError("only_where_upstream_fails=True needs a cost_profile: the "
                         "cost-aware scheduler it falls back to schedules under one")
    profile = as_cost_profile(cost_profile)
    from megatron.core.datasets import data_schedule

    warn_if_odd(dp_cp_size if dp_cp_size is not None else runtime_dp_cp_size())

    class DcpschedDefaultDynamicCPScheduler(
            DcpschedGroupsMixin, data_schedule.DefaultDynamicCPScheduler):
        verify_schedules = verify
        applies_max_num_seqs = upstream_applies_max_num_seqs(data_schedule)
        cost_profile = profile
        cost_aware_only_where_upstream_fails = only_where_upstream_fails

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            warn_if_odd(getattr(self, "total_hdp_gpus", None))

    data_schedule.scheduler_map["default_dynamic_cp"] = DcpschedDefaultDynamicCPScheduler
    return DcpschedDefaultDynamicCPScheduler
