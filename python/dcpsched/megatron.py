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

The runtime its step times are modelled on (docs/runtime_step.md): at
install, install_into_megatron() reads from the running Megatron-LM what
dcpsched.schedule_time's runtime step needs (read_megatron_runtime): the
pipeline size P, the virtual size V, microbatch_group_size_per_vp_stage N,
the transformer layers per pipeline stage, the expert-parallel size (in
DPxCP ranks; all of them under MoE's global_aux_loss) and whether the
runtime is dev's (no barrier between microbatches) or main's legacy
hybrid_context_parallel_forward_backward. It reads them from Megatron-LM's
args (megatron.training's get_args(), once initialized), else from an
initialized parallel_state, else keeps the defaults (dev, no pipelining),
and says which: the installed class's `runtime` (a MegatronRuntime: the
keywords, and what was read from where) and one INFO line on the
"dcpsched.megatron" logger. A class built before Megatron-LM's args exist
reads them again when it is constructed, until it finds them. Every step
time the drop-in reports (step_time()) is on that runtime; runtime={...}
(schedule_time's keywords) sets any part of it by hand.

Standalone (no Megatron-LM needed):

    scheduler = DcpschedDynamicCPScheduler(
        max_seqlen_per_dp_cp_rank=2048, cp_size=4, dp_size=2,
        microbatch_group_size_per_vp_stage=None, min_cp_size=1, verify=True)
    groups = scheduler.get_groups_and_subsamples([(0, 5000), (1, 300)])

python/examples/megatron_drop_in.py is a short standalone use of it.
"""

import dataclasses
import inspect
import logging
import sys
import warnings
from typing import Dict, Tuple

import dcpsched

LOGGER = logging.getLogger("dcpsched.megatron")


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


# dcpsched.schedule_time's runtime keywords and their defaults: Megatron-LM
# dev's runtime without pipelining, one layer per stage, a dense model.
RUNTIME_DEFAULTS = {"pipeline_stages": 1, "virtual_stages": 1, "microbatch_group_size": None,
                    "layers_per_stage": 1, "forward_share": 1.0 / 3.0,
                    "expert_parallel_size": None, "runtime": "dev"}
# expert_parallel_size meaning "every DPxCP rank": MoE's global_aux_loss
# reduces over all of them in every MoE layer; step_time() puts in G.
ALL_DP_CP_RANKS = "all"
# Where Megatron-LM keeps what the runtime is read from.
GLOBAL_VARS_MODULE = "megatron.training.global_vars"
SCHEDULES_MODULE = "megatron.core.pipeline_parallel.schedules"
LEGACY_LOOP = "hybrid_context_parallel_forward_backward"


@dataclasses.dataclass(frozen=True)
class MegatronRuntime:
    """The runtime the drop-in's step times are modelled on.

    keywords: dcpsched.schedule_time's runtime keywords (RUNTIME_DEFAULTS'
      names); expert_parallel_size may be ALL_DP_CP_RANKS.
    read: what was read, and from where, one line each.
    from_megatron: whether anything was read from a running Megatron-LM."""

    keywords: Dict[str, object]
    read: Tuple[str, ...]
    from_megatron: bool

    def for_ranks(self, dp_cp_size):
        """The keywords for a schedule of dp_cp_size DPxCP ranks (resolving
        ALL_DP_CP_RANKS)."""
        keywords = dict(self.keywords)
        if keywords["expert_parallel_size"] == ALL_DP_CP_RANKS:
            keywords["expert_parallel_size"] = dp_cp_size
        return keywords

    def describe(self) -> str:
        """The runtime in words: "dev runtime, 1F1B over P = 4 stages, 8
        layers per stage, forward 0.3333 of a layer, dense"."""
        k = self.keywords
        stages, virtual = k["pipeline_stages"], k["virtual_stages"]
        group = k["microbatch_group_size"] if k["microbatch_group_size"] is not None else stages
        if stages == 1:
            pipeline = "no pipelining"
        elif virtual == 1:
            pipeline = f"1F1B over P = {stages} stages"
        else:
            pipeline = (f"interleaved 1F1B over P = {stages} stages, V = {virtual} chunks in "
                        f"groups of N = {group}")
        layers = k["layers_per_stage"]
        expert = k["expert_parallel_size"]
        experts = ("dense" if expert is None else
                   "EP over all DPxCP ranks in lockstep (global_aux_loss)"
                   if expert == ALL_DP_CP_RANKS else f"EP {expert} DPxCP ranks in lockstep")
        return (f"{k['runtime']} runtime, {pipeline}, {layers} layer"
                f"{'' if layers == 1 else 's'} per stage, forward {k['forward_share']:.4g} of a "
                f"layer, {experts}")


def _loaded(name):
    """The module `name` if this process has imported it (never imports it:
    reading the runtime must not load Megatron-LM's training package where a
    job does not use it)."""
    return sys.modules.get(name)


def _megatron_args():
    """(Megatron-LM's parsed args, or None; why there are none)."""
    global_vars = _loaded(GLOBAL_VARS_MODULE)
    if global_vars is None:
        return None, f"{GLOBAL_VARS_MODULE} is not loaded"
    try:
        return global_vars.get_args(), None
    except Exception as error:  # pylint: disable=broad-except
        return None, f"get_args(): {type(error).__name__}: {error}"


def _parallel_state():
    """(megatron.core.parallel_state once its groups exist, or None; why not)."""
    try:
        from megatron.core import parallel_state  # pylint: disable=import-outside-toplevel
        if not parallel_state.model_parallel_is_initialized():
            return None, "parallel_state is not initialized"
        return parallel_state, None
    except Exception as error:  # pylint: disable=broad-except
        return None, f"parallel_state: {type(error).__name__}: {error}"


def _expert_dp_cp_ranks(expert, tensor, expert_tensor):
    """(DPxCP ranks per expert-parallel group, why): EP x ETP / TP, as
    Megatron-LM orders expert ranks ETP fastest, then EP, and dense ranks TP
    fastest; None where no group spans several whole DPxCP ranks."""
    if expert is None or expert <= 1:
        return None, "expert_model_parallel_size 1: no expert all-to-all across DPxCP ranks"
    span = expert * expert_tensor
    if span <= tensor and tensor % span == 0:
        return None, (f"each expert-parallel group lies within one DPxCP rank (EP {expert} x "
                      f"ETP {expert_tensor} <= TP {tensor})")
    if span % tensor:
        return None, (f"expert_model_parallel_size {expert} x expert_tensor_parallel_size "
                      f"{expert_tensor} is no multiple of tensor_model_parallel_size {tensor}: "
                      "the model's expert-parallel blocks cannot express these groups (give "
                      "runtime={'expert_parallel_size': E})")
    return span // tensor, (f"EP {expert} x ETP {expert_tensor} / TP {tensor} = {span // tensor} "
                            "DPxCP ranks per expert-parallel group")


