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
        if problem := return_problem(out):
            raise BackendError(f"{self.decl.impl} returned {problem}; FLA's chunk_gated_delta_rule returns (o, "
                               "final_state), two torch tensors (output_final_state=True; docs/PLUGINS.md)")
        o, ht = out
        B, T, HV, V = inp.v.shape
        N = B if inp.cu_seqlens is None else inp.cu_seqlens.numel() - 1
        want = {"o": ((B, T, HV, V), o), "final_state": ((N, HV, inp.q.shape[-1], V), ht)}
        for what, (shape, t) in want.items():
            if tuple(t.shape) != shape:
                raise BackendError(f"{self.decl.impl} returned {what} of shape {tuple(t.shape)}, expected "
                                   f"{shape} (docs/PLUGINS.md: the calling convention)")
        # o in the point's dtype, as FLA's is: a float32 o of a bfloat16 point would be checked and timed as if
        # the kernel computed in bfloat16
        if o.dtype != inp.q.dtype:
            raise BackendError(f"{self.decl.impl} returned o of dtype {_dtype(o.dtype)}, expected "
                               f"{_dtype(inp.q.dtype)}, the point's dtype (docs/PLUGINS.md: the calling convention)")
        return o, ht


def _dtype(d: torch.dtype) -> str:
    return str(d).removeprefix("torch.")


def _what(x) -> str:
    """What a value is, for a plugin author: 'None', 'a numpy.ndarray', 'a torch.Tensor', 'a float'."""
    if x is None:
        return "None"
    kind = type(x)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__.split('.')[0]}.{kind.__name__}"
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def return_problem(out) -> str | None:
    """What is wrong with a function's return value against (o, final_state), said of what was given: 'a tuple of 2
    whose final_state is None, not a torch.Tensor', 'a numpy.ndarray, not a tuple'; None when it is two tensors."""
    if not isinstance(out, (tuple, list)):
        return f"{_what(out)}, not a tuple"
    kind = type(out).__name__
    if len(out) != 2:
        return f"a {kind} of {len(out)} item(s), not 2"
    bad = [f"{what} is {_what(t)}" for what, t in zip(("o", "final_state"), out) if not isinstance(t, torch.Tensor)]
    return f"a {kind} of 2 whose {' and '.join(bad)}, not a torch.Tensor" if bad else None
