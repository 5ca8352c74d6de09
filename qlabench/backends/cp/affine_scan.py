"""Inter-card CP in plain PyTorch (naive-chunk's `cp_forward`): affine state maps, gathered and scanned.

Over any process group (gloo on CPU), each rank computes its slice's affine state map
(S_end = M S_start + H), the maps are all-gathered and scanned, and the slice is recomputed from its
true start state. `dual` also splits the rank's own slice in two and composes the halves (an intra-card
split). It exists to test the distributed plumbing on CPU.

Test-only faults via $QLABENCH_CP_FAULT: `no-exchange` drops the state hand-over (a rank > 0 starts its
continued sequence from zero: the gathered output is wrong, the row must be `incorrect`); `setup-error`
raises on rank 1 in setup; `crash` makes rank 1's process exit in its first forward (the launch dies
mid-point); `forward-error` raises on rank 1 in its first forward and `late-error` in its second (the
warm-up), while rank 0 goes on into the state exchange (a rank failing inside a phase with collectives).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import torch
import torch.distributed as dist

from qlabench.backends.cp import RankSetup
from qlabench.backends.reference import chunk_gated_delta_rule as naive_chunk
from qlabench.core.point import Point
from qlabench.measure.inputs import GDNInputs

FAULT_ENV = "QLABENCH_CP_FAULT"


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
class ScanState:
    """One rank's CP context for one point: its setup, the CP mode, the injected fault, calls so far."""

    rs: RankSetup
    mode: str
    fault: str
    calls: int = 0


def setup(p: Point, rs: RankSetup) -> ScanState:
    fault = os.environ.get(FAULT_ENV, "")
    if fault == "setup-error" and rs.rank == 1:
        raise RuntimeError("injected CP fault on rank 1 (QLABENCH_CP_FAULT=setup-error)")
    return ScanState(rs, p.cp_mode, fault)


def _affine(inp: GDNInputs, a: int, b: int, s0: torch.Tensor | None, chunk_size: int):
    """(H, M) of tokens [a, b): the state after them is M @ S + H for a start state S.

    s0 given: the piece starts its sequence, so its end state is known (M = 0, H includes s0).
    """
    sl = slice(a, b)
    q, k, v, g, beta = (x[:, sl] for x in (inp.q, inp.k, inp.v, inp.g, inp.beta))
    h_v, K, V = v.shape[2], q.shape[-1], v.shape[-1]
    cd = torch.float64 if q.dtype == torch.float64 else torch.float32
    zero = torch.zeros(1, h_v, K, V, dtype=cd, device=q.device)

    def run(v_, h0):
        return naive_chunk(q, k, v_, g, beta, scale=inp.scale, initial_state=h0, chunk_size=chunk_size)

    _, H = run(v, s0 if s0 is not None else zero)
    if s0 is not None:
        return H[0], torch.zeros(h_v, K, K, dtype=cd, device=q.device)
    eye = torch.eye(K, dtype=cd, device=q.device).expand(1, h_v, K, K).contiguous()
    _, M = run(torch.zeros(1, b - a, h_v, K, dtype=v.dtype, device=v.device), eye)
    return H[0], M[0]


def forward(inp: GDNInputs, state: ScanState, chunk_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(o, final states) of the rank's local pieces, each started from its true state."""
    rs = state.rs
    if state.fault == "crash" and rs.rank == 1:
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
        H1, M1 = _affine(inp, last.start, mid, s0, chunk_size)
        H2, M2 = _affine(inp, mid, last.end, None, chunk_size)
        H, M = M2 @ H1 + H2, M2 @ M1
    else:
        H, M = _affine(inp, last.start, last.end, s0, chunk_size)
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
                        cu_seqlens=cu, chunk_size=chunk_size)
    # Tie o to the gathered maps on every rank (times zero): rank 0 uses no carry, but its backward
    # must still join the gather's all_reduce, or the other ranks wait for it forever.
    o = o + (HM.sum() * 0).to(o.dtype)
    return o, ht