def _uses_global_aux_loss(args) -> bool:
    kind = getattr(args, "moe_router_load_balancing_type", None)
    kinds = kind if isinstance(kind, (list, tuple)) else [kind]
    return getattr(args, "num_experts", None) is not None and "global_aux_loss" in kinds


def _runtime_path(stages, args):
    """("dev" or "legacy", why): legacy where the installed schedules.py runs
    dynamic CP through main's hybrid_context_parallel_forward_backward (a
    barrier after every microbatch; main runs it only at P = 1)."""
    schedules = _loaded(SCHEDULES_MODULE)
    if schedules is None:
        return "dev", f"{SCHEDULES_MODULE} is not loaded: assumed dev (no barrier)"
    if LEGACY_LOOP not in vars(schedules):
        return "dev", (f"{SCHEDULES_MODULE} does not run {LEGACY_LOOP}: dev (no barrier "
                       "between microbatches)")
    hybrid = getattr(args, "hybrid_context_parallel", None) if args is not None else None
    if stages > 1 or hybrid is False:
        return "dev", (f"{SCHEDULES_MODULE} runs {LEGACY_LOOP} only for hybrid CP without "
                       f"pipelining, and here P = {stages}, hybrid_context_parallel {hybrid}: "
                       "no barrier")
    return "legacy", (f"{SCHEDULES_MODULE} runs {LEGACY_LOOP} (hybrid_context_parallel "
                      f"{hybrid if hybrid is not None else 'not read'}): a barrier after every "
                      "microbatch")


