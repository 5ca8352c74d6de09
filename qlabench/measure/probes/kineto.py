"""Which CUDA kernels one call launched, captured with torch.profiler (Kineto).

Used for provenance (did FLA really run Triton, did FlashQLA run TileLang?), for SM utilisation, and for an
SM budget's escape check (which stream each kernel ran on). The records themselves (`KernelEvent`) are data
and live in `qlabench.core.kernel_event`.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass

from qlabench.core.kernel_event import KernelEvent, kernels_from_trace

# torch.cuda._sleep's kernel (ATen's Sleep.cu): launched on the current stream before a marked call, so the
# trace names the profiler's id of that stream. No library under test launches it.
MARKER_KERNEL = "spin_kernel"


@dataclass(frozen=True)
class CallTrace:
    events: list[KernelEvent]  # the call's kernels, in launch order (the marker left out)
    stream: int | None  # the profiler's id of the stream current when the call was made; None: not marked/found


def capture_call(fn: Callable[[], object], mark_stream: bool = False) -> CallTrace:
    """Run `fn` once under torch.profiler: the CUDA kernels it launched, and with `mark_stream` the stream the
    call was made on (a marker kernel launched on the current stream first, then left out of `events`).

    Call `fn` once beforehand so compilation and autotuning stay out of the trace.
    """
    import torch
    from torch.profiler import ProfilerActivity, profile

    # Kineto leaves CUPTI attached after a profile unless told to tear it down (pytorch/pytorch#144455): every
    # later launch in the process then pays CUPTI's callbacks, and the point's eager and host times, measured
    # after this capture, would carry them (measure/timing/launch.py). Read by Kineto when the profile stops.
    os.environ.setdefault("TEARDOWN_CUPTI", "1")
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        if mark_stream:
            torch.cuda._sleep(1)
        fn()
        torch.cuda.synchronize()
    # The chrome trace is the one place every torch version exposes Kineto's launch metadata
    # (grid, block, blocks per SM, stream) for kernel events.
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
    events = kernels_from_trace(trace)
    if not mark_stream:
        return CallTrace(events, None)
    marks = [e for e in events if MARKER_KERNEL in e.name]
    return CallTrace([e for e in events if MARKER_KERNEL not in e.name], marks[0].stream if marks else None)


def capture_kernels(fn: Callable[[], object]) -> list[KernelEvent]:
    """Run `fn` once under torch.profiler and return the CUDA kernels it launched, in launch order."""
    return capture_call(fn).events
