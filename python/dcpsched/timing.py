"""Timers: how calibrate and replay turn a piece of work into seconds.

A timer has one method, time(work, what) -> seconds: `work` is a callable
that runs one forward+backward (dcpsched.layer makes them), `what` a
Measurement saying what it is. Calibrate and replay never time anything
themselves; they ask the timer they are given, so tests inject a timer
that runs the work once (the torch code is exercised) and returns a
synthetic time computed from `what` (a formula the test knows), and the
CLIs' real figures come from CudaEventTimer.

- CudaEventTimer: `warmup` untimed runs, then `repeats` runs, each between
  two CUDA events; the median, in seconds.
- WallClockTimer: the same with time.perf_counter, for a CPU run of the
  pipeline (not a figure to calibrate with: a CPU is not the GPU).
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from typing import Callable, Optional, Tuple


@dataclasses.dataclass(frozen=True)
class Measurement:
    """What a work item is, for a timer that prices it by formula and for reports.

    kind "attention": `batch` sequences of `length` tokens, `mask` causal or
    full; "non_attention": the layer without attention on `tokens` tokens;
    "layer": the whole layer on one rank's `samples`, (length, cp) pairs.
    """

    kind: str
    mask: Optional[str] = None
    length: int = 0
    batch: int = 1
    tokens: int = 0
    samples: Tuple[Tuple[int, int], ...] = ()


class CudaEventTimer:
    """Median of `repeats` CUDA-event-timed runs after `warmup` runs."""

    def __init__(self, warmup: int = 3, repeats: int = 10):
        self.warmup, self.repeats = warmup, repeats

    def time(self, work: Callable[[], None], what: Measurement) -> float:
        """Seconds of one run of `work` on the current CUDA device."""
        import torch
        for _ in range(self.warmup):
            work()
        torch.cuda.synchronize()
        seconds = []
        for _ in range(self.repeats):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            work()
            end.record()
            end.synchronize()
            seconds.append(start.elapsed_time(end) / 1000.0)
        return statistics.median(seconds)


class WallClockTimer:
    """Median of `repeats` wall-clock-timed runs after `warmup` runs (CPU)."""

    def __init__(self, warmup: int = 1, repeats: int = 3):
        self.warmup, self.repeats = warmup, repeats

    def time(self, work: Callable[[], None], what: Measurement) -> float:
        """Seconds of one run of `work`, by the wall clock."""
        for _ in range(self.warmup):
            work()
        seconds = []
        for _ in range(self.repeats):
            start = time.perf_counter()
            work()
            seconds.append(time.perf_counter() - start)
        return statistics.median(seconds)