def _overrides(runtime) -> Dict[str, object]:
    """`runtime` (None, or a dict of schedule_time's runtime keywords) as a
    dict; TypeError naming any other key."""
    overrides = dict(runtime or {})
    unknown = set(overrides) - set(RUNTIME_DEFAULTS)
    if unknown:
        raise TypeError(f"runtime takes dcpsched.schedule_time's runtime keywords "
                        f"({', '.join(RUNTIME_DEFAULTS)}), not {', '.join(sorted(unknown))}")
    return overrides


class _Settings:
    """Megatron-LM's settings as read: from its args where they exist, else
    from an initialized parallel_state."""

    def __init__(self):
        self.args, no_args = _megatron_args()
        self.state, no_state = ((None, None) if self.args is not None
                                else _parallel_state())
        self.why_none = f"{no_args}; {no_state}"

    @property
    def found(self) -> bool:
        """Whether there was anything to read."""
        return self.args is not None or self.state is not None

    def get(self, arg, getter=None):
        """(value, "args" or "parallel_state") of the args' attribute `arg`,
        else parallel_state's getter(); (None, None) where neither has it."""
        if self.args is not None:
            return (getattr(self.args, arg), "args") if hasattr(self.args, arg) else (None, None)
        if self.state is not None and getter is not None:
            try:
                return getattr(self.state, getter)(), "parallel_state"
            except Exception:  # pylint: disable=broad-except
                return None, None
        return None, None


def read_megatron_runtime(runtime=None) -> MegatronRuntime:
    """The runtime the running Megatron-LM steps on (see the module
    docstring), each part read from its args where initialized, else its
    initialized parallel_state, else RUNTIME_DEFAULTS; `runtime` (a dict of
    schedule_time's runtime keywords) overrides what it names."""
    overrides = _overrides(runtime)
    keywords = dict(RUNTIME_DEFAULTS)
    read = []
    settings = _Settings()
    if not settings.found:
        read.append(f"nothing read from Megatron-LM ({settings.why_none}): the defaults but "
                    "for the path")
    stages, where = settings.get("pipeline_model_parallel_size",
                                 "get_pipeline_model_parallel_world_size")
    if where:
        keywords["pipeline_stages"] = int(stages)
        read.append(f"pipeline_model_parallel_size {stages} (from {where})")
    virtual, where = settings.get("virtual_pipeline_model_parallel_size",
                                  "get_virtual_pipeline_model_parallel_world_size")
    if where:
        keywords["virtual_stages"] = int(virtual) if virtual else 1
        read.append(f"virtual_pipeline_model_parallel_size {virtual} (from {where})")
    group, where = settings.get("microbatch_group_size_per_vp_stage")
    if where:
        keywords["microbatch_group_size"] = int(group) if group else None
        default = "" if group else ": Megatron-LM's default, P"
        read.append(f"microbatch_group_size_per_vp_stage {group} (from {where}){default}")
    layers, where = settings.get("num_layers")
    uneven = [name for name in ("decoder_first_pipeline_num_layers",
                                "decoder_last_pipeline_num_layers")
              if settings.get(name)[0] is not None]
    if where and layers and not uneven and layers % keywords["pipeline_stages"] == 0:
        keywords["layers_per_stage"] = int(layers) // keywords["pipeline_stages"]
        read.append(f"num_layers {layers} (from {where}): {keywords['layers_per_stage']} per "
                    "pipeline stage")
    elif where:
        read.append(f"num_layers {layers} (from {where}), {', '.join(uneven) or 'not split'} "
                    "evenly over the pipeline stages: step times are per 1 layer per stage")
    expert, where = settings.get("expert_model_parallel_size",
                                 "get_expert_model_parallel_world_size")
    if settings.args is not None and _uses_global_aux_loss(settings.args):
        keywords["expert_parallel_size"] = ALL_DP_CP_RANKS
        read.append("moe_router_load_balancing_type global_aux_loss (from args): every DPxCP "
                    "rank in lockstep in every MoE layer")
    elif where:
        tensor = int(settings.get("tensor_model_parallel_size",
                                  "get_tensor_model_parallel_world_size")[0] or 1)
        expert_tensor = int(settings.get("expert_tensor_parallel_size",
                                         "get_expert_tensor_parallel_world_size")[0] or tensor)
        ranks, why = _expert_dp_cp_ranks(int(expert or 1), tensor, expert_tensor)
        keywords["expert_parallel_size"] = ranks
        read.append(f"expert_model_parallel_size {expert} (from {where}): {why}")
    keywords["runtime"], why = _runtime_path(keywords["pipeline_stages"], settings.args)
    read.append(f"path {keywords['runtime']}: {why}")
    for name, given in overrides.items():
        keywords[name] = given
        read.append(f"{name} {given!r} (given by runtime=)")
    return MegatronRuntime(keywords, tuple(read), settings.found)


