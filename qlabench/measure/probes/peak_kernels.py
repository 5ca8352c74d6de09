"""Triton kernels that only stream memory: candidates for the HBM read and write peaks (peaks.py).

A grid of a few programs per SM, each striding over the buffer in blocks of 16 KiB, one load (or store)
per element and no other work: what a bandwidth-bound kernel written in Triton can reach. Importing this
module imports triton; peaks.py records the ImportError as the reason where Triton is missing.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from qlabench.core.errors import MeasureError

BLOCK = 4096  # float32 elements per program and step: 16 KiB
PROGRAMS_PER_SM = 8
NUM_WARPS = 8


@triton.jit
def _read_sum_kernel(x_ptr, partial_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    step = tl.num_programs(0) * BLOCK
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(pid * BLOCK, n, step):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(partial_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def _write_value_kernel(x_ptr, n, value, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    step = tl.num_programs(0) * BLOCK
    vals = tl.zeros([BLOCK], dtype=tl.float32) + value
    for start in range(pid * BLOCK, n, step):
        offs = start + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, vals, mask=offs < n)


def programs(device) -> int:
    """Programs in the grid: a few per SM, so every SM streams and the loads of several overlap."""
    return PROGRAMS_PER_SM * torch.cuda.get_device_properties(device).multi_processor_count


def read_sum(x: torch.Tensor, partial: torch.Tensor) -> torch.Tensor:
    """Sum contiguous float32 `x` into one partial sum per program (`partial`, returned)."""
    if x.numel() >= 2**31:
        raise MeasureError("the Triton stream kernels index with int32: at most 2**31 - 1 elements")
    _read_sum_kernel[(partial.numel(),)](x, partial, x.numel(), BLOCK=BLOCK, num_warps=NUM_WARPS)
    return partial


def write_value(x: torch.Tensor, value: float) -> torch.Tensor:
    """Write `value` to every element of contiguous float32 `x` (returned)."""
    if x.numel() >= 2**31:
        raise MeasureError("the Triton stream kernels index with int32: at most 2**31 - 1 elements")
    _write_value_kernel[(programs(x.device),)](x, x.numel(), value, BLOCK=BLOCK, num_warps=NUM_WARPS)
    return x
