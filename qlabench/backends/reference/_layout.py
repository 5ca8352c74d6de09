"""Shared shape handling for the naive kernels: GVA head mapping and per-sequence slicing."""

from __future__ import annotations

import torch

from qlabench.core.point import gva_error


def expand_qk_heads(x: torch.Tensor, h_v: int) -> torch.Tensor:
    """[B, T, h_qk, K] -> [B, T, h_v, K]: value head i uses q/k head i // (h_v / h_qk)."""
    h_qk = x.shape[2]
    if gva := gva_error(h_qk, h_v):
        raise ValueError(gva)
    return x.repeat_interleave(h_v // h_qk, dim=2)


def sequences(B: int, T: int, cu_seqlens: torch.Tensor | None):
    """Yield (batch index, start, end) for each sequence; varlen inputs are packed in batch 1."""
    if cu_seqlens is None:
        for b in range(B):
            yield b, 0, T
        return
    if B != 1:
        raise ValueError("cu_seqlens needs batch size 1 (sequences are packed along T)")
    bounds = cu_seqlens.tolist()
    for n in range(len(bounds) - 1):
        yield 0, bounds[n], bounds[n + 1]