def _as_runtime(runtime) -> MegatronRuntime:
    """A MegatronRuntime, a dict of schedule_time's runtime keywords (over
    the defaults), or None (the defaults), as a MegatronRuntime."""
    if isinstance(runtime, MegatronRuntime):
        return runtime
    overrides = _overrides(runtime)
    return MegatronRuntime({**RUNTIME_DEFAULTS, **overrides},
                           tuple(f"{name} {value!r} (given)" for name, value in overrides.items())
                           or ("the defaults",), False)


class DcpschedGroupsMixin:
    """get_groups_and_subsamples by dcpsched, for any class holding
    DefaultDynamicCPScheduler's attributes: total_hdp_gpus,
    max_seq_len_per_rank, min_cp_size, microbatch_group_size_per_vp_stage,
    max_num_seqs. Set verify_schedules = True for the runtime guard, and
    applies_max_num_seqs = False where upstream ignores max_num_seqs
    (Megatron-LM dev). Set cost_profile (a dcpsched.CostProfile) to schedule
    with the cost-aware scheduler, and cost_aware_only_where_upstream_fails
    to use it only where packing-aware has no schedule. runtime (a
    MegatronRuntime) is the runtime step_time() models and cost-aware
    minimises the step of."""

    verify_schedules = False
    applies_max_num_seqs = True
    cost_profile = None
    cost_aware_only_where_upstream_fails = False
    runtime = MegatronRuntime(dict(RUNTIME_DEFAULTS), ("the defaults",), False)

    def step_time(self, sample_id_seqlens, groups, profile=None):
        """dcpsched.schedule_time of `groups` (this scheduler's result for
        sample_id_seqlens) on the runtime (self.runtime): the barrier step
        and, as "runtime", the step as Megatron-LM runs it, with the runtime
        it was modelled on. profile: a dcpsched.CostProfile (or a shipped
        name or a file), by default the scheduler's cost_profile."""
        profile = as_cost_profile(profile) if profile is not None else self.cost_profile
        if profile is None:
            raise ValueError("step_time needs a cost profile: pass profile=, or install with "
                             "cost_profile=")
        return dcpsched.schedule_time(groups, sample_id_seqlens, profile,
                                      self.max_seq_len_per_rank,
                                      **self.runtime.for_ranks(self.total_hdp_gpus))

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
        # cost-aware minimises the step of the runtime it was read from.
        return (dcpsched.schedule_cost_aware(*args, profile=self.cost_profile, **options,
                                             **self.runtime.for_ranks(self.total_hdp_gpus)),
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
      runtime: the runtime step_time() models: None (Megatron-LM dev without
        pipelining), a dict of dcpsched.schedule_time's runtime keywords, or
        a MegatronRuntime (read_megatron_runtime()).
    """

    def __init__(self, max_seqlen_per_dp_cp_rank, cp_size, dp_size,
                 microbatch_group_size_per_vp_stage=None, max_num_seqs=None,
                 *, min_cp_size=1, verify=False, cost_profile=None,
                 only_where_upstream_fails=False, runtime=None):
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
        self.runtime = _as_runtime(runtime)


def upstream_applies_max_num_seqs(data_schedule):
    """True if the data_schedule module's DefaultDynamicCPScheduler caps the
    samples per rank with max_num_seqs: if the next_hdp_group_packing_aware
    it calls takes max_num_seqs (Megatron-LM PR #6479; dev's does not)."""
    step = data_schedule.next_hdp_group_packing_aware
    return "max_num_seqs" in inspect.signature(step).parameters


def install_into_megatron(verify=False, dp_cp_size=None, *, cost_profile=None,
                          only_where_upstream_fails=False, runtime=None):
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

    The runtime: read from the running Megatron-LM (read_megatron_runtime:
    P, V, N, layers per stage, expert parallelism, dev or legacy), kept as
    the class's `runtime` (what was read and from where in runtime.read)
    and said in one INFO line on the "dcpsched.megatron" logger; its
    step_time() models steps on it. runtime (a dict of
    dcpsched.schedule_time's runtime keywords) sets parts by hand. Read
    before Megatron-LM's args exist, the class reads them again when
    constructed, until it finds them.

    Warns OddDpCpSizeWarning if the runtime's DPxCP size is odd: dp_cp_size
    where given, else the initialized parallel_state's (runtime_dp_cp_size);
    the installed class warns too when constructed for an odd size."""
    if only_where_upstream_fails and cost_profile is None:
        raise ValueError("only_where_upstream_fails=True needs a cost_profile: the "
                         "cost-aware scheduler it falls back to schedules under one")
    profile = as_cost_profile(cost_profile)
    overrides = _overrides(runtime)
    read = read_megatron_runtime(overrides)
    from megatron.core.datasets import data_schedule

    warn_if_odd(dp_cp_size if dp_cp_size is not None else runtime_dp_cp_size())
    scheduler = (f"cost-aware under {profile.name}" + (
        " where packing-aware fails" if only_where_upstream_fails else "")
                 if profile is not None else "packing-aware")

    class DcpschedDefaultDynamicCPScheduler(
            DcpschedGroupsMixin, data_schedule.DefaultDynamicCPScheduler):
        verify_schedules = verify
        applies_max_num_seqs = upstream_applies_max_num_seqs(data_schedule)
        cost_profile = profile
        cost_aware_only_where_upstream_fails = only_where_upstream_fails
        runtime = read

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            warn_if_odd(getattr(self, "total_hdp_gpus", None))
            cls = type(self)
            if not cls.runtime.from_megatron:
                again = read_megatron_runtime(overrides)
                if again.from_megatron:
                    cls.runtime = again
                    _log_runtime(scheduler, again)

    data_schedule.scheduler_map["default_dynamic_cp"] = DcpschedDefaultDynamicCPScheduler
    _log_runtime(scheduler, read)
    return DcpschedDefaultDynamicCPScheduler


def _log_runtime(scheduler, runtime: MegatronRuntime) -> None:
    """The INFO line that says what the installed drop-in runs and read."""
    LOGGER.info("dcpsched: default_dynamic_cp schedules %s; step times modelled on the %s "
                "(read: %s)", scheduler, runtime.describe(), "; ".join(runtime.read))
