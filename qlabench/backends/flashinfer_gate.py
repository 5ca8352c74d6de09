"""FlashInfer 0.7.4's prefill with the gate computed inside the call: `use_gate_in_kernel=True` with `A_log`
and `dt_bias`, the call an engine makes once a GDN layer's gating moves into the kernel.

flashinfer-python 0.7.4 (`flashinfer/gdn_prefill.py: chunk_gated_delta_rule`, keyword-only arguments after
`max_seqlen`): `use_gate_in_kernel=True` makes `g` the raw gate input `a` [T, HV] (float32, float16 or
bfloat16) and computes log(alpha) = -exp(A_log) * softplus(a + dt_bias) from `A_log`, `dt_bias` [HV]; `gate_domain`
is then ignored. Only its cuDNN route (SM100) fuses that transform; every other route, the SM90 CuTe DSL
kernels included, first materialises alpha in PyTorch (`gdn_kernels/gates.py: materialize_gates`: a few
elementwise kernels inside the call) and then runs the same prefill as `flashinfer`. So on the H200 this
row is `flashinfer`'s time plus what computing the gate costs inside the call.

The raw gates are made outside the timed call from the point's g (`measure/inputs.raw_gates`: A_log and
dt_bias spread per value head, `a` in float32 so that no bf16 rounding of `a` moves the gate) and the check
is against `naive-recurrent-gate-outside`: the oracle with g computed outside from the same raw gates by the
same formula (`measure/inputs.gdn_gate`). Everything else is `flashinfer`'s call (conventions, `max_seqlen`,
`backend="flashinfer"`, use_cp left to FlashInfer), so its kernels and provenance are `flashinfer`'s.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import torch

from qlabench.backends import flashinfer as fi_prefill
from qlabench.backends.base import Outputs
from qlabench.backends.flashinfer import FlashInfer
from qlabench.measure.inputs import GDNInputs, raw_gates

FUSED_GATE_ARGS = ("use_gate_in_kernel", "A_log", "dt_bias")


def has_fused_gate(prefill: Callable | None) -> bool:
    """Whether this FlashInfer's prefill computes the gate from raw inputs (0.7.4 added `use_gate_in_kernel`)."""
    return prefill is not None and set(FUSED_GATE_ARGS) <= set(inspect.signature(prefill).parameters)


def fused_gate_args(inp: GDNInputs, args: dict) -> dict:
    """`args` (flashinfer_args: g as alpha) with the gate handed over raw: g = a [T, HV] float32, A_log and
    dt_bias [HV], use_gate_in_kernel=True. Made once, outside the timed call."""
    raw = raw_gates(inp.g)
    B, T, HV = inp.g.shape
    return {**args, "g": raw.a.reshape(B * T, HV).contiguous(), "use_gate_in_kernel": True,
            "A_log": raw.A_log, "dt_bias": raw.dt_bias}


class FlashInferFusedGate(FlashInfer):
    oracle = "naive-recurrent-gate-outside"

    def available(self) -> tuple[bool, str]:
        ok, why = super().available()
        if ok and not has_fused_gate(fi_prefill._import()[0]):
            return False, ("this flashinfer's chunk_gated_delta_rule has no use_gate_in_kernel / A_log / dt_bias "
                           "(FlashInfer 0.7.4 added them)")
        return ok, why

    def _prepare_fwd(self, inp: GDNInputs) -> Callable[[], Outputs]:
        prefill = self._prefill()
        args = fused_gate_args(inp, fi_prefill.flashinfer_args(inp) | fi_prefill.version_args(prefill, inp, self.use_cp))
        B, T, HV, V = inp.v.shape

        def run() -> Outputs:
            with torch.no_grad():
                o, ht = prefill(**args)
            return {"o": o.view(B, T, HV, V), "ht": ht.transpose(-1, -2)}

        return run
