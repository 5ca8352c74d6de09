"""FlashInfer's GDN serving kernels (flashinfer-python 0.7.2.post1 and 0.7.4, `flashinfer.gdn_decode`): decode and mtp.

The three entry points have the same signatures in 0.7.4 as in 0.7.2.post1 (read from both wheels).

Three entry points, three backends (docs/FLASHINFER.md, "0.7.2"):
- `flashinfer-decode`: `gated_delta_rule_decode`, T = 1, float32 state [B, HV, K, V] ("kv"). It has no pool:
  it takes the batch's states as one dense tensor and updates it in place, so its step is what an engine
  calling it does: gather the batch's states from the pool, the kernel, scatter them back (both timed).
- `flashinfer-decode-pt`: `gated_delta_rule_decode_pretranspose`, states [.., V, K] ("vk"), read from and
  written back to the pool through `initial_state` + `initial_state_indices`, in place. float32 state:
  T = 1 (for T > 1 it routes to `gated_delta_rule_mtp`); bfloat16 state (K = V = 128): T = 1 and T > 1
  (its BF16-state kernels).
- `flashinfer-mtp`: `gated_delta_rule_mtp`, T >= 2, float32 pool [P, HV, V, K] with slot indices, in place
  (`disable_state_update=False`, passed explicitly: its default is True until 0.8).

Their gate is not qlabench's: they take the raw projections of a GDN layer, `A_log` [HV] fp32, `a`
[B, T, HV], `dt_bias` [HV], `b` [B, T, HV] (bf16), and compute g = -exp(A_log) * softplus(a + dt_bias)
and beta = sigmoid(b) inside the kernel. `convert` (outside the timed call) inverts that once: A_log = 0,
dt_bias = 0, a = softplus^-1(-g), b = logit(beta), a and b in bf16 as an engine's projections are. The
bf16 rounding of a and b moves g and beta by at most ~2^-9 relative; the check sees it like any rounding.
q and k are passed as they are (`use_qk_l2norm=False`), with qlabench's scale.

On SM90 all three are CuTe DSL kernels (nvidia-cutlass-dsl and cuda-python are needed at import),
compiled on first call into FlashInfer's cache (under qlabench's cache folder).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType

import torch

from qlabench.backends._gpu import needs_cuda, package_missing
from qlabench.backends.base import Backend
from qlabench.backends.decode import ServingSteps
from qlabench.core import kernel_event
from qlabench.core.point import Point
from qlabench.measure import caches as cache
from qlabench.measure.inputs import GDNInputs

SUPPORTED_SM = ((9, 0), (10, 0), (10, 3))
# The kernels, by their CuTe DSL function names in flashinfer/gdn_kernels/. The DSL decorates a kernel's
# CUDA name around its function name (a prefix and a suffix of its specialisation), so provenance asks for
# the function name anywhere in a launched kernel's name (`provenance_error` below); the exact names are
# in each row's `kernels` column.
DECODE_KV_KERNELS = ("gdn_decode_kernel_small_batch_nontranspose", "gdn_decode_kernel_big_batch_nontranspose")
DECODE_VK_KERNELS = ("gdn_decode_kernel_small_batch_pretranspose", "gdn_decode_kernel_big_batch_pretranspose")
MTP_KERNELS = ("gdn_verify_kernel_mtp",)
BF16_STATE_KERNELS = ("gdn_wide_vec_kernel", "gdn_decode_bf16state_mtp_ilp4_kernel")
# Nothing of FlashQLA (TileLang) or FLA (Triton) may run inside the call.
FORBID = ("tilelang_", "fused_recurrent_gated_delta_rule", "chunk_gated_delta_rule")


@lru_cache(maxsize=1)
def _import() -> tuple[ModuleType | None, str]:
    cache.configure()  # FLASHINFER_WORKSPACE_BASE before flashinfer reads it
    why = package_missing("flashinfer", "flashinfer-python", "pip install 'qlabench[flashinfer]'") \
        or needs_cuda(SUPPORTED_SM)
    if why:
        return None, why
    try:
        import flashinfer.gdn_decode as gd
    except Exception as e:  # a broken install or a missing dependency
        return None, f"import flashinfer.gdn_decode failed: {type(e).__name__}: {e}"
    return gd, kernels_missing(gd)


def kernels_missing(gd: ModuleType) -> str:
    """Why `gd`'s serving kernels cannot run ("" when they can): FlashInfer imports its CuTe DSL kernels
    inside try/except and only fails at the call, so ask before any point runs."""
    if not hasattr(gd, "gated_delta_rule_mtp"):
        return "this flashinfer has no gated_delta_rule_mtp (FlashInfer 0.7.2 or later has it)"
    flags = ("_NONTRANSPOSE_AVAILABLE", "_PRETRANSPOSE_AVAILABLE", "_MTP_AVAILABLE")
    off = [f for f in flags if getattr(gd, f, True) is False]
    if off:
        return (f"FlashInfer's CuTe DSL decode kernels did not import ({', '.join(off)} false): they need "
                "nvidia-cutlass-dsl and cuda-python (pip install 'qlabench[flashinfer]')")
    return ""


@dataclass
class KernelArgs:
    """The inputs in the kernels' convention, made once outside the timed call."""

    q: torch.Tensor  # [B, T, H, K] bf16
    k: torch.Tensor
    v: torch.Tensor  # [B, T, HV, V] bf16
    A_log: torch.Tensor  # [HV] fp32, zeros: exp(A_log) = 1
    a: torch.Tensor  # [B, T, HV] bf16, softplus(a) = -g
    dt_bias: torch.Tensor  # [HV] fp32, zeros
    b: torch.Tensor  # [B, T, HV] bf16, sigmoid(b) = beta
    scale: float


