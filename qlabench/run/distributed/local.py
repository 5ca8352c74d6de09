"""What one rank runs of a distributed point: its share (RankSetup), its slice of the inputs, one iteration.

The full inputs come from the point's seed on every rank (qlabench.measure.inputs, the same values
everywhere); each rank keeps its contiguous slice (backends/cp/layout.py). `Step` is one timed iteration
on that slice: the backend's CP forward and, for fwd_bwd, the backward through autograd.
"""

from __future__ import annotations

from typing import Any

import torch

from qlabench.backends import Backend
from qlabench.backends.cp import RankSetup
from qlabench.backends.cp.layout import local_cu_seqlens, local_sequences, rank_slice
from qlabench.core.modes import mode_of
from qlabench.core.point import Point
from qlabench.measure.inputs import GDNInputs
from qlabench.run.distributed.rank import Rank


def rank_setup(p: Point, rk: Rank) -> RankSetup:
    """This rank's share of `p`: its token slice, its pieces of the sequences, both cu_seqlens."""
    start, end = rank_slice(p.total_tokens, rk.world, rk.rank)
    cu = [0]
    for s in p.seqlens:
        cu.append(cu[-1] + s)
    return RankSetup(rank=rk.rank, world_size=rk.world, group=rk.group, device=rk.device,
                     pieces=local_sequences(p.seqlens, rk.world, rk.rank), token_start=start, token_end=end,
                     global_cu=torch.tensor(cu, dtype=torch.int32, device=rk.device),
                     local_cu=local_cu_seqlens(p.seqlens, rk.world, rk.rank))


def local_inputs(full: GDNInputs, rs: RankSetup) -> GDNInputs:
    """The rank's slice of the full inputs: tokens [start, end); h0/dht per local piece."""
    a, b = rs.token_start, rs.token_end
    sl = lambda x: x[:, a:b].contiguous()  # noqa: E731
    h0 = None
    if full.h0 is not None:
        h0 = torch.stack([full.h0[pc.seq] if pc.starts_here else torch.zeros_like(full.h0[0]) for pc in rs.pieces])
    dht = torch.stack([full.dht[pc.seq] if pc.ends_here else torch.zeros_like(full.dht[0]) for pc in rs.pieces])
    cu = torch.tensor(rs.local_cu, dtype=torch.int32, device=full.q.device)
    return GDNInputs(q=sl(full.q), k=sl(full.k), v=sl(full.v), g=sl(full.g), beta=sl(full.beta), h0=h0,
                     cu_seqlens=cu, scale=full.scale, do=sl(full.do), dht=dht.contiguous())


class Step:
    """One timed iteration of a point on this rank: forward, and for fwd_bwd the backward by autograd."""

    def __init__(self, backend: Backend, ctx: Any, inp: GDNInputs, mode: str):
        self.backend, self.ctx, self.mode = backend, ctx, mode
        self.inp = inp
        if not mode_of(mode).backward:
            self.leaves = {}
            self.ginp = inp
            return
        leaves = {"dq": inp.q, "dk": inp.k, "dv": inp.v, "dg": inp.g, "dbeta": inp.beta, "dh0": inp.h0}
        self.leaves = {n: t.detach().requires_grad_(True) for n, t in leaves.items() if t is not None}
        L = self.leaves
        self.ginp = GDNInputs(q=L["dq"], k=L["dk"], v=L["dv"], g=L["dg"], beta=L["dbeta"], h0=L.get("dh0"),
                              cu_seqlens=inp.cu_seqlens, scale=inp.scale, do=inp.do, dht=inp.dht)

    def forward(self):
        if not mode_of(self.mode).backward:
            with torch.no_grad():
                return self.backend.cp_forward(self.ginp, self.ctx)
        return self.backend.cp_forward(self.ginp, self.ctx)

    def backward(self, out) -> dict:
        o, ht = out
        res = {"o": o.detach()}
        if ht is not None:
            res["ht"] = ht.detach()
        if not mode_of(self.mode).backward:
            return res
        outs, grads_in = [o], [self.inp.do.to(o.dtype)]
        if ht is not None:
            outs.append(ht)
            grads_in.append(self.inp.dht.to(ht.dtype))
        names = list(self.leaves)
        grads = torch.autograd.grad(outs, [self.leaves[n] for n in names], grads_in, allow_unused=True)
        # A gradient autograd leaves out (an input a rank does not use) is zero: every rank must report the
        # same tensors, since they are gathered name by name.
        res.update({n: g if g is not None else torch.zeros_like(self.leaves[n]) for n, g in zip(names, grads)})
        return res

    def __call__(self) -> dict:
        return self.backward(self.forward())
