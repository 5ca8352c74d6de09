"""A function of FLA's `chunk_gated_delta_rule` calling convention, run as a forward backend.

The convention (docs/PLUGINS.md states it for users), which qlabench's inputs already follow
(measure/inputs.py):

    o, final_state = fn(q, k, v, g, beta, scale=scale, initial_state=h0, output_final_state=True,
                        cu_seqlens=cu_seqlens)

    q, k          [B, T, H, K]   l2-normalised, in the point's dtype
    v             [B, T, HV, V]  (HV a multiple of H: grouped value heads)
    g, beta       [B, T, HV]     float32; g is the log-space decay (<= 0), beta in (0, 1)
    scale         float          K ** -0.5
    initial_state [N, HV, K, V]  float32, or None
    cu_seqlens    None (dense: N = B sequences of T tokens) or int32 [N + 1] offsets (packed: B = 1, the N
                  sequences laid end to end along T)
    returns       o [B, T, HV, V] and the final state [N, HV, K, V]

The function is called once per timed call, under torch.no_grad(); its outputs are checked against the oracle
before anything is timed (run/point.py), like every backend's.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from qlabench.backends.base import Backend
from qlabench.core.backend_decl import BackendDecl
from qlabench.core.errors import BackendError
from qlabench.measure.inputs import GDNInputs


class FunctionBackend(Backend):
    """A plugin's function as a backend: forward only (the declaration's modes), on any device and dtype the
    function accepts (an unsupported one fails its own row)."""

    def __init__(self, decl: BackendDecl, fn: Callable):
        super().__init__(decl)
        self.fn = fn

    def forward(self, inp: GDNInputs) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.fn(inp.q, inp.k, inp.v, inp.g, inp.beta, scale=inp.scale, initial_state=inp.h0,
                      output_final_state=True, cu_seqlens=inp.cu_seqlens)
        if not (isinstance(out, (tuple, list)) and len(out) == 2 and all(isinstance(t, torch.Tensor) for t in out)):
            raise BackendError(f"{self.decl.impl} returned {type(out).__name__}, not (o, final_state) as FLA's "
                               "chunk_gated_delta_rule does (output_final_state=True; docs/PLUGINS.md)")
        o, ht = out
        B, T, HV, V = inp.v.shape
        N = B if inp.cu_seqlens is None else inp.cu_seqlens.numel() - 1
        want = {"o": ((B, T, HV, V), o), "final_state": ((N, HV, inp.q.shape[-1], V), ht)}
        for what, (shape, t) in want.items():
            if tuple(t.shape) != shape:
                raise BackendError(f"{self.decl.impl} returned {what} of shape {tuple(t.shape)}, expected "
                                   f"{shape} (docs/PLUGINS.md: the calling convention)")
        return o, ht
