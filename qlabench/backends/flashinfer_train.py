"""FlashInfer's GDN training route (flashinfer-python 0.7.4, `flashinfer.gdn_train`) on one GPU.

`flashinfer/gdn_train.py` is the legacy entry point of the deterministic context-parallel (KCP) packed GDN
training route; its names alias `flashinfer/cake_gdn_det_train_kcp.py`, whose generated kernels come from
`flashinfer.experimental.cake_gdn_det_train_kcp`, keyed by SM arch. `is_gdn_train_supported(device)` says
where it runs: in 0.7.4 the package exports sm_100a, sm_103a and sm_107a only (`cake_jit.ARCHES`), so on an
H200 (SM90) it returns False and every point of this backend is a `skipped` row saying so (`check_point`).

The calls, one process and one rank (the partition of one packed batch over a group of one; the context's
`group` is None in a single process, as build_context_det_kcp allows):

    part = gdn_train.kcp_partition(cu_seqlens_cpu_int64, 1)
    ctx = gdn_train.build_kcp_context(part, None, 0, device)
    fwd:       out, saved = gdn_train.chunk_gdn_kcp_fwd(q, k, v, g, beta, ctx, scale=scale)
    bwd_train: gdn_train.chunk_gdn_kcp_bwd(q, k, v, g, beta, ctx, do, saved=saved, scale=scale)
               (the forward's saved set handed over, as its autograd node does in a training step)
    bwd:       the same without the saved set (`saved=None`: it recomputes it from the inputs, the
               backward handed the forward's inputs and nothing else)
    fwd_bwd:   gdn_train.chunk_gdn_kcp(q, k, v, g, beta, ctx, scale=scale), then torch.autograd.grad(out, ..., do)

Operands: q, k bf16 [1, T, H, 128] (l2-normalised by the caller), v bf16 [1, T, HV, 128] with HV % H = 0,
g float32 [1, T, HV] the natural-log decay per token (qlabench's g), beta float32 after the sigmoid; packed
varlen (a dense batch is packed with a synthesised cu_seqlens). Gradients dq, dk, dv bf16, dbeta, dg float32.
The route takes no initial state and returns no final state: a point with an initial state is refused, and
the check is against `naive-recurrent-no-state`, the oracle of the loss <o, do> alone (no ht, dht zero).
Its host orchestration (the partition's plan, a workspace allocated per call unless one is passed) is
documented as capture-safe only with `graph="replay"`, so its points are timed with CUDA events.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from types import ModuleType

import torch

from qlabench.backends._gpu import needs_cuda, package_missing
from qlabench.backends.base import Backend, Outputs
from qlabench.core.point import Point
from qlabench.core.result import device_unsupported_why
from qlabench.measure import caches as cache
from qlabench.measure.env import dist_version
from qlabench.measure.inputs import GDNInputs

ENTRY = ("kcp_partition", "build_kcp_context", "chunk_gdn_kcp", "chunk_gdn_kcp_fwd", "chunk_gdn_kcp_bwd",
         "is_gdn_train_supported")


@lru_cache(maxsize=1)
def _import() -> tuple[ModuleType | None, str]:
    cache.configure()
    why = package_missing("flashinfer", "flashinfer-python", "pip install 'qlabench[flashinfer]'") or needs_cuda()
    if why:
        return None, why
    try:
        import flashinfer.gdn_train as gt
    except Exception as e:  # 0.7.2 and earlier have no training route; or a broken install
        return None, f"import flashinfer.gdn_train failed: {type(e).__name__}: {e} (FlashInfer 0.7.4 has it)"
    missing = [n for n in ENTRY if not hasattr(gt, n)]
    if missing:
        return None, f"this flashinfer's gdn_train has no {', '.join(missing)} (FlashInfer 0.7.4's entry points)"
    return gt, ""


def unsupported_reason(supported: bool, device: str, capability: tuple[int, int] | None, version: str | None) -> str:
    """Why the route does not run on `device`, in the words of its own check ("" when it runs)."""
    if supported:
        return ""
    sm = f"SM{capability[0]}{capability[1]}" if capability else device
    return device_unsupported_why(sm, "flashinfer", version, f"is_gdn_train_supported({device!r}) returned False")


def packed(inp: GDNInputs) -> dict:
    """The route's operands for these inputs, packed as batch 1 (made outside the timed call)."""
    B, T, H, K = inp.q.shape
    HV, V = inp.v.shape[2], inp.v.shape[3]
    cu = inp.cu_seqlens
    if cu is None:
        cu = torch.arange(0, (B + 1) * T, T, dtype=torch.int64)
    return {"q": inp.q.reshape(1, B * T, H, K).contiguous(), "k": inp.k.reshape(1, B * T, H, K).contiguous(),
            "v": inp.v.reshape(1, B * T, HV, V).contiguous(), "g": inp.g.float().reshape(1, B * T, HV).contiguous(),
            "beta": inp.beta.float().reshape(1, B * T, HV).contiguous(), "cu_cpu": cu.detach().to("cpu", torch.int64)}


