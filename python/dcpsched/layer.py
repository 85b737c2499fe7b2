"""One Llama-style transformer layer in torch, cut into the pieces the cost model prices.

LayerShape is a layer's per-GPU shape (heads and FFN after the
tensor-parallel split; the tensor-parallel all-reduces are not run). Layer
holds random weights for it on one device and makes *work*: closures that
run one forward plus backward (weight and input gradients, through
torch.autograd.grad so nothing accumulates between repetitions) on inputs
made once, for a timer to call repeatedly:

- attention_work(mask, length, batch): attention alone, `batch` sequences of
  `length` tokens in one dense call, query, key and value heads all equal to
  the query-head count (the same FLOPs as grouped KV);
- non_attention_work(tokens): the rest of the layer on `tokens` tokens: two
  RMSNorms, the QKV and output projections, the SwiGLU MLP, the residual
  adds (the query slice of the QKV projection stands in for attention's
  output);
- rank_work(samples): the whole layer as one rank runs it in a microbatch,
  `samples` being (length, cp) pairs. A sample with cp = 1 is one causal
  segment of the packed (THD) tokens. A sample with cp = c > 1 puts two
  chunks of ceil(length / 2c) tokens on the rank (zigzag halves), and the
  rank runs ring attention's blocks on them: 2 causal blocks (each chunk
  with itself), 1 full block (the second chunk against the first), and c - 1
  ring steps of 2 full blocks each, the rank's own keys and values standing
  in for the ones it would receive: (2c - 1) full and 2 causal blocks of
  chunk x chunk, as cost_model prices it. Each step is one varlen call over
  all the rank's samples; block outputs are summed (the log-sum-exp merge
  of real ring attention is elementwise and left out). Grouped KV heads are
  expanded to the query-head count before attention.

Needs torch.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Dict, List, Sequence, Tuple

import torch

from dcpsched.attention_kernels import Kernels


@dataclasses.dataclass(frozen=True)
class LayerShape:
    """A layer's per-GPU shape."""

    name: str
    hidden: int
    q_heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    tensor_parallel: int = 1

    def check(self) -> None:
        """Raises ValueError unless every size is positive and KV heads divide Q heads."""
        for field in ("hidden", "q_heads", "kv_heads", "head_dim", "ffn", "tensor_parallel"):
            if getattr(self, field) <= 0:
                raise ValueError(f"layer shape {self.name}: {field} must be positive")
        if self.q_heads % self.kv_heads:
            raise ValueError(f"layer shape {self.name}: kv_heads {self.kv_heads} must divide "
                             f"q_heads {self.q_heads}")

    def as_profile_model(self) -> Dict[str, object]:
        """The profile's "model" block."""
        return {"name": self.name, "hidden": self.hidden, "q_heads": self.q_heads,
                "kv_heads": self.kv_heads, "head_dim": self.head_dim, "ffn": self.ffn,
                "tensor_parallel": self.tensor_parallel}


MODELS = {
    "llama3-8b": LayerShape("llama3-8b", 4096, 32, 8, 128, 14336, 1),
    "llama3-70b-tp8": LayerShape("llama3-70b-tp8", 8192, 8, 1, 128, 3584, 8),
}

Work = Callable[[], None]


