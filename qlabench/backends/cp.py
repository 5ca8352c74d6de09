"""Context-parallel backends: how each library runs one rank's slice of a distributed point.

A CP backend gets the rank's local inputs (its contiguous slice of q, k, v, g, beta; h0 only for the
sequences that start on the rank, zeros for a sequence continued from the previous rank) and the
process group, builds its CP context once per point (`setup`), and runs a differentiable
`forward(local inputs, state) -> (o, final state or None)`; the worker times it and runs the backward
through autograd. The single-device `reference` backend (from the ordinary registry) is what rank 0
checks the gathered outputs against.

    flash_qla    FlashQLA 0.1.3: build_cp_context(cu_seqlens, enable_inter=True[, enable_intra=True],
                 group=..., num_v_heads=..., chunk_size=CHUNK_SIZE, is_train=...), passed as
                 chunk_gated_delta_rule(..., cp_context=ctx). Modes: inter, dual.
                 Reference: flash_qla-nocp (auto_cp=False) on rank 0, full sequence.
    fla          fla-core 0.6.0: fla.ops.cp.build_cp_context(cu_seqlens, group) passed as
                 chunk_gated_delta_rule(..., cp_context=ctx); no initial state, no final state under CP.
                 Mode: fla-cp. Reference: fla (FLA Triton, dispatch off) on rank 0.
    naive-chunk  plain-PyTorch inter-card CP over any process group (gloo on CPU): each rank computes its
                 slice's affine state map (S_end = M S_start + H), the maps are all-gathered and scanned,
                 and the slice is recomputed from its true start state. `dual` also splits the rank's
                 own slice in two and composes the halves (an intra-card split). Reference: naive-chunk
                 fp32. For testing the distributed plumbing on CPU.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch
import torch.distributed as dist

from qlabench.backends.fla import DISPATCH_OFF, FLASHQLA_KERNELS
from qlabench.measure.inputs import GDNInputs
from qlabench.backends.reference import chunk_gated_delta_rule as naive_chunk
from qlabench.core.point import Point
from qlabench.backends.cp_layout import LocalSeq

# Test-only fault injection for the naive CP backend (see NaiveChunkCP).
FAULT_ENV = "QLABENCH_CP_FAULT"


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


class CPBackend:
    name: ClassVar[str]
    cp_modes: ClassVar[tuple[str, ...]]
    modes: ClassVar[frozenset[str]] = frozenset({"fwd", "fwd_bwd"})
    dtypes: ClassVar[frozenset[str]] = frozenset({"float32", "bfloat16", "float16"})
    devices: ClassVar[frozenset[str]] = frozenset({"cuda"})
    reference: ClassVar[str]  # a backend of qlabench.backends.REGISTRY
    reference_fp32: ClassVar[bool] = False  # run the reference on float32 copies of the inputs
    final_state: ClassVar[bool] = True  # the CP forward returns the final state
    expect_kernels: ClassVar[tuple[str, ...]] = ()
    forbid_kernels: ClassVar[tuple[str, ...]] = ()
    env: ClassVar[dict[str, str]] = {}

    def available(self) -> tuple[bool, str]:
        return True, ""

    def supports(self, p: Point, device_type: str) -> tuple[bool, str]:
        if device_type not in self.devices:
            return False, f"{self.name} CP does not run on {device_type} (runs on: {', '.join(sorted(self.devices))})"
        if p.cp_mode not in self.cp_modes:
            return False, f"{self.name} has no CP mode {p.cp_mode!r} (has: {', '.join(self.cp_modes)})"
        if p.mode not in self.modes:
            return False, f"CP points time {', '.join(sorted(self.modes))}; not {p.mode}"
        if p.dtype not in self.dtypes:
            return False, f"{self.name} CP does not support {p.dtype}"
        why = p.cp_problem()
        if why:
            return False, why
        return self.check_point(p)

    def check_point(self, p: Point) -> tuple[bool, str]:
        return True, ""

    def setup(self, p: Point, rs: RankSetup) -> Any:
        """Build the CP context for this point on this rank (collective where the library needs it)."""
        return None

    def forward(self, inp: GDNInputs, state: Any) -> tuple[torch.Tensor, torch.Tensor | None]:
        raise NotImplementedError

    def intra_active(self, state: Any) -> bool | None:
        """Dual mode: whether the intra-card split actually triggered on this rank (None: n/a)."""
        return None


# -- FlashQLA --------------------------------------------------------------------------------------

class FlashQLACP(CPBackend):
    name = "flash_qla"
    cp_modes = ("inter", "dual")
    dtypes = frozenset({"bfloat16", "float16"})
    reference = "flash_qla-nocp"
    expect_kernels = ("tilelang_",)

    def available(self) -> tuple[bool, str]:
        from qlabench.backends.flash_qla import _import

        mods, why = _import()
        return mods is not None, why

    def check_point(self, p: Point) -> tuple[bool, str]:
        if p.K != 128 or p.V != 128:
            return False, f"FlashQLA kernels need K = V = 128 (got K={p.K}, V={p.V})"
        if p.gva_error:
            return False, "h_v must be a multiple of h_qk"
        return True, ""

    def setup(self, p: Point, rs: RankSetup) -> Any:
        from qlabench.backends.flash_qla import _import

        (_, qc), _ = _import()
        ctx = qc.build_cp_context(
            rs.global_cu, enable_inter=True, enable_intra=p.cp_mode == "dual", group=rs.group,
            num_v_heads=p.h_v, chunk_size=qc.CHUNK_SIZE, is_train=p.mode != "fwd",
        )
        local = [int(x) for x in ctx.cu_seqlens_cpu.tolist()]
        if local != rs.local_cu:
            raise RuntimeError(f"FlashQLA's local cu_seqlens {local} differ from qlabench's slice {rs.local_cu}")
        return ctx

    def forward(self, inp: GDNInputs, state: Any):
        import flash_qla

        return flash_qla.chunk_gated_delta_rule(
            inp.q, inp.k, inp.v, inp.g, inp.beta, scale=inp.scale, initial_state=inp.h0,
            output_final_state=True, cu_seqlens=state.cu_seqlens, cp_context=state,
        )

    def intra_active(self, state: Any) -> bool | None:
        return bool(getattr(state, "is_intra", False))


# -- FLA ---------------------------------------------------------------------------------------------

class FLACP(CPBackend):
    name = "fla"
    cp_modes = ("fla-cp",)
    reference = "fla"
    final_state = False
    env = dict(DISPATCH_OFF)
    forbid_kernels = FLASHQLA_KERNELS

    def available(self) -> tuple[bool, str]:
        from qlabench.backends.fla import _import

        mods, why = _import()
        if mods is None:
            return False, why
        try:
            import fla.ops.cp  # noqa: F401
        except Exception as e:
            return False, f"fla.ops.cp missing: {type(e).__name__}: {e}"
        return True, ""

    def check_point(self, p: Point) -> tuple[bool, str]:
        if p.initial_state:
            return False, ("FLA's CP takes no initial state (chunk_gated_delta_rule asserts initial_state is None "
                           "under cp_context): use initial_state = false")
        if p.K > 256:
            return False, f"FLA's chunk kernels need K <= 256 (got {p.K})"
        return True, ""

    def setup(self, p: Point, rs: RankSetup) -> Any:
        os.environ.update(self.env)
        from fla.ops.cp import build_cp_context

        ctx = build_cp_context(rs.global_cu, group=rs.group)
        local = [int(x) for x in ctx.cu_seqlens_cpu.tolist()]
        if local != rs.local_cu:
            raise RuntimeError(f"FLA's local cu_seqlens {local} differ from qlabench's slice {rs.local_cu}")
        return ctx

    def forward(self, inp: GDNInputs, state: Any):
        from qlabench.backends.fla import _import

        (fchunk, _, _), _ = _import()
        o, _ = fchunk.chunk_gated_delta_rule(
            inp.q, inp.k, inp.v, inp.g, inp.beta, scale=inp.scale, initial_state=None,
            output_final_state=False, cp_context=state,
        )
        return o, None


# -- plain PyTorch (any device, any process group) ----------------------------------------------------

class _AllGather(torch.autograd.Function):
    """all_gather with a backward: the gradient of x_r is the sum over ranks of their grad for slot r."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        ws = dist.get_world_size(group)
        parts = [torch.empty_like(x) for _ in range(ws)]
        dist.all_gather(parts, x.contiguous(), group=group)
        return torch.stack(parts)

    @staticmethod
    def backward(ctx, grad):
        grad = grad.contiguous().clone()
        dist.all_reduce(grad, group=ctx.group)
        return grad[dist.get_rank(ctx.group)], None


