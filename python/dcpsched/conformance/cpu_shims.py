"""The shims the distributed harness needs to run upstream's pipeline on CPU.

Upstream's data pipeline (DpBalancedScheduler.run and its helpers) is
written for CUDA and NCCL. On a CPU-only machine with Debian's torch and
the gloo backend, exactly these are replaced, in the harness's own rank
processes only (install() is never called in the user's process):

- the device: torch.cuda.current_device() returns the CPU device, and
  Tensor.cuda() returns the tensor itself (on the CPU);
- torch.distributed.all_gather_into_tensor, where gloo does not provide it
  (Debian's torch 1.13): an equivalent built on gloo's all_gather, writing
  the group's inputs one after another, in rank order, into the output;
- torch.distributed.broadcast of a bool tensor, where gloo refuses the type
  (torch 1.13: "Invalid scalar type"; get_batch_on_this_rank_for_sequence_packing
  broadcasts its bool padding_mask): the tensor is broadcast as uint8 and
  copied back.

For the runtime's group lookup (runtime_upstream.py, which names its own
shims in the report), thd_zigzag_indices stands in for Transformer Engine's
thd_get_partitioned_indices, a CUDA kernel: the rows of the rank's share of
each packed sequence when it is split over a CP group (THD_ZIGZAG says how).

Everything else, upstream's scheduling, rerouting, packing and broadcasts
included, runs as it is. describe() lists the shims installed, for the
report.
"""

from typing import List

import torch
import torch.distributed as dist

_installed: List[str] = []


def _current_device():
    return torch.device("cpu")


def _tensor_cuda(self, *args, **kwargs):  # pylint: disable=unused-argument
    return self


def _all_gather_into_tensor_on_all_gather(output_tensor, input_tensor, group=None,
                                          async_op=False):
    """all_gather_into_tensor by all_gather: output is the concatenation of
    every rank's input, in the group's rank order (as NCCL's)."""
    if async_op:
        raise NotImplementedError("the harness's all_gather_into_tensor shim is synchronous")
    size = dist.get_world_size(group)
    if output_tensor.numel() != size * input_tensor.numel():
        raise ValueError(f"all_gather_into_tensor: output has {output_tensor.numel()} "
                         f"elements, expected {size} x {input_tensor.numel()}")
    parts = [torch.empty_like(input_tensor) for _ in range(size)]
    dist.all_gather(parts, input_tensor.contiguous(), group=group)
    output_tensor.copy_(torch.cat([p.reshape(-1) for p in parts]).reshape(output_tensor.shape))


def _gloo_has_all_gather_into_tensor() -> bool:
    """True if all_gather_into_tensor runs on the default (gloo) group."""
    if not hasattr(dist, "all_gather_into_tensor"):
        return False
    probe = torch.zeros(1)
    out = torch.zeros(dist.get_world_size())
    try:
        dist.all_gather_into_tensor(out, probe)
    except (RuntimeError, NotImplementedError, AttributeError):
        return False
    return True


THD_ZIGZAG = ("each sequence of cu_seqlens cut into 2 x cp_size equal chunks, rank r taking "
              "chunks r and 2 cp_size - 1 - r (TE's zigzag; a length not divisible by "
              "2 cp_size is refused, and such microbatches are looked up but not split)")


def thd_zigzag_indices(cu_seqlens, total_tokens, cp_size, cp_rank):
    """The rows CP rank `cp_rank` of `cp_size` takes of a packed THD batch
    (THD_ZIGZAG); an int64 tensor, in row order. Raises ValueError for a
    sequence length not divisible by 2 x cp_size."""
    bounds = [int(x) for x in cu_seqlens.tolist()]
    chunks = 2 * cp_size
    rows = []
    for start, end in zip(bounds, bounds[1:]):
        length = end - start
        if length % chunks:
            raise ValueError(f"THD zigzag: a sequence of {length} rows is not divisible by "
                             f"2 x cp_size = {chunks}")
        size = length // chunks
        for chunk in (cp_rank, chunks - 1 - cp_rank):
            rows.extend(range(start + size * chunk, start + size * (chunk + 1)))
    del total_tokens  # the rows past the last sequence are nobody's
    return torch.tensor(rows, dtype=torch.int64)


def _broadcast_bools_as_bytes(real):
    def broadcast(tensor, src, group=None, async_op=False):
        if tensor.dtype != torch.bool:
            return real(tensor, src, group=group, async_op=async_op)
        if async_op:
            raise NotImplementedError("the harness's bool broadcast shim is synchronous")
        as_bytes = tensor.to(torch.uint8)
        real(as_bytes, src, group=group)
        tensor.copy_(as_bytes.to(torch.bool))
        return None
    return broadcast


def _gloo_broadcasts_bools() -> bool:
    """True if a bool tensor broadcasts on the default (gloo) group."""
    try:
        dist.broadcast(torch.zeros(1, dtype=torch.bool), 0)
    except RuntimeError:
        return False
    return True


def install() -> List[str]:
    """Installs the shims (after init_process_group: the collective probe
    runs on the default group, on every rank alike); returns describe()."""
    if _installed:
        return describe()
    torch.cuda.current_device = _current_device
    torch.Tensor.cuda = _tensor_cuda
    _installed.append("device: torch.cuda.current_device() -> cpu, Tensor.cuda() -> the "
                      "tensor itself")
    # Every rank probes, so all take the same branch (the probe is a collective).
    if not _gloo_has_all_gather_into_tensor():
        dist.all_gather_into_tensor = _all_gather_into_tensor_on_all_gather
        _installed.append("torch.distributed.all_gather_into_tensor (gloo lacks it in torch "
                          f"{torch.__version__}) -> all_gather into a list, concatenated "
                          "in rank order")
    if not _gloo_broadcasts_bools():
        dist.broadcast = _broadcast_bools_as_bytes(dist.broadcast)
        _installed.append("torch.distributed.broadcast of a bool tensor (gloo refuses the type "
                          f"in torch {torch.__version__}) -> broadcast as uint8, copied back")
    return describe()


def describe() -> List[str]:
    """The shims installed, one line each."""
    return list(_installed)
