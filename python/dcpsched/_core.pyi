"""Type stubs of the extension dcpsched._core (python/dcpsched_module.cc).

The docstrings of the functions themselves (help(dcpsched.<name>)) say what
each argument means and what is raised.
"""

from typing import Any, Dict, Iterable, List, Optional, Sequence, SupportsIndex, Tuple, Union

__version__: str
# The Megatron-LM revisions this build was checked against:
# ((branch, commit, what checking found), ...) (core/upstream_revisions.h).
UPSTREAM_CHECKED: Tuple[Tuple[str, str, str], ...]

# (id, len): any pair of ints (or objects with __index__).
_Pair = Sequence[SupportsIndex]
# Per microbatch, per rank, the ids that rank processes.
_Schedule = List[List[List[int]]]
# Per microbatch, one rank's ids: what rank=r returns, [mb[r] for mb in the
# _Schedule], without the other ranks' lists ever being built.
_RankSchedule = List[List[int]]
# next_group_packing_aware's 4-tuple, and with rank=r rank r's part of it:
# its lens, the leftovers (whole: every rank continues with the same ones),
# its exec time and its ids.
_Step = Tuple[List[List[int]], List[Tuple[int, int]], List[float], List[List[int]]]
_RankStep = Tuple[List[int], List[Tuple[int, int]], float, List[int]]

class InvalidInputError(ValueError):
    """The input is outside the scheduler's limits."""

class UnschedulableError(ValueError):
    """A valid input that upstream's algorithm cannot schedule."""

def schedule_dynamic_cp(
    sample_id_seqlens: Iterable[_Pair],
    total_gpus: SupportsIndex,
    max_seq_len_per_rank: SupportsIndex,
    *,
    min_cp_size: SupportsIndex = 1,
    vpp_group: Optional[SupportsIndex] = None,
    max_num_seqs: Optional[SupportsIndex] = None,
    rank: Optional[SupportsIndex] = None,
    runnable: bool = True,
) -> Union[_Schedule, _RankSchedule]:
    """Schedules one global batch with the packing-aware dynamic-CP scheduler.

    runnable=True refuses (UnschedulableError, invariant 11) a schedule that
    Megatron-LM's runtime cannot run; False returns upstream's as it is.

    max_num_seqs: None, or at most this many samples per rank and microbatch
    (Megatron-LM PR #6479). rank=None: the _Schedule; rank=r in [0, total_gpus): the _RankSchedule of
    rank r (outside the range: InvalidInputError)."""

def next_group_packing_aware(
    sample_seqlens: Iterable[_Pair],
    total_gpus: SupportsIndex,
    max_seq_len_per_rank: SupportsIndex,
    *,
    min_cp_size: SupportsIndex = 1,
    max_num_seqs: Optional[SupportsIndex] = None,
    rank: Optional[SupportsIndex] = None,
) -> Union[_Step, _RankStep]:
    """Builds one microbatch: (micro_batches, leftovers, exec_times, sample_ids).

    rank=None: the _Step; rank=r in [0, total_gpus): the _RankStep of rank r."""

def align_to_vpp_group(
    schedule: Iterable[Iterable[Iterable[SupportsIndex]]],
    vpp_group: SupportsIndex,
) -> _Schedule:
    """Splits microbatches until their number is a multiple of vpp_group."""

def schedule_dp_balanced(
    sample_id_seqlens: Iterable[_Pair],
    dp_size: SupportsIndex,
    cp_size: SupportsIndex,
    max_seq_len_per_rank: SupportsIndex,
    *,
    max_num_seqs: Optional[SupportsIndex] = None,
    vpp_group: Optional[SupportsIndex] = None,
    rank: Optional[SupportsIndex] = None,
) -> Union[_Schedule, _RankSchedule]:
    """Schedules one global batch with fixed CP; returns positions, not ids.

    rank=None: the _Schedule; rank=r in [0, dp_size * cp_size): the
    _RankSchedule of rank r."""

def schedule_legacy(
    sample_id_seqlens: Iterable[_Pair],
    total_gpus: SupportsIndex,
    max_seq_len_per_rank: SupportsIndex,
    *,
    min_cp_size: SupportsIndex = 1,
    vpp_group: Optional[SupportsIndex] = None,
    rank: Optional[SupportsIndex] = None,
    runnable: bool = True,
) -> Union[_Schedule, _RankSchedule]:
    """Schedules one global batch with the legacy bucket scheduler.

    runnable: as schedule_dynamic_cp's.

    rank=None: the _Schedule; rank=r in [0, total_gpus): the _RankSchedule of
    rank r."""

