"""The GPU-time model: what a rank spends on one layer, from a cost profile.

The profile (dcpsched.cost_profile) holds three measured tables of one
layer, forward plus backward: causal(L) and full(L), attention of one
sequence of L tokens with a causal mask or none, and lin(T), the rest of the
layer (norms, projections, MLP, residuals, weight gradients) on T tokens.

Between two measured points a table is interpolated log-log:
with x0 <= x <= x1 and y0, y1 their times,

    t = (ln x - ln x0) / (ln x1 - ln x0),   y = exp(ln y0 + t * (ln y1 - ln y0)),

and a measured point gives its own time exactly. Beyond the largest point
X (time Y), attention grows as L^2 (Y * (L / X)^2) and lin as T
(Y * (T / X)). Below the smallest point, a table gives the smallest
point's time (a kernel launch does not get cheaper). lin(0) = 0: a rank
that holds no token costs nothing.

A rank's time in a microbatch is

    lin(tokens on the rank) + sum over its samples of attention(sample),

where a sample of L tokens on c ranks counts L / c tokens on each, and its
attention per rank is causal(L) when c = 1, and when c > 1 (ring attention
over zigzag halves: the rank holds two chunks of L / 2c)

    (2c - 1) * full(L / 2c) + 2 * causal(L / 2c),

fractional lengths allowed. With a `communication` block, such a sample
also moves (c - 1) ring steps of KV of L / c tokens, three times (forward
KV, backward KV and dKV):

    comm = 3 * (c - 1) * (L / c) * kv_bytes_per_token / bandwidth,

bandwidth intra-node when c <= gpus_per_node, else inter-node, and the
sample costs max(attention, comm) on the rank (the exchange hides under the
compute when it is shorter). A microbatch costs its slowest rank; a step,
the sum of its microbatches. Standard library only.
"""

from __future__ import annotations

import bisect
import math
from typing import Any, Dict, Iterable, Sequence, Tuple

from dcpsched.cost_profile import Profile, Table, load_profile

__all__ = ["CostModel", "Profile", "interpolate", "load_profile", "validation_figures"]

ATTENTION_GROWTH = 2.0
NON_ATTENTION_GROWTH = 1.0


def interpolate(table: Table, x: float, growth: float) -> float:
    """The table's time at x > 0: log-log inside, x^growth beyond, flat below."""
    points, seconds = table.points, table.seconds
    if x <= points[0]:
        return seconds[0]
    if x >= points[-1]:
        return seconds[-1] * (x / points[-1]) ** growth
    i = bisect.bisect_right(points, x) - 1
    if points[i] == x:
        return seconds[i]
    x0, x1, y0, y1 = points[i], points[i + 1], seconds[i], seconds[i + 1]
    t = (math.log(x) - math.log(x0)) / (math.log(x1) - math.log(x0))
    return math.exp(math.log(y0) + t * (math.log(y1) - math.log(y0)))


class CostModel:
    """Prices samples, ranks, packs and microbatches in seconds from a profile."""

    def __init__(self, profile: Profile):
        self.profile = profile

    def causal(self, length: float) -> float:
        """Causal attention of one sequence of `length` tokens."""
        return interpolate(self.profile.causal, length, ATTENTION_GROWTH)

    def full(self, length: float) -> float:
        """Unmasked attention of one block of `length` x `length` tokens."""
        return interpolate(self.profile.full, length, ATTENTION_GROWTH)

    def non_attention(self, tokens: float) -> float:
        """The rest of the layer on `tokens` tokens; 0 for none."""
        if tokens <= 0:
            return 0.0
        return interpolate(self.profile.non_attention, tokens, NON_ATTENTION_GROWTH)

    def sample_attention(self, length: float, cp: int) -> float:
        """Attention one rank computes for a sample of `length` on `cp` ranks."""
        if cp == 1:
            return self.causal(length)
        chunk = length / (2 * cp)
        return (2 * cp - 1) * self.full(chunk) + 2 * self.causal(chunk)

    def sample_communication(self, length: float, cp: int) -> float:
        """Seconds of one rank's ring KV exchange for the sample; 0 if unmodelled."""
        comm = self.profile.communication
        if comm is None or cp == 1:
            return 0.0
        gb_per_s = (comm.intra_node_gb_per_s if cp <= comm.gpus_per_node
                    else comm.inter_node_gb_per_s)
        return 3 * (cp - 1) * (length / cp) * comm.kv_bytes_per_token / (gb_per_s * 1e9)

    def sample_seconds(self, length: float, cp: int) -> float:
        """A sample's cost on one of its ranks: attention, or the exchange if longer."""
        return max(self.sample_attention(length, cp), self.sample_communication(length, cp))

    def rank_seconds(self, samples: Iterable[Tuple[float, int]]) -> float:
        """One rank's time: lin of its tokens plus its samples' attention.

        `samples` are (length, cp) pairs, the samples the rank holds a part of.
        """
        samples = list(samples)
        tokens = sum(length / cp for length, cp in samples)
        return self.non_attention(tokens) + sum(
            self.sample_seconds(length, cp) for length, cp in samples)

    def pack_seconds(self, lengths: Sequence[int]) -> float:
        """A THD pack on one rank (every sample c = 1)."""
        return self.rank_seconds((length, 1) for length in lengths)

    def microbatch_seconds(self, ranks: Iterable[Iterable[Tuple[float, int]]]) -> float:
        """A microbatch's time: its slowest rank's."""
        return max((self.rank_seconds(rank) for rank in ranks), default=0.0)


def validation_figures(model: CostModel, cases: Iterable[Tuple[Sequence[int], float]]
                       ) -> Dict[str, Any]:
    """The model's relative error on measured packs ((lengths, seconds) pairs).

    Rounded to 6 decimals: the figures are for people, and rounding keeps a
    regenerated profile's bytes the same whatever libm computed the logs.
    """
    errors = [abs(model.pack_seconds(lengths) - seconds) / seconds for lengths, seconds in cases]
    if not errors:
        return {"cases": 0, "max_relative_error": None, "mean_relative_error": None}
    return {"cases": len(errors),
            "max_relative_error": round(max(errors), 6),
            "mean_relative_error": round(sum(errors) / len(errors), 6)}
