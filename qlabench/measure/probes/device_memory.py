"""The device memory a call takes beyond its inputs and outputs (the figures are defined in core/device_memory.py).

`OutsideMemory` is read around a point's first call (where a library's own allocator takes its workspaces);
`extra_memory` makes one steady call, after the first, with torch's peak statistics reset around it. CUDA only.
"""

from __future__ import annotations

from collections.abc import Callable

from qlabench.core.device_memory import extra_mem_mib, outside_mem_mib


def storages(obj, depth: int = 0, into: dict | None = None) -> dict[int, int]:
    """The CUDA storages held by `obj` (tensors in dicts, lists, tuples and plain objects' attributes, a few
    levels deep): data pointer -> bytes."""
    import torch

    out = {} if into is None else into
    if isinstance(obj, torch.Tensor):
        if obj.is_cuda:
            st = obj.untyped_storage()
            out[st.data_ptr()] = st.nbytes()
    elif depth < 4:
        if isinstance(obj, dict):
            items = list(obj.values())
        elif isinstance(obj, (list, tuple)):
            items = list(obj)
        else:
            items = list(getattr(obj, "__dict__", {}).values())
        for v in items:
            storages(v, depth + 1, out)
    return out


class OutsideMemory:
    """Free device memory and torch's reserved memory read now; `mib()` after a call gives what it took outside
    torch's allocator."""

    def __init__(self, device_index: int):
        import torch

        self.idx = device_index
        torch.cuda.synchronize(device_index)
        self.free = torch.cuda.mem_get_info(device_index)[0]
        self.reserved = torch.cuda.memory_reserved(device_index)

    def mib(self) -> float:
        import torch

        torch.cuda.synchronize(self.idx)
        return round(outside_mem_mib(self.free, torch.cuda.mem_get_info(self.idx)[0], self.reserved,
                                     torch.cuda.memory_reserved(self.idx)), 3)


def extra_memory(fn: Callable[[], object], inputs, device_index: int) -> float:
    """One call of `fn`: its peak allocated through torch's allocator beyond what was allocated before it and
    beyond its outputs that are new storage (an input written in place is none, nor a buffer the prepared
    call allocated before: at most what the call left allocated counts as new outputs), MiB."""
    import torch

    torch.cuda.synchronize(device_index)
    held = storages(inputs)
    before = torch.cuda.memory_allocated(device_index)
    torch.cuda.reset_peak_memory_stats(device_index)
    out = fn()
    torch.cuda.synchronize(device_index)
    peak = torch.cuda.max_memory_allocated(device_index)
    kept = max(0, torch.cuda.memory_allocated(device_index) - before)
    new = min(kept, sum(n for ptr, n in storages(out).items() if ptr not in held))
    del out
    return round(extra_mem_mib(peak, before, new), 3)
