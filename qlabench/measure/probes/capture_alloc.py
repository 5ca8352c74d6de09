"""What one call allocates from torch's caching allocator, eagerly and while captured in a CUDA graph.

A call that allocates its workspace on every call (FlashInfer 0.7's CP buffers, outputs) gets that memory
from the graph's private pool when captured: the graph replays with fixed addresses, so a timer that
captures n calls and one that captures 1 may see different memory placement. These counters come from
`torch.cuda.memory_stats` (allocator events, not cudaMalloc calls: `segments` counts the cudaMalloc'd
blocks the allocator added). Read-only probes; each leaves nothing allocated behind.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from qlabench.measure.timing.cuda import graph_capture, warm_on_side_stream

_KEYS = {"allocs": "allocation.all.allocated", "alloc_bytes": "allocated_bytes.all.allocated",
         "segments": "segment.all.allocated", "reserved_bytes": "reserved_bytes.all.current"}


def _stats() -> dict:
    s = torch.cuda.memory_stats()
    return {k: int(s.get(key, 0)) for k, key in _KEYS.items()}


def _delta(a: dict, b: dict) -> dict:
    return {k: b[k] - a[k] for k in _KEYS}


def _output_ptr(out) -> int | None:
    """The address of a call's first output tensor (o for a GDN call), to see whether calls share it."""
    if isinstance(out, dict):
        out = next(iter(out.values()), None)
    elif isinstance(out, (tuple, list)):
        out = out[0] if out else None
    return out.data_ptr() if isinstance(out, torch.Tensor) else None


def eager_allocations(fn: Callable[[], object]) -> dict:
    """One eager call: allocator events, bytes allocated (outputs and any workspace) and new segments."""
    torch.cuda.synchronize()
    before = _stats()
    out = fn()
    torch.cuda.synchronize()
    d = _delta(before, _stats())
    del out
    return {f"eager_{k}": v for k, v in d.items() if k != "reserved_bytes"}


def capture_allocations(fn: Callable[[], object], calls: int = 2) -> dict:
    """`calls` calls captured in one graph, each call's outputs dropped before the next (as the graph timer
    captures them): allocator events and bytes during capture, what the graph's pool reserved, and whether
    the calls' outputs landed at one address (the pool reused the first call's memory) or at several."""
    warm_on_side_stream(fn)
    graph = torch.cuda.CUDAGraph()
    ptrs = []
    with graph_capture(graph):
        # read inside the capture: entering it empties torch's cache, which a reading before would count
        before = _stats()
        for _ in range(calls):
            out = fn()
            ptrs.append(_output_ptr(out))
            del out
    torch.cuda.synchronize()
    d = _delta(before, _stats())
    del graph
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    known = [p for p in ptrs if p is not None]
    return {"capture_calls": calls, "capture_allocs": d["allocs"], "capture_alloc_bytes": d["alloc_bytes"],
            "capture_segments": d["segments"], "capture_pool_bytes": d["reserved_bytes"],
            "capture_output_addresses": len(set(known)) if known else None}
