"""The attention kernels calibrate and replay time, chosen for the device.

Two calls are needed (torch tensors, forward; autograd gives the backward):

- dense(q, k, v, causal): q, k, v of shape (batch, heads, L, head_dim), one
  call over a batch of equal-length sequences: scaled_dot_product_attention
  with the flash backend only (torch.nn.attention.sdpa_kernel and
  SDPBackend.FLASH_ATTENTION) where it runs, else SDPA's default choice, else
  (torch < 2.0, as Debian's 1.13 on the test machine) plain math.
- varlen(q, k, v, cu_q, cu_k, max_q, max_k, causal): packed (tokens, heads,
  head_dim) tensors, segment i being rows cu[i]:cu[i+1] (cu: int32 on the
  device): torch.nn.attention.varlen.varlen_attn where present (torch 2.11:
  window_size=(-1, 0) is causal, (-1, -1) full; torch 2.10: is_causal),
  else flash_attn.flash_attn_varlen_func if installed, else a loop of
  dense calls, one per segment (correct, but not a THD kernel's time).

choose_kernels probes each candidate with a tiny forward+backward on the
device and keeps the first that works; its `notes` say, in words, every
fallback taken (no flash kernel, no varlen kernel), for the report and the
profile. Needs torch, imported lazily by the caller.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from typing import Callable, List

import torch


@dataclasses.dataclass
class Kernels:
    """The chosen dense and varlen attention calls, their names and the fallbacks taken."""

    dense: Callable
    dense_name: str
    varlen: Callable
    varlen_name: str
    notes: List[str]


def math_attention(q, k, v, causal):
    """Reference attention on (batch, heads, L, d) tensors: softmax(q k^T / sqrt d) v."""
    scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    if causal:
        lq, lk = q.shape[-2], k.shape[-2]
        mask = torch.ones(lq, lk, dtype=torch.bool, device=q.device).triu(1 + lk - lq)
        scores = scores.masked_fill(mask, float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), v)


def _sdpa(q, k, v, causal):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)


def _flash_sdpa(q, k, v, causal):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        return _sdpa(q, k, v, causal)


def looped_varlen(dense):
    """A varlen call made of one dense call per segment (no THD kernel)."""
    def varlen(q, k, v, cu_q, cu_k, max_q, max_k, causal):
        bounds_q, bounds_k = cu_q.tolist(), cu_k.tolist()
        outs = []
        for i in range(len(bounds_q) - 1):
            qs = q[bounds_q[i]:bounds_q[i + 1]].transpose(0, 1).unsqueeze(0)
            ks = k[bounds_k[i]:bounds_k[i + 1]].transpose(0, 1).unsqueeze(0)
            vs = v[bounds_k[i]:bounds_k[i + 1]].transpose(0, 1).unsqueeze(0)
            outs.append(dense(qs, ks, vs, causal).squeeze(0).transpose(0, 1))
        return torch.cat(outs, dim=0)
    return varlen


def _torch_varlen():
    from torch.nn.attention.varlen import varlen_attn
    parameters = inspect.signature(varlen_attn).parameters

    def varlen(q, k, v, cu_q, cu_k, max_q, max_k, causal):
        if "window_size" in parameters:
            out = varlen_attn(q, k, v, cu_q, cu_k, max_q, max_k,
                              window_size=(-1, 0) if causal else (-1, -1))
        else:
            out = varlen_attn(q, k, v, cu_q, cu_k, max_q, max_k, is_causal=causal)
        return out[0] if isinstance(out, tuple) else out
    return varlen


def _flash_attn_varlen():
    from flash_attn import flash_attn_varlen_func

    def varlen(q, k, v, cu_q, cu_k, max_q, max_k, causal):
        return flash_attn_varlen_func(q, k, v, cu_q, cu_k, max_q, max_k, causal=causal)
    return varlen


def _probe_dense(dense, device, dtype):
    q = torch.randn(1, 2, 64, 64, device=device, dtype=dtype, requires_grad=True)
    out = dense(q, q, q, True)
    torch.autograd.grad(out.sum(), q)


def _probe_varlen(varlen, device, dtype):
    q = torch.randn(96, 2, 64, device=device, dtype=dtype, requires_grad=True)
    cu = torch.tensor([0, 32, 96], dtype=torch.int32, device=device)
    out = varlen(q, q, q, cu, cu, 64, 64, True)
    torch.autograd.grad(out.float().sum(), q)


def choose_kernels(device: torch.device, dtype: torch.dtype) -> Kernels:
    """The fastest attention calls that work on `device`, with notes on fallbacks."""
    notes = []
    dense_candidates = []
    if device.type == "cuda":
        dense_candidates.append(("sdpa-flash", _flash_sdpa))
    if hasattr(torch.nn.functional, "scaled_dot_product_attention"):
        dense_candidates.append(("sdpa", _sdpa))
    dense_candidates.append(("math", math_attention))
    dense_name, dense = _first_working(dense_candidates, _probe_dense, device, dtype, notes)
    if device.type == "cuda" and dense_name != "sdpa-flash":
        notes.append(f"no flash attention kernel: attention is timed with {dense_name}, "
                     "not the flash kernel the shipped profiles measured")
    varlen_candidates = []
    if device.type == "cuda":
        varlen_candidates += [("torch.nn.attention.varlen.varlen_attn", _torch_varlen),
                              ("flash_attn.flash_attn_varlen_func", _flash_attn_varlen)]
    varlen_candidates.append((f"per-segment loop of {dense_name}", lambda: looped_varlen(dense)))
    varlen_name, varlen = _first_working(varlen_candidates, _probe_varlen, device, dtype, notes,
                                         factory=True)
    if not varlen_name.startswith(("torch.nn", "flash_attn")):
        notes.append("no varlen flash kernel (neither torch.nn.attention.varlen.varlen_attn "
                     "nor flash_attn): packs and ranks run one attention call per sequence, "
                     "which is not what a THD training step runs")
    return Kernels(dense, dense_name, varlen, varlen_name, notes)


def _first_working(candidates, probe, device, dtype, notes, factory=False):
    for name, candidate in candidates:
        try:
            function = candidate() if factory else candidate
            probe(function, device, dtype)
        except Exception as error:  # noqa: BLE001: any failure means "not usable here"
            notes.append(f"{name} unavailable: {type(error).__name__}: {str(error)[:200]}")
            continue
        return name, function
    raise RuntimeError("no attention kernel works on this device: " + "; ".join(notes))
