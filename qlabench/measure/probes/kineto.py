"""Which CUDA kernels one call launched, captured with torch.profiler (Kineto).

Used for provenance (did FLA really run Triton, did FlashQLA run TileLang?) and for SM utilisation.
The records themselves (`KernelEvent`) are data and live in `qlabench.core.kernel_event`.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable

from qlabench.core.kernel_event import KernelEvent, kernels_from_trace


def capture_kernels(fn: Callable[[], object]) -> list[KernelEvent]:
    """Run `fn` once under torch.profiler and return the CUDA kernels it launched, in launch order.

    Call `fn` once beforehand so compilation and autotuning stay out of the trace.
    """
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    # The chrome trace is the one place every torch version exposes Kineto's launch metadata
    # (grid, block, blocks per SM) for kernel events.
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
    return kernels_from_trace(trace)