class FlashInferTrain(Backend):
    oracle = "naive-recurrent-no-state"
    graph_capturable = False
    # Nothing of FlashQLA (TileLang) or FLA (Triton) may run inside the call.
    forbid_kernels = ("tilelang_", "chunk_gated_delta_rule", "chunk_local_cumsum", "recompute_w_u",
                      "chunk_fwd_kernel_o", "chunk_scaled_dot_kkt")

    def available(self) -> tuple[bool, str]:
        gt, why = _import()
        return gt is not None, why

    def check_point(self, point: Point, device: str) -> tuple[bool, str]:
        gt, _ = _import()
        dev = torch.device(device)
        if gt is not None and not gt.is_gdn_train_supported(dev):
            cap = torch.cuda.get_device_capability(dev) if dev.type == "cuda" else None
            return False, unsupported_reason(False, str(dev), cap, dist_version("flashinfer-python"))
        if point.K != 128 or point.V != 128:
            return False, f"FlashInfer's GDN training route needs K = V = 128 (got K={point.K}, V={point.V})"
        if point.initial_state:
            return False, ("FlashInfer's GDN training route starts every sequence from a zero state (it takes no "
                           "initial_state): run it at initial_state = false")
        return True, ""

    def _gt(self) -> ModuleType:
        gt, why = _import()
        if gt is None:
            raise RuntimeError(f"flashinfer's training route unavailable: {why}")
        return gt

    def prepare(self, mode: str, inp: GDNInputs) -> Callable[[], Outputs]:
        gt = self._gt()
        a = packed(inp)
        ctx = gt.build_kcp_context(gt.kcp_partition(a.pop("cu_cpu"), 1), None, 0, inp.q.device)
        ops = (a["q"], a["k"], a["v"], a["g"], a["beta"], ctx)
        do = inp.do.reshape(a["v"].shape).to(a["v"].dtype).contiguous()
        shape = {"o": inp.v.shape, "dq": inp.q.shape, "dk": inp.k.shape, "dv": inp.v.shape, "dg": inp.g.shape,
                 "dbeta": inp.beta.shape}

        def outputs(**t) -> Outputs:
            return {n: x.reshape(shape[n]) for n, x in t.items()}

        if mode == "fwd":
            def run_fwd() -> Outputs:
                with torch.no_grad():
                    o, _ = gt.chunk_gdn_kcp_fwd(*ops, scale=inp.scale)
                return outputs(o=o)
            return run_fwd
        if mode == "fwd_bwd":
            leaves = [t.detach().requires_grad_(True) for t in ops[:5]]

            def run_fwd_bwd() -> Outputs:
                o = gt.chunk_gdn_kcp(*leaves, ctx, scale=inp.scale)
                dq, dk, dv, dg, db = torch.autograd.grad(o, leaves, do)  # leaves: q, k, v, g, beta
                return outputs(o=o.detach(), dq=dq, dk=dk, dv=dv, dg=dg, dbeta=db)
            return run_fwd_bwd
        if mode in ("bwd", "bwd_train"):
            with torch.no_grad():
                o, saved = gt.chunk_gdn_kcp_fwd(*ops, scale=inp.scale)
            keep = saved if mode == "bwd_train" else None

            def run_bwd() -> Outputs:
                dq, dk, dv, db, dg = gt.chunk_gdn_kcp_bwd(*ops, do, saved=keep, scale=inp.scale)
                return outputs(o=o, dq=dq, dk=dk, dv=dv, dg=dg, dbeta=db)
            return run_bwd
        raise ValueError(f"FlashInfer's training route has no {mode!r} mode")