def raw_gates(g: torch.Tensor, beta: torch.Tensor, dtype: torch.dtype = torch.bfloat16):
    """(A_log, a, dt_bias, b) whose in-kernel gates are g and beta: g = -exp(A_log) * softplus(a + dt_bias),
    beta = sigmoid(b). With A_log = dt_bias = 0, a = softplus^-1(-g) = y + log(1 - exp(-y)) for y = -g
    (stable for large y; y is floored at 1e-30 so g = 0 stays finite) and b = logit(beta)."""
    HV = g.shape[-1]
    y = (-g.float()).clamp_min(1e-30)
    a = y + torch.log(-torch.expm1(-y))
    b = torch.logit(beta.float().clamp(1e-7, 1 - 1e-7))
    zeros = torch.zeros(HV, dtype=torch.float32, device=g.device)
    return zeros, a.to(dtype).contiguous(), zeros.clone(), b.to(dtype).contiguous()


def kernel_gates(A_log, a, dt_bias, b):
    """What the kernels compute from the raw gates (softplus with beta 1, threshold 20): (g, beta) in fp32."""
    x = a.float() + dt_bias.float()
    return -A_log.float().exp() * torch.nn.functional.softplus(x, beta=1.0, threshold=20.0), b.float().sigmoid()


def kernel_args(inp: GDNInputs) -> KernelArgs:
    A_log, a, dt_bias, b = raw_gates(inp.g, inp.beta)
    bf = lambda x: x.to(torch.bfloat16).contiguous()  # noqa: E731
    return KernelArgs(q=bf(inp.q), k=bf(inp.k), v=bf(inp.v), A_log=A_log, a=a, dt_bias=dt_bias, b=b,
                      scale=inp.scale)


def _gate_kwargs(x: KernelArgs) -> dict:
    return {"A_log": x.A_log, "a": x.a, "dt_bias": x.dt_bias, "b": x.b, "scale": x.scale, "use_qk_l2norm": False}


