"""The three kinds of problem the conformance check runs, and their one-line forms.

- DynamicCpProblem: samples (id, len), G, mslpr, min_cp_size, vpp_group,
  max_num_seqs; its line is io/problem_text.h's ("G=4 mslpr=8 min_cp=1
  vpp=none samples=0:9,1:3", with "max_num_seqs=N" before "samples=" when
  the cap is set), so a difference can be pasted into the C++ regression
  tests as it is.
- DpBalancedProblem: lens, dp_size, cp_size, mslpr, max_num_seqs, vpp_group;
  its line is the fuzz decoder's ("dp=2 cp=1 mslpr=8 max_num_seqs=none vpp=none
  lens=3,9").
- VppAlignProblem: a schedule and vpp_group, for the alignment alone; its line
  is the fuzz decoder's ("vpp=2 schedule=[[[0],[0]], [[1],[2]]]").

Problems are immutable values (tuples inside), so they can be shrunk and
compared freely.
"""

import dataclasses
from typing import Optional, Tuple


def _optional_text(value: Optional[int]) -> str:
    """'none' for None, else the number."""
    return "none" if value is None else str(value)


@dataclasses.dataclass(frozen=True)
class DynamicCpProblem:
    """One global batch for DefaultDynamicCPScheduler (and one step of it)."""

    samples: Tuple[Tuple[int, int], ...]
    total_gpus: int
    max_seq_len_per_rank: int
    min_cp_size: int = 1
    vpp_group: Optional[int] = None
    # Megatron-LM PR #6479's cap on the samples of one rank in a microbatch;
    # None: no cap (Megatron-LM dev has none in the packing-aware step).
    max_num_seqs: Optional[int] = None

    def line(self) -> str:
        """The one-line form of io/problem_text.h (the cap only when set)."""
        samples = ",".join(f"{sample_id}:{length}" for sample_id, length in self.samples)
        cap = "" if self.max_num_seqs is None else f"max_num_seqs={self.max_num_seqs} "
        return (f"G={self.total_gpus} mslpr={self.max_seq_len_per_rank} "
                f"min_cp={self.min_cp_size} vpp={_optional_text(self.vpp_group)} "
                f"{cap}samples={samples}")

    def with_samples(self, samples) -> "DynamicCpProblem":
        """The same problem with other samples."""
        return dataclasses.replace(self, samples=tuple(samples))


@dataclasses.dataclass(frozen=True)
class DpBalancedProblem:
    """One global batch for DpBalancedScheduler; samples are named by position."""

    lens: Tuple[int, ...]
    dp_size: int
    cp_size: int
    max_seq_len_per_rank: int
    max_num_seqs: Optional[int] = None
    vpp_group: Optional[int] = None

    def line(self) -> str:
        """The one-line form of the fuzz decoder (FormatDpBalancedProblem)."""
        return (f"dp={self.dp_size} cp={self.cp_size} mslpr={self.max_seq_len_per_rank} "
                f"max_num_seqs={_optional_text(self.max_num_seqs)} "
                f"vpp={_optional_text(self.vpp_group)} "
                f"lens={','.join(str(length) for length in self.lens)}")

    def samples(self):
        """Upstream's sample_id_seqlens: ids equal to positions."""
        return [(position, length) for position, length in enumerate(self.lens)]


@dataclasses.dataclass(frozen=True)
class VppAlignProblem:
    """A schedule (per microbatch, per rank, ids) to align to vpp_group."""

    schedule: Tuple[Tuple[Tuple[int, ...], ...], ...]
    vpp_group: int

    def line(self) -> str:
        """The one-line form of the fuzz decoder (FormatVppAlignInput)."""
        microbatches = ", ".join(
            "[" + ",".join("[" + ",".join(str(i) for i in rank) + "]" for rank in microbatch) + "]"
            for microbatch in self.schedule)
        return f"vpp={self.vpp_group} schedule=[{microbatches}]"

    def schedule_lists(self):
        """The schedule as fresh nested lists (upstream changes its argument)."""
        return [[list(rank) for rank in microbatch] for microbatch in self.schedule]


def freeze_schedule(schedule) -> Tuple[Tuple[Tuple[int, ...], ...], ...]:
    """A nested-list schedule as nested tuples."""
    return tuple(tuple(tuple(rank) for rank in microbatch) for microbatch in schedule)
