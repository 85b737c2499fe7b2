"""Type stubs of the extension dcpsched._core (python/dcpsched_module.cc).

The docstrings of the functions themselves (help(dcpsched.<name>)) say what
each argument means and what is raised.
"""

from typing import Iterable, List, Optional, Sequence, SupportsIndex, Tuple

__version__: str

# (id, len): any pair of ints (or objects with __index__).
_Pair = Sequence[SupportsIndex]
# Per microbatch, per rank, the ids that rank processes.
_Schedule = List[List[List[int]]]

class InvalidInputError(ValueError):
    """The input is outside the scheduler's limits."""

class UnschedulableError(ValueError):
    """A valid input that upstream's algorithm cannot schedule."""

def schedule_dynamic_cp(
    sample_id_seqlens: Iterable[_Pair],
    total_gpus: SupportsIndex,
    max_seq_len_per_rank: SupportsIndex,
    min_cp_size: SupportsIndex = 1,
    vpp_group: Optional[SupportsIndex] = None,
) -> _Schedule:
    """Schedules one global batch with the packing-aware dynamic-CP scheduler."""

def next_group_packing_aware(
    sample_seqlens: Iterable[_Pair],
    total_gpus: SupportsIndex,
    max_seq_len_per_rank: SupportsIndex,
    min_cp_size: SupportsIndex = 1,
) -> Tuple[List[List[int]], List[Tuple[int, int]], List[float], List[List[int]]]:
    """Builds one microbatch: (micro_batches, leftovers, exec_times, sample_ids)."""

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
    max_num_seqs: Optional[SupportsIndex] = None,
    vpp_group: Optional[SupportsIndex] = None,
) -> _Schedule:
    """Schedules one global batch with fixed CP; returns positions, not ids."""

def schedule_legacy(
    sample_id_seqlens: Iterable[_Pair],
    total_gpus: SupportsIndex,
    max_seq_len_per_rank: SupportsIndex,
    min_cp_size: SupportsIndex = 1,
    vpp_group: Optional[SupportsIndex] = None,
) -> _Schedule:
    """Schedules one global batch with the legacy bucket scheduler."""

def verify(
    schedule: Iterable[Iterable[Iterable[SupportsIndex]]],
    sample_id_seqlens: Iterable[_Pair],
    total_gpus: SupportsIndex,
    max_seq_len_per_rank: SupportsIndex,
    min_cp_size: SupportsIndex = 1,
    vpp_group: Optional[SupportsIndex] = None,
) -> List[str]:
    """Checks a dynamic-CP schedule; returns one message per violation."""