def zigzag_chunk(length: int, cp: int) -> int:
    """Tokens in each of the two chunks a rank holds of a sample on cp > 1 ranks."""
    return -(-length // (2 * cp))


def rank_tokens(samples: Sequence[Tuple[int, int]]) -> int:
    """Tokens a rank holds for its (length, cp) samples, as rank_work lays them out."""
    return sum(length if cp == 1 else 2 * zigzag_chunk(length, cp) for length, cp in samples)


def _rms_norm(x, weight, eps=1e-5):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


class Layer:
    """Random weights of one layer on a device, and the work closures above."""

    def __init__(self, shape: LayerShape, kernels: Kernels, device: torch.device,
                 dtype: torch.dtype, seed: int = 0):
        shape.check()
        self.shape, self.kernels, self.device, self.dtype = shape, kernels, device, dtype
        torch.manual_seed(seed)  # inputs are drawn on the device: no host copies of GiBs
        h, d = shape.hidden, shape.head_dim
        qkv = (shape.q_heads + 2 * shape.kv_heads) * d
        self.norm1 = self._parameter(h, scale=None)
        self.norm2 = self._parameter(h, scale=None)
        self.w_qkv = self._parameter(qkv, h)
        self.w_out = self._parameter(h, shape.q_heads * d)
        self.w_gate_up = self._parameter(2 * shape.ffn, h)
        self.w_down = self._parameter(h, shape.ffn)
        self.weights = [self.norm1, self.norm2, self.w_qkv, self.w_out, self.w_gate_up,
                        self.w_down]

    def _random(self, *size, scale=1.0):
        return torch.randn(*size, device=self.device, dtype=self.dtype) * scale

    def _parameter(self, *size, scale=0.02):
        values = (torch.ones(*size, device=self.device, dtype=self.dtype) if scale is None
                  else self._random(*size, scale=scale))
        return values.requires_grad_(True)

    def _work(self, forward, inputs: List[torch.Tensor], parameters) -> Work:
        out = forward(*inputs)
        grad_out = self._random(*out.shape)
        del out

        def work():
            torch.autograd.grad(forward(*inputs), [*inputs, *parameters], grad_out)
        return work

    def attention_work(self, mask: str, length: int, batch: int) -> Work:
        """Dense attention of `batch` sequences of `length` tokens, forward+backward."""
        causal = {"causal": True, "full": False}[mask]
        size = (batch, self.shape.q_heads, length, self.shape.head_dim)
        q, k, v = (self._random(*size).requires_grad_(True) for _ in range(3))
        return self._work(lambda q, k, v: self.kernels.dense(q, k, v, causal), [q, k, v], [])

    def non_attention_work(self, tokens: int) -> Work:
        """The layer without attention on `tokens` tokens, forward+backward."""
        x = self._random(tokens, self.shape.hidden).requires_grad_(True)
        q_width = self.shape.q_heads * self.shape.head_dim
        return self._work(lambda x: self._layer(x, lambda qkv: qkv[:, :q_width]), [x],
                          self.weights)

    def rank_work(self, samples: Sequence[Tuple[int, int]]) -> Work:
        """The whole layer on one rank's (length, cp) samples, forward+backward."""
        if not samples:
            raise ValueError("rank_work needs at least one sample; an empty rank costs 0")
        plan = _RingPlan(samples, self.device)
        x = self._random(plan.tokens, self.shape.hidden).requires_grad_(True)
        return self._work(lambda x: self._layer(x, lambda qkv: self._attention(qkv, plan)),
                          [x], self.weights)

    def _layer(self, x, attention):
        y = _rms_norm(x, self.norm1)
        x = x + attention(y @ self.w_qkv.t()) @ self.w_out.t()
        gate, up = (_rms_norm(x, self.norm2) @ self.w_gate_up.t()).chunk(2, dim=-1)
        return x + (torch.nn.functional.silu(gate) * up) @ self.w_down.t()

    def _attention(self, qkv, plan: "_RingPlan"):
        s = self.shape
        tokens = qkv.shape[0]
        q, k, v = qkv.split([s.q_heads * s.head_dim, s.kv_heads * s.head_dim,
                             s.kv_heads * s.head_dim], dim=-1)
        q = q.reshape(tokens, s.q_heads, s.head_dim).contiguous()  # a column slice of qkv
        groups = s.q_heads // s.kv_heads
        k = k.reshape(tokens, s.kv_heads, s.head_dim).repeat_interleave(groups, dim=1)
        v = v.reshape(tokens, s.kv_heads, s.head_dim).repeat_interleave(groups, dim=1)
        varlen = self.kernels.varlen
        out = varlen(q, k, v, plan.causal_cu, plan.causal_cu, plan.causal_max,
                     plan.causal_max, True)
        for call in plan.full_calls:
            qs, ks, vs = q[call.q_rows], k[call.k_rows], v[call.k_rows]
            block = varlen(qs, ks, vs, call.cu, call.cu, call.max_len, call.max_len, False)
            out = out.index_add(0, call.q_rows, block)
        return out.reshape(tokens, s.q_heads * s.head_dim)


@dataclasses.dataclass
class _FullCall:
    q_rows: torch.Tensor
    k_rows: torch.Tensor
    cu: torch.Tensor
    max_len: int


class _RingPlan:
    """Where each sample's tokens sit on the rank, and the varlen calls to run."""

    def __init__(self, samples: Sequence[Tuple[int, int]], device):
        causal_lengths: List[int] = []
        chunks: List[Tuple[int, int, int]] = []  # (first row of chunk a, chunk size, cp)
        row = 0
        for length, cp in samples:
            if cp == 1:
                causal_lengths.append(length)
                row += length
            else:
                chunk = zigzag_chunk(length, cp)
                causal_lengths += [chunk, chunk]
                chunks.append((row, chunk, cp))
                row += 2 * chunk
        self.tokens = row
        self.causal_cu = _cumulative(causal_lengths, device)
        self.causal_max = max(causal_lengths)
        self.full_calls: List[_FullCall] = []
        if chunks:
            # Step 0: each sample's second chunk against its first.
            self.full_calls.append(self._call(
                [(a + n, a, n) for a, n, _ in chunks], device))
        for step in range(1, max((cp for _, _, cp in chunks), default=1)):
            # Ring step `step`: both chunks against a received chunk of equal size.
            pairs = []
            for a, n, cp in chunks:
                if step < cp:
                    pairs += [(a, a + n, n), (a + n, a, n)]
            self.full_calls.append(self._call(pairs, device))

    @staticmethod
    def _call(pairs, device) -> _FullCall:
        q_rows = [r for q_start, _, n in pairs for r in range(q_start, q_start + n)]
        k_rows = [r for _, k_start, n in pairs for r in range(k_start, k_start + n)]
        lengths = [n for _, _, n in pairs]
        return _FullCall(torch.tensor(q_rows, device=device), torch.tensor(k_rows, device=device),
                         _cumulative(lengths, device), max(lengths))


def _cumulative(lengths: Sequence[int], device) -> torch.Tensor:
    bounds = [0]
    for length in lengths:
        bounds.append(bounds[-1] + length)
    return torch.tensor(bounds, dtype=torch.int32, device=device)


def describe(shape: LayerShape) -> str:
    """A one-line description of the shape, for progress output."""
    return (f"{shape.name}: hidden {shape.hidden}, {shape.q_heads} query / {shape.kv_heads} KV "
            f"heads of {shape.head_dim}, ffn {shape.ffn}, tensor parallel "
            f"{shape.tensor_parallel} (sizes per GPU)")