def _pin_backend(fn, kw: dict) -> dict:
    """0.7.2's entry points dispatch `backend="auto"` to source-built Cake kernels on SM100/SM103 for some
    shapes; qlabench pins FlashInfer's own kernels (the ones named in expect_kernels)."""
    if "backend" in inspect.signature(fn).parameters:
        kw["backend"] = "flashinfer"
    return kw


class _FlashInferServing(ServingSteps, Backend):
    forbid_kernels = FORBID
    api = ""  # the flashinfer.gdn_decode function the step calls

    def available(self) -> tuple[bool, str]:
        gd, why = _import()
        return gd is not None and not why, why

    def provenance_error(self, kernel_names: list[str]) -> str | None:
        return kernel_event.provenance_error(kernel_names, self.expect_kernels, self.forbid_kernels,
                                             expect_inside=True)

    def _fn(self):
        gd, why = _import()
        if gd is None or why:
            raise RuntimeError(f"flashinfer unavailable: {why}")
        return getattr(gd, self.api)

    def check_point(self, point: Point, device: str) -> tuple[bool, str]:
        if point.K < 128 or point.V < 128:
            return False, f"FlashInfer's GDN decode kernels need K, V >= 128 (got K={point.K}, V={point.V})"
        if point.state_dtype == "bfloat16" and (point.K, point.V) != (128, 128):
            return False, f"FlashInfer's bf16-state kernels are built for K = V = 128 (got {point.K}, {point.V})"
        return super().check_point(point, device)

    def convert(self, inp: GDNInputs) -> KernelArgs:
        return kernel_args(inp)

    def _out(self, x: KernelArgs) -> torch.Tensor:
        B, T, HV, V = x.v.shape
        return torch.empty(B, T, HV, V, dtype=torch.bfloat16, device=x.v.device)  # no kernel: timed for free


class FlashInferDecode(_FlashInferServing):
    state_layouts = ("kv",)
    state_dtypes = ("float32",)
    max_tokens_per_step = 1
    slot_dtype = torch.int64  # index_select / index_copy_ take int64; converted once, outside the timing
    expect_kernels = DECODE_KV_KERNELS
    api = "gated_delta_rule_decode"

    def step(self, x: KernelArgs, pool: torch.Tensor, slots: torch.Tensor) -> torch.Tensor:
        fn = self._fn()
        state = pool.index_select(0, slots)  # the batch's states, dense [B, HV, K, V]: updated in place
        o, _ = fn(x.q, x.k, x.v, state, output=self._out(x), **_pin_backend(fn, _gate_kwargs(x)))
        pool.index_copy_(0, slots, state)
        return o


class FlashInferDecodePretranspose(_FlashInferServing):
    state_layouts = ("vk",)
    state_dtypes = ("float32", "bfloat16")
    expect_kernels = DECODE_VK_KERNELS + MTP_KERNELS + BF16_STATE_KERNELS
    api = "gated_delta_rule_decode_pretranspose"

    def step(self, x: KernelArgs, pool: torch.Tensor, slots: torch.Tensor) -> torch.Tensor:
        fn = self._fn()
        kw = _pin_backend(fn, _gate_kwargs(x))
        if x.q.shape[1] > 1 and "disable_state_update" in inspect.signature(fn).parameters:
            kw["disable_state_update"] = False
        o, _ = fn(x.q, x.k, x.v, None, output=self._out(x), initial_state=pool, initial_state_indices=slots, **kw)
        return o


class FlashInferMTP(_FlashInferServing):
    state_layouts = ("vk",)
    state_dtypes = ("float32",)
    expect_kernels = MTP_KERNELS
    api = "gated_delta_rule_mtp"

    def step(self, x: KernelArgs, pool: torch.Tensor, slots: torch.Tensor) -> torch.Tensor:
        fn = self._fn()
        o, _ = fn(x.q, x.k, x.v, pool, slots, output=self._out(x), disable_state_update=False, **_gate_kwargs(x))
        return o


def serving_backends() -> tuple[Backend, ...]:
    return FlashInferDecode(), FlashInferDecodePretranspose(), FlashInferMTP()
