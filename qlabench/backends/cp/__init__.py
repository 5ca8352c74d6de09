"""Inter-card context parallelism (CP): what a backend is given to run one rank's slice of a point.

A backend that can run distributed points lists its CP modes in `Backend.cp_modes` and implements
`cp_setup` and `cp_forward` (backends/base.py). Each rank gets its local inputs (its contiguous slice of
q, k, v, g, beta, layout.py; h0 only for the sequences that start on the rank, zeros for a sequence
continued from the previous rank) and a `RankSetup` (the process group, its pieces of the sequences).
The backend builds its CP context once per point (`cp_setup`) and runs a differentiable
`cp_forward(local inputs, context) -> (o, final state or None)`; the distributed worker times it and
runs the backward through autograd. Rank 0 checks the gathered outputs against the single-device
backend named by `cp_reference`.

    flash_qla    FlashQLA 0.1.3: build_cp_context(cu_seqlens, enable_inter=True[, enable_intra=True],
                 group=..., num_v_heads=..., chunk_size=CHUNK_SIZE, is_train=...), passed as
                 chunk_gated_delta_rule(..., cp_context=ctx). Modes: inter, dual.
                 Reference: flash_qla-nocp (auto_cp=False) on rank 0, full sequence.
    fla          fla-core 0.6.0: fla.ops.cp.build_cp_context(cu_seqlens, group) passed as
                 chunk_gated_delta_rule(..., cp_context=ctx); no initial state, no final state under CP.
                 Mode: fla-cp. Reference: fla (FLA Triton, dispatch off) on rank 0.
    naive-chunk  plain-PyTorch inter-card CP over any process group (gloo on CPU, affine_scan.py).
                 Modes: inter, dual. Reference: naive-chunk fp32. For testing the distributed plumbing
                 on CPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from qlabench.backends.cp.layout import LocalSeq

# A CP point times a forward and its backward through autograd; there is no backward-only CP timing.
CP_TIMED_MODES = frozenset({"fwd", "fwd_bwd"})


@dataclass
class RankSetup:
    """What one rank knows about its share of a distributed point."""

    rank: int
    world_size: int
    group: Any  # the torch.distributed process group
    device: str
    pieces: list[LocalSeq]
    token_start: int
    token_end: int
    global_cu: torch.Tensor  # [N + 1] int32 on the device: the whole stream's cu_seqlens
    local_cu: list[int] = field(default_factory=list)


def check_local_cu(library: str, ctx_cu_seqlens_cpu: torch.Tensor, rs: RankSetup) -> None:
    """Raise unless a library's CP context cut the stream exactly as qlabench's slice (layout.py) did.

    The worker slices the inputs and stitches the outputs by layout.py; a library that split the tokens
    differently would be checked and timed on a different problem than the one recorded.
    """
    local = [int(x) for x in ctx_cu_seqlens_cpu.tolist()]
    if local != rs.local_cu:
        raise RuntimeError(f"{library}'s local cu_seqlens {local} differ from qlabench's slice {rs.local_cu}")


__all__ = ["CP_TIMED_MODES", "LocalSeq", "RankSetup", "check_local_cu"]