def all_gather_autograd(x: torch.Tensor, group) -> torch.Tensor:
    return _AllGather.apply(x, group)


@dataclass
class _NaiveState:
    rs: RankSetup
    mode: str
    fault: str
    calls: int = 0


class NaiveChunkCP(CPBackend):
    """Inter-card CP in plain PyTorch (see the module doc). Test-only faults via $QLABENCH_CP_FAULT:
    `no-exchange` drops the state hand-over (a rank > 0 starts its continued sequence from zero: the
    gathered output is wrong, the row must be `incorrect`); `setup-error` raises on rank 1 in setup;
    `crash` makes rank 1's process exit in its first forward (the launch dies mid-point);
    `forward-error` raises on rank 1 in its first forward and `late-error` in its second (the warm-up),
    while rank 0 goes on into the state exchange (a rank failing inside a phase with collectives)."""

    name = "naive-chunk"
    cp_modes = ("inter", "dual")
    dtypes = frozenset({"float64", "float32", "bfloat16", "float16"})
    devices = frozenset({"cpu", "cuda"})
    reference = "naive-chunk"
    reference_fp32 = True
    chunk_size = 64

    def setup(self, p: Point, rs: RankSetup) -> Any:
        fault = os.environ.get(FAULT_ENV, "")
        if fault == "setup-error" and rs.rank == 1:
            raise RuntimeError("injected CP fault on rank 1 (QLABENCH_CP_FAULT=setup-error)")
        return _NaiveState(rs, p.cp_mode, fault)

    def intra_active(self, state: Any) -> bool | None:
        return state.mode == "dual"

    def _run(self, q, k, v, g, beta, h0, scale):
        return naive_chunk(q, k, v, g, beta, scale=scale, initial_state=h0, chunk_size=self.chunk_size)

    def _affine(self, inp: GDNInputs, a: int, b: int, s0: torch.Tensor | None):
        """(H, M) of tokens [a, b): the state after them is M @ S + H for a start state S.

        s0 given: the piece starts its sequence, so its end state is known (M = 0, H includes s0).
        """
        sl = slice(a, b)
        q, k, v, g, beta = (x[:, sl] for x in (inp.q, inp.k, inp.v, inp.g, inp.beta))
        h_v, K, V = v.shape[2], q.shape[-1], v.shape[-1]
        cd = torch.float64 if q.dtype == torch.float64 else torch.float32
        zero = torch.zeros(1, h_v, K, V, dtype=cd, device=q.device)
        _, H = self._run(q, k, v, g, beta, s0 if s0 is not None else zero, inp.scale)
        if s0 is not None:
            return H[0], torch.zeros(h_v, K, K, dtype=cd, device=q.device)
        eye = torch.eye(K, dtype=cd, device=q.device).expand(1, h_v, K, K).contiguous()
        _, M = self._run(q, k, torch.zeros(1, b - a, h_v, K, dtype=v.dtype, device=v.device), g, beta, eye,
                         inp.scale)
        return H[0], M[0]

    def forward(self, inp: GDNInputs, state: _NaiveState):
        rs = state.rs
        if state.fault == "crash" and rs.rank == 1:
            import sys

            print("RuntimeError: injected crash on rank 1 (QLABENCH_CP_FAULT=crash)", file=sys.stderr, flush=True)
            os._exit(3)
        state.calls += 1
        if rs.rank == 1 and (state.fault, state.calls) in (("forward-error", 1), ("late-error", 2)):
            raise RuntimeError(f"injected CP fault on rank 1 in forward call {state.calls} "
                               f"(QLABENCH_CP_FAULT={state.fault})")
        pieces = rs.pieces
        h_v, K, V = inp.v.shape[2], inp.q.shape[-1], inp.v.shape[-1]
        cd = torch.float64 if inp.q.dtype == torch.float64 else torch.float32
        last = pieces[-1]
        s0 = None
        if last.starts_here:
            s0 = inp.h0[len(pieces) - 1: len(pieces)].to(cd) if inp.h0 is not None else \
                torch.zeros(1, h_v, K, V, dtype=cd, device=inp.q.device)
        if state.mode == "dual" and last.end - last.start >= 2:
            mid = (last.start + last.end) // 2
            H1, M1 = self._affine(inp, last.start, mid, s0)
            H2, M2 = self._affine(inp, mid, last.end, None)
            H, M = M2 @ H1 + H2, M2 @ M1
        else:
            H, M = self._affine(inp, last.start, last.end, s0)
        # One gather (one all_reduce in the backward, so every rank's collectives line up).
        HM = all_gather_autograd(torch.cat([H, M], dim=-1), rs.group)  # [W, h_v, K, V + K]
        Hs, Ms = HM[..., :V], HM[..., V:]
        # The state entering this rank: scan the ranks before it (B_r = M_r B_{r-1} + H_r).
        carry = torch.zeros(h_v, K, V, dtype=cd, device=inp.q.device)
        for r in range(rs.rank):
            carry = Ms[r] @ carry + Hs[r]
        if state.fault == "no-exchange":
            carry = torch.zeros_like(carry)
        # Every local piece from its true start state, in one varlen call.
        starts = []
        for j, piece in enumerate(pieces):
            if not piece.starts_here:
                starts.append(carry)
            elif inp.h0 is not None:
                starts.append(inp.h0[j].to(cd))
            else:
                starts.append(torch.zeros(h_v, K, V, dtype=cd, device=inp.q.device))
        h0 = torch.stack(starts)
        cu = torch.tensor(rs.local_cu, dtype=torch.int32, device=inp.q.device)
        o, ht = naive_chunk(inp.q, inp.k, inp.v, inp.g, inp.beta, scale=inp.scale, initial_state=h0,
                            cu_seqlens=cu, chunk_size=self.chunk_size)
        # Tie o to the gathered maps on every rank (times zero): rank 0 uses no carry, but its backward
        # must still join the gather's all_reduce, or the other ranks wait for it forever.
        o = o + (HM.sum() * 0).to(o.dtype)
        return o, ht


CP_REGISTRY: dict[str, CPBackend] = {b.name: b for b in (FlashQLACP(), FLACP(), NaiveChunkCP())}
