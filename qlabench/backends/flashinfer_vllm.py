"""The FlashInfer GDN prefill call exactly as vLLM makes it (the version in core/engine_switches.py: ENGINES).

vLLM 0.34.0 (`vllm/model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py`): with `--gdn-prefill-backend`
unset on SM90 (or `flashinfer`), `_forward_flashinfer_prefill` (lines 2117-2142) gathers the prefill rows'
states from its pool and calls `fi_chunk_gated_delta_rule` (lines 392-451), which calls

    flashinfer.gdn_prefill.chunk_gated_delta_rule(q=q, k=k, v=v, g=fi_g, beta=fi_beta, initial_state=fi_state,
        output_final_state=True, cu_seqlens=cu_seqlens, output=output, state_checkpoints=None,
        checkpoint_cu_starts=None, checkpoint_every_n_tokens=0, use_cp="auto", backend="flashinfer")

- q, k, v token-major [T, H, D], contiguous (already l2-normalised upstream: use_qk_l2norm_in_kernel=False);
- g: the decay already exponentiated upstream (fused_post_conv_prep with output_g_exp=True), float32 [T, HV];
  beta float32 [T, HV];
- initial_state: the gathered float32 states [N, HV, V, K];
- cu_seqlens: the batch's `prefill_query_start_loc`, int32, passed as is (FlashInfer reads int32 directly);
- output: a preallocated [T, HV, V] buffer (a slice of the layer's `core_attn_out`), written in place;
- use_cp="auto", backend="flashinfer"; no `max_seqlen` (FlashInfer then bounds its CP grid by all the tokens),
  no `scale` (FlashInfer's default, head_size ** -0.5, which is qlabench's K ** -0.5).
With `--mamba-cache-mode align` vLLM also passes state checkpoints; the default (no checkpoint plan) is the
call above. The gather before it and the scatter after it are vLLM's Triton kernels, not part of this call,
and not timed here. This backend differs from `flashinfer` by exactly what vLLM passes and omits: no
`max_seqlen`, the output buffer made once outside the timed call, no scale; the kernels are the same.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import torch

from qlabench.backends import flashinfer as fi_prefill
from qlabench.backends.base import Outputs
from qlabench.backends.flashinfer import FlashInfer, flashinfer_args
from qlabench.core.engine_switches import ENGINES
from qlabench.measure.inputs import GDNInputs

ENGINE = ENGINES["vllm"]
NEEDS = ("output", "use_cp", "backend")  # FlashInfer 0.7 or later


def vllm_args(inp: GDNInputs) -> dict:
    """The keyword arguments vLLM hands FlashInfer's prefill for these inputs, its output buffer included (made
    once, outside the timed call)."""
    a = flashinfer_args(inp)
    scale = a.pop("scale")
    K = inp.q.shape[-1]
    if abs(scale - K ** -0.5) > 1e-12:  # vLLM passes no scale: FlashInfer's default must be the point's
        raise ValueError(f"vLLM passes no scale (FlashInfer's default {K ** -0.5:g}); these inputs use {scale:g}")
    T, HV, V = a["v"].shape
    a.update(cu_seqlens=a["cu_seqlens"].to(torch.int32),
             output=torch.empty(T, HV, V, dtype=inp.q.dtype, device=inp.q.device),
             state_checkpoints=None, checkpoint_cu_starts=None, checkpoint_every_n_tokens=0,
             use_cp="auto", backend="flashinfer")
    return a


class VLLMFlashInferPrefill(FlashInfer):

    def available(self) -> tuple[bool, str]:
        ok, why = super().available()
        fn = fi_prefill._import()[0]
        if ok and not set(NEEDS) <= set(inspect.signature(fn).parameters):
            return False, (f"this flashinfer's chunk_gated_delta_rule has no {'/'.join(NEEDS)}: vLLM {ENGINE.version} "
                           "calls FlashInfer 0.7 or later")
        return ok, why

    def _prepare_fwd(self, inp: GDNInputs) -> Callable[[], Outputs]:
        prefill = self._prefill()
        args = vllm_args(inp)
        B, T, HV, V = inp.v.shape
        out = args["output"]

        def run() -> Outputs:
            with torch.no_grad():
                _, ht = prefill(**args)
            return {"o": out.view(B, T, HV, V), "ht": ht.transpose(-1, -2)}

        return run

    def point_details(self, fn, kernels, kernel_dur_us, median_ms, time_ms) -> dict:
        return super().point_details(fn, kernels, kernel_dur_us, median_ms, time_ms) | {
            "engine_call": f"{ENGINE.name} {ENGINE.version}"}
