"""The shims the distributed harness needs to run upstream's pipeline on CPU.

Upstream's data pipeline (DpBalancedScheduler.run and its helpers) is
written for CUDA and NCCL. On a CPU-only machine with Debian's torch and
the gloo backend, exactly these are replaced, in the harness's own rank
processes only (install() is never called in the user's process):

- the device: torch.cuda.current_device() returns the CPU device, and
  Tensor.cuda() returns the tensor itself (on the CPU);
- torch.distributed.all_gather_into_tensor, where gloo does not provide it
  (Debian's torch 1.13): an equivalent built on gloo's all_gather, writing
  the group's inputs one after another, in rank order, into the output.

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
    return describe()


def describe() -> List[str]:
    """The shims installed, one line each."""
    return list(_installed)