def verify(
    schedule: Iterable[Iterable[Iterable[SupportsIndex]]],
    sample_id_seqlens: Iterable[_Pair],
    total_gpus: SupportsIndex,
    max_seq_len_per_rank: SupportsIndex,
    *,
    min_cp_size: SupportsIndex = 1,
    vpp_group: Optional[SupportsIndex] = None,
    max_num_seqs: Optional[SupportsIndex] = None,
    scheduler: Optional[str] = None,
) -> List[str]:
    """Checks a dynamic-CP schedule; returns one message per violation
    (with max_num_seqs, invariant 10: no rank holds more samples; with
    scheduler="cost_aware", every invariant but the work cap, 5)."""

def schedule_cost_aware(
    sample_id_seqlens: Iterable[_Pair],
    total_gpus: SupportsIndex,
    max_seq_len_per_rank: SupportsIndex,
    *,
    profile: "CostProfile",
    min_cp_size: SupportsIndex = 1,
    vpp_group: Optional[SupportsIndex] = None,
    max_num_seqs: Optional[SupportsIndex] = None,
    rank: Optional[SupportsIndex] = None,
    details: bool = False,
    pipeline_stages: SupportsIndex = 1,
    virtual_stages: SupportsIndex = 1,
    microbatch_group_size: Optional[SupportsIndex] = None,
    layers_per_stage: SupportsIndex = 1,
    forward_share: float = 1.0 / 3.0,
    expert_parallel_size: Optional[SupportsIndex] = None,
    runtime: str = "dev",
) -> Any:
    """Schedules one global batch with the cost-aware scheduler: the fastest
    runnable schedule it finds under profile on the runtime the keyword
    arguments describe (docs/cost_aware.md, docs/runtime_step.md). With
    details=True a dict: schedule, source, reason, step_seconds,
    token_budget, runtime, packing_aware_step_seconds."""

class CostProfile:
    """A device cost profile: measured per-layer GPU times (docs/cost_model.md).

    CostProfile(name) loads a shipped profile (shipped_names()), CostProfile(path)
    a profile JSON file; FileNotFoundError for neither, InvalidInputError
    naming the field for a malformed one."""

    name: str
    description: str
    device: str
    model: str
    communication_modelled: bool
    def __init__(self, name_or_path: str) -> None: ...
    @staticmethod
    def from_json(text: str) -> "CostProfile": ...
    @staticmethod
    def shipped_names() -> List[str]: ...
    def causal_attention_seconds(self, len: float) -> float: ...
    def full_attention_seconds(self, len: float) -> float: ...
    def non_attention_seconds(self, tokens: float) -> float: ...

# schedule_time's "runtime": the JSON run documents' quality.runtime object.
_RuntimeStep = Dict[str, Union[str, int, float, None]]

def schedule_time(
    schedule: Iterable[Iterable[Iterable[SupportsIndex]]],
    sample_id_seqlens: Iterable[_Pair],
    profile: CostProfile,
    max_seq_len_per_rank: SupportsIndex,
    cp_size: Optional[SupportsIndex] = None,
    *,
    pipeline_stages: SupportsIndex = 1,
    virtual_stages: SupportsIndex = 1,
    microbatch_group_size: Optional[SupportsIndex] = None,
    layers_per_stage: SupportsIndex = 1,
    forward_share: float = 1.0 / 3.0,
    expert_parallel_size: Optional[SupportsIndex] = None,
    runtime: str = "dev",
) -> Dict[str, Union[float, bool, List[float], _RuntimeStep]]:
    """A schedule in GPU seconds: step_seconds, bound_seconds, gpu_efficiency,
    microbatch_seconds (the slowest rank of each), communication_modelled,
    and "runtime": its step on Megatron-LM's runtime (docs/runtime_step.md)
    for the pipeline, expert-parallel size and path given (path,
    pipeline_stages, virtual_stages, microbatch_group_size, layers_per_stage,
    forward_share, expert_parallel_size, step_seconds, busiest_rank_seconds,
    bubble_seconds, bound_seconds)."""

def pipeline_stage_order(
    stages: SupportsIndex,
    virtual_stages: SupportsIndex,
    num_microbatches: SupportsIndex,
    pipeline_rank: SupportsIndex,
    *,
    microbatch_group_size: Optional[SupportsIndex] = None,
) -> List[Tuple[int, int, bool]]:
    """Pipeline rank pipeline_rank's ops in Megatron-LM's order: (microbatch,
    chunk, forward) tuples; InvalidInputError for a shape Megatron-LM
    refuses or a rank outside [0, stages)."""

def benchmark_workload(
    num_samples: SupportsIndex = 256,
    *,
    seed: SupportsIndex = 5154,
    preset: str = "benchmark",
) -> List[Tuple[int, int]]:
    """The global batch `dcpsched schedule` generates: (id, len) pairs of
    upstream's DCP benchmark workload (preset "benchmark" or "skewed")."""
