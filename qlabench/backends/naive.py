"""The plain-PyTorch backends: the fp32 recurrence (the oracle) and the chunked WY form (also over CP ranks)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import torch

from qlabench.backends.base import Backend, Outputs
from qlabench.backends.decode import ServingSteps
from qlabench.backends.cp import RankSetup, affine_scan
from qlabench.backends.reference import chunk_gated_delta_rule, recurrent_gated_delta_rule
from qlabench.core.point import Point
from qlabench.measure.inputs import GDNInputs, canonical_states, gdn_gate, raw_gates

# The token-by-token oracle is exact but slow; beyond this many tokens a timed run is not worth it.
RECURRENT_MAX_TOKENS = 65536


class NaiveRecurrent(Backend):

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


class NaiveRecurrentGateOutside(NaiveRecurrent):
    """The oracle of a call that computes its decay from raw gates (FlashInfer's `use_gate_in_kernel`): the
    same recurrence, its g computed outside by `gdn_gate` from the raw gates that call is handed
    (`raw_gates(g)`), so both sides start from one gate function, not the drawn g."""

    def prepare(self, mode: str, inp: GDNInputs) -> Callable[[], Outputs]:
        raw = raw_gates(inp.g)
        return super().prepare(mode, dataclasses.replace(inp, g=gdn_gate(raw.A_log, raw.dt_bias, raw.a).to(inp.g.dtype)))


class NaiveRecurrentNoState(NaiveRecurrent):
    """The oracle of a call that returns no final state (FlashInfer's GDN training route): the same recurrence,
    its loss <o, do> alone (the final state's gradient dht is zero, as that call's autograd sees it) and no
    `ht` among its outputs, so the check compares o and the gradients only."""

    def prepare(self, mode: str, inp: GDNInputs) -> Callable[[], Outputs]:
        run = super().prepare(mode, dataclasses.replace(inp, dht=torch.zeros_like(inp.dht)))

        def without_state() -> Outputs:
            return {n: t for n, t in run().items() if n not in ("ht", "dh0")}

        return without_state


class NaiveStep(ServingSteps, NaiveRecurrent):
    """A serving step in plain PyTorch, as an engine without a slot-indexed kernel would run it: gather the
    batch's states from the pool, the recurrence in float32, scatter the final states back. It runs on
    CPU, so the pool, slot and rotation machinery of backends/decode.py is tested where CI runs."""

    slot_dtype = torch.int64

    def step(self, inp: GDNInputs, pool: torch.Tensor, slots: torch.Tensor) -> torch.Tensor:
        h0 = canonical_states(pool.index_select(0, slots), inp.state_layout)
        o, ht = recurrent_gated_delta_rule(inp.q, inp.k, inp.v, inp.g, inp.beta, scale=inp.scale, initial_state=h0,
                                           compute_dtype=torch.float32)
        pool.index_copy_(0, slots, (ht.transpose(-1, -2) if inp.state_layout == "vk" else ht).to(pool.dtype))
        return o.to(inp.v.dtype)


class NaiveChunk(Backend):
    chunk_size = 64
    # Inter-card CP on any device and process group (gloo on CPU): how the distributed plumbing is tested.
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
