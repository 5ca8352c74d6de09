"""FlashInfer's GDN prefill (flashinfer-python 0.6.13, or 0.7.x): forward only, SM90 / SM100.

0.6.13 runs one CUTLASS C++ kernel on SM90, JIT-built (below); 0.7.x runs CuTe DSL kernels compiled at
first call and may split a call into chunks (its intra-call CP, `use_cp="auto"`); `flashinfer-nocp` pins
`use_cp=False`, `flashinfer-forcecp` `use_cp=True`. Measured against each other on the H200 in docs/FLASHINFER.md.

`flashinfer.gdn_prefill.chunk_gated_delta_rule(q, k, v, g, beta, scale, initial_state,
output_final_state, cu_seqlens, ...)` differs from FlashQLA's and FLA's op in its conventions, and this
backend converts to them before the timed call. (Called with these conversions, FlashInfer matched the
fp32 recurrence on an H200 to a relative error of about 4e-3 in a probe made outside qlabench; this
backend's own GPU path has not run yet, and every row it makes is checked against the oracle.)
- tensors are token-major without a batch axis: q, k [T, H, K], v [T, HV, V], g and beta [T, HV] fp32;
- `g` is the *linear* decay alpha (the kernel takes log2(alpha)), so it is passed exp(g);
- the states are [N, HV, V, K], the transpose of FlashQLA's [N, HV, K, V]: h0 is passed transposed
  (a contiguous copy, made once) and the final state is transposed back (a view) for the check;
- it is always varlen: `cu_seqlens` is required. Varlen points pass theirs (int32, as FlashQLA's table
  does; FlashInfer casts it to int64 on every call, one small kernel inside the timed call); dense
  points are packed into one token stream with a synthesised cu_seqlens (so a dense batch runs as the
  varlen problem it equals).
FlashQLA's own benchmark calls it with log-space g and an untransposed h0: the published FlashInfer
column timed the right kernel on wrong inputs (75% non-finite outputs). Called as here, o and the
final state match the fp32 recurrence to ~4e-3.

Its SM90 kernels are JIT-built on first use, under qlabench's cache folder. FlashInfer's stock module
has 64 variants (11-12 minutes on 16 cores); qlabench builds only the variants it can call (8, or the
ones named in QLABENCH_FLASHINFER_VARIANTS; flashinfer_build.py), and `qlabench warmup` builds them
ahead with progress. The kernel is `cutlass::device_kernel<flat::kernel::FlatKernelTmaWarpSpecializedDeltaRule<...>>`,
which the provenance check requires.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from functools import lru_cache

import torch

from qlabench.backends import flashinfer_build as fib
from qlabench.backends._gpu import needs_cuda, package_missing
from qlabench.backends.base import Backend, JitBuild, Outputs
from qlabench.core import kernel_event
from qlabench.core.errors import ConfigError
from qlabench.core.point import Point
from qlabench.measure import caches as cache
from qlabench.measure.inputs import GDNInputs

# FlashInfer 0.6.13 runs GDN prefill on Hopper (C++/CUTLASS JIT) and Blackwell SM100/SM103 (CuTe DSL).
SUPPORTED_SM = ((9, 0), (10, 0), (10, 3))
KERNEL = "cutlass::device_kernel<flat::kernel::FlatKernelTmaWarpSpecializedDeltaRule"
# 0.7.x's SM90 prefill is CuTe DSL classes whose `kernel` methods the DSL names "kernel_cutlass_kernel_<module
# path><class>_object_at_<specialisation>" (as launched on the H200, docs/FLASHINFER.md): one fused kernel
# (`_FullyFusedDeltaRuleSm90`), or its intra-call CP, four kernels ending in `CPDeltaRulePrefillSm90`.
KERNELS_07 = ("FullyFusedDeltaRuleSm90", "CPDeltaRulePrefillSm90")
CP_KERNEL_07 = kernel_event.FLASHINFER_CP_MARK  # any of the four CP kernels: the call was split


@lru_cache(maxsize=1)
def _import() -> tuple[Callable | None, str]:
    cache.configure()
    why = package_missing("flashinfer", "flashinfer-python", "pip install 'qlabench[flashinfer]'") \
        or needs_cuda(SUPPORTED_SM)
    if why:
        return None, why
    try:
        variants = fib.selected()
    except ConfigError as e:
        return None, str(e)
    try:
        from flashinfer.gdn_prefill import chunk_gated_delta_rule

        if fib.has_cutlass_module():  # 0.6.x: its C++ module, built lean; 0.7.x: CuTe DSL, nothing to build
            fib.install(variants)
    except Exception as e:  # a broken install, or a missing optional dependency (tvm-ffi, the CuTe DSL)
        return None, f"import flashinfer.gdn_prefill failed: {type(e).__name__}: {e}"
    return chunk_gated_delta_rule, ""


class FlashInfer(Backend):
    # Demangled CUDA names of C++ kernels usually carry their return type ("void cutlass::...").
    expect_kernels = (KERNEL, "void " + KERNEL)  # 0.6.x; 0.7.x: KERNELS_07, inside the DSL's names
    # Nothing of the other two libraries may run inside its call: FlashQLA's TileLang kernels, FLA's
    # Triton GDN kernels (names as its rows record them).
    forbid_kernels = ("tilelang_", "chunk_gated_delta_rule", "chunk_local_cumsum", "recompute_w_u",
                      "chunk_fwd_kernel_o", "chunk_scaled_dot_kkt")

    def available(self) -> tuple[bool, str]:
        fn, why = _import()
        return fn is not None, why

    def provenance_error(self, kernel_names: list[str]) -> str | None:
        if any(n.startswith(kernel_event.DSL_PREFIX) for n in kernel_names):  # 0.7.x: the DSL decorates both sides
            return kernel_event.provenance_error(kernel_names, KERNELS_07, self.forbid_kernels, expect_inside=True)
        return super().provenance_error(kernel_names)

    def call_path(self, kernel_names) -> str | None:
        if not any(str(k).startswith(kernel_event.DSL_PREFIX) for k in kernel_names):
            return None  # 0.6.x: one kernel, one path
        return super().call_path(kernel_names)

    def point_details(self, fn, kernels, kernel_dur_us, median_ms, time_ms) -> dict:
        details = super().point_details(fn, kernels, kernel_dur_us, median_ms, time_ms)
        if (path := self.call_path(kernels)) is not None:
            details["flashinfer_cp"] = path == "cp"
        return details

    def check_point(self, point: Point, device: str) -> tuple[bool, str]:
        if point.K != point.V:
            return False, f"FlashInfer's GDN prefill has one head size for q, k and v (got K={point.K}, V={point.V})"
        if point.K != 128:
            return False, f"FlashInfer's GDN prefill kernels are built for head size 128 (got {point.K})"
        if not fib.has_cutlass_module():
            return True, ""  # 0.7.x: one CuTe DSL kernel compiled per configuration on first call
        try:
            variants = fib.selected()
        except ConfigError as e:
            return False, str(e)
        need = fib.variant_of(point)
        if variants is not None and need not in variants:
            return False, (f"FlashInfer kernel variant {need.tag} is not built here ({fib.VARIANTS_ENV}="
                           f"{os.environ.get(fib.VARIANTS_ENV, '')}; add it, or unset it for qlabench's 8)")
        return True, ""

    def jit_build(self, points: list[Point]) -> JitBuild | None:
        """FlashInfer's module, built ahead by `qlabench warmup` (else the first point's call builds it)."""
        if not points or not self.available()[0] or not fib.has_cutlass_module():
            return None  # 0.7.x: nothing to build ahead (its CuTe DSL kernel compiles at the first call)
        variants = fib.selected()
        return JitBuild(label=f"flashinfer {fib.module_name(variants)} ({fib.variant_count(variants)} of 64 kernel "
                              "variants)",
                        run=lambda on_step: fib.build(variants, on_step).wall_s)

    def _prefill(self) -> Callable:
        fn, why = _import()
        if fn is None:
            raise RuntimeError(f"flashinfer unavailable: {why}")
        return fn

    # None: FlashInfer's own choice (0.7's "auto" heuristic splits a call into chunks when its sequences x
    # value heads would leave SMs idle); False: never split (flashinfer-nocp).
    use_cp: bool | None = None

    def forward(self, inp: GDNInputs) -> tuple[torch.Tensor, torch.Tensor]:
        out = self._prepare_fwd(inp)()
        return out["o"], out["ht"]

    def _prepare_fwd(self, inp: GDNInputs) -> Callable[[], Outputs]:
        prefill = self._prefill()
        args = flashinfer_args(inp) | version_args(prefill, inp, self.use_cp)
        B, T, HV, V = inp.v.shape

        def run() -> Outputs:
            with torch.no_grad():
                o, ht = prefill(**args)
            return {"o": o.view(B, T, HV, V), "ht": ht.transpose(-1, -2)}

        return run


def version_args(prefill: Callable, inp: GDNInputs, use_cp: bool | None = None) -> dict:
    """The keyword arguments only 0.7's prefill takes, as an engine passes them (made outside the timing):
    - `max_seqlen`, the longest sequence, known on the host: without it 0.7 sizes its CP chunks for one
      sequence of all the tokens;
    - `backend="flashinfer"`: FlashInfer's own kernels, never a Cake or cuDNN route;
    - `use_cp` when the backend pins it."""
    params = inspect.signature(prefill).parameters
    kw: dict = {}
    if "max_seqlen" in params:
        cu = inp.cu_seqlens
        kw["max_seqlen"] = int(cu.diff().max().item()) if cu is not None else int(inp.q.shape[1])
    if "backend" in params:
        kw["backend"] = "flashinfer"
    if use_cp is not None:
        if "use_cp" not in params:
            raise RuntimeError("this flashinfer's chunk_gated_delta_rule has no use_cp (FlashInfer 0.7 or later)")
        kw["use_cp"] = use_cp
    return kw


def has_cp_switch() -> bool:
    """Whether the installed FlashInfer's prefill can be told not to split a call (0.7's use_cp)."""
    fn, _ = _import()
    return fn is not None and "use_cp" in inspect.signature(fn).parameters


class FlashInferNoCP(FlashInfer):
    use_cp = False

    def available(self) -> tuple[bool, str]:
        ok, why = super().available()
        if ok and not has_cp_switch():
            return False, ("this flashinfer never splits a call (its prefill has no use_cp; FlashInfer 0.7 added "
                           "it): `flashinfer` is already the unsplit kernel")
        return ok, why


class FlashInferForceCP(FlashInferNoCP):
    use_cp = True

    def available(self) -> tuple[bool, str]:
        ok, why = FlashInfer.available(self)
        if ok and not has_cp_switch():
            return False, "this flashinfer has no intra-call CP to force (its prefill has no use_cp; FlashInfer 0.7 added it)"
        return ok, why


def flashinfer_args(inp: GDNInputs) -> dict:
    """The keyword arguments of FlashInfer's `chunk_gated_delta_rule` for these inputs (made outside the timing)."""
    B, T, H, K = inp.q.shape
    HV = inp.v.shape[2]
    cu = inp.cu_seqlens
    if cu is None:  # dense [B, T]: B sequences of T tokens, packed
        cu = torch.arange(0, (B + 1) * T, T, dtype=torch.int32, device=inp.q.device)
    return {
        "q": inp.q.reshape(B * T, H, K).contiguous(),
        "k": inp.k.reshape(B * T, H, K).contiguous(),
        "v": inp.v.reshape(B * T, HV, inp.v.shape[3]).contiguous(),
        "g": inp.g.float().exp().reshape(B * T, HV).contiguous(),  # alpha = exp(g), linear
        "beta": inp.beta.float().reshape(B * T, HV).contiguous(),
        "scale": inp.scale,
        "initial_state": None if inp.h0 is None else inp.h0.float().transpose(-1, -2).contiguous(),
        "output_final_state": True,
        "cu_seqlens": cu,
    }
