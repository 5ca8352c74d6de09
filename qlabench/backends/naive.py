"""The plain-PyTorch backends: the fp32 recurrence (the oracle) and the chunked WY form (also over CP ranks)."""

from __future__ import annotations

from typing import Any

import torch

from qlabench.backends.base import Backend
from qlabench.backends.cp import RankSetup, affine_scan
from qlabench.backends.reference import chunk_gated_delta_rule, recurrent_gated_delta_rule
from qlabench.core.point import Point
from qlabench.measure.inputs import GDNInputs

# The token-by-token oracle is exact but slow; beyond this many tokens a timed run is not worth it.
RECURRENT_MAX_TOKENS = 65536


class NaiveRecurrent(Backend):
    name = "naive-recurrent"
    description = "token-by-token fp32 recurrence in PyTorch; the correctness oracle"

    def check_point(self, point: Point, device: str) -> tuple[bool, str]:
        if point.total_tokens > RECURRENT_MAX_TOKENS:
            return False, f"{point.total_tokens} tokens: the token-by-token recurrence is capped at {RECURRENT_MAX_TOKENS}"
        return True, ""

    def forward(self, inp: GDNInputs) -> tuple[torch.Tensor, torch.Tensor]:
        cd = torch.float64 if inp.q.dtype == torch.float64 else torch.float32
        return recurrent_gated_delta_rule(
            inp.q, inp.k, inp.v, inp.g, inp.beta, scale=inp.scale, initial_state=inp.h0,
            cu_seqlens=inp.cu_seqlens, compute_dtype=cd,
        )


class NaiveChunk(Backend):
    name = "naive-chunk"
    description = "chunked (WY / UT-transform) form in plain PyTorch, chunk 64; backward by autograd"
    chunk_size = 64
    # Inter-card CP on any device and process group (gloo on CPU): how the distributed plumbing is tested.
    cp_modes = ("inter", "dual")
    cp_reference = "naive-chunk"
    cp_reference_fp32 = True

    def forward(self, inp: GDNInputs) -> tuple[torch.Tensor, torch.Tensor]:
        return chunk_gated_delta_rule(
            inp.q, inp.k, inp.v, inp.g, inp.beta, scale=inp.scale, initial_state=inp.h0,
            cu_seqlens=inp.cu_seqlens, chunk_size=self.chunk_size,
        )

    def cp_setup(self, point: Point, rs: RankSetup) -> Any:
        return affine_scan.setup(point, rs)

    def cp_forward(self, inp: GDNInputs, ctx: Any) -> tuple[torch.Tensor, torch.Tensor]:
        return affine_scan.forward(inp, ctx, self.chunk_size)

    def cp_intra_active(self, ctx: Any) -> bool | None:
        return ctx.mode == "dual"
