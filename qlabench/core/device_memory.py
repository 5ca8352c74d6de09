"""What a call takes of the device's memory beyond its inputs and outputs, defined once. Pure Python.

Two figures, both in MiB (measure/probes/device_memory.py reads them; docs/SM-BUDGET.md):
- `extra_mem_mib`: through torch's caching allocator, the peak allocated during a steady call minus what
  was allocated before it, minus the outputs the call returned that are new storage (an output that is an
  input written in place is no extra). Scratch a library takes through torch (FlashQLA's intermediate
  tensors between its two kernels, a CP split's per-split buffers) shows here.
- `outside_mem_mib`: memory the first call took outside that allocator: the drop of the device's free
  memory (cudaMemGetInfo) minus the growth of torch's reserved memory. A library's own allocator, a
  workspace it keeps, module loading show here; another process on the device would too.
"""

from __future__ import annotations

MIB = float(2**20)


def extra_mem_mib(peak_allocated: int, allocated_before: int, new_output_bytes: int) -> float:
    """The scratch of a call through torch's allocator, MiB (never below 0)."""
    return max(0, peak_allocated - allocated_before - new_output_bytes) / MIB


def outside_mem_mib(free_before: int, free_after: int, reserved_before: int, reserved_after: int) -> float:
    """Device memory a call took outside torch's allocator, MiB (never below 0: memory freed by someone else
    is no negative cost)."""
    return max(0, (free_before - free_after) - (reserved_after - reserved_before)) / MIB
