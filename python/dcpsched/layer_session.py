"""The layer a GPU tool times, set up on its device: what dcpsched.calibrate
and dcpsched.replay both need before they measure anything.

open_layer_session(tool, args, torch, shape, timer) picks the device
(args.device), its dtype (bfloat16 on CUDA, float32 elsewhere), the
attention kernels it has (dcpsched.attention_kernels), a timer (CUDA
events, or the wall clock with few repetitions on the CPU: figures for
trying the pipeline only) and the layer with random weights (seeded by
args.seed), and says on stdout, prefixed by the tool's name, what it chose
and what to mind (a CPU run, a kernel note).

Needs torch.
"""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass
class LayerSession:
    device: Any
    dtype: Any
    kernels: Any
    timer: Any
    layer: Any


def open_layer_session(tool: str, args, torch, shape, timer=None) -> LayerSession:
    """The session for a tool's parsed arguments (device, seed, warmup,
    repeats); `timer` None picks one for the device."""
    from dcpsched.attention_kernels import choose_kernels
    from dcpsched.layer import Layer, describe
    from dcpsched.timing import CudaEventTimer, WallClockTimer
    device = torch.device(args.device)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    print(f"{tool}: {describe(shape)}", flush=True)
    if device.type != "cuda":
        print(f"{tool}: WARNING: --device cpu: CPU figures in float32, for trying "
              "the pipeline only; real figures need CUDA", flush=True)
    torch.manual_seed(args.seed)
    kernels = choose_kernels(device, dtype)
    print(f"attention kernels: dense {kernels.dense_name}, varlen {kernels.varlen_name}")
    for note in kernels.notes:
        print(f"{tool}: NOTE: {note}", flush=True)
    if timer is None:
        timer = (CudaEventTimer(args.warmup, args.repeats) if device.type == "cuda"
                 else WallClockTimer(min(args.warmup, 1), max(1, min(args.repeats, 3))))
    layer = Layer(shape, kernels, device, dtype, seed=args.seed)
    return LayerSession(device, dtype, kernels, timer, layer)
