"""FlashQLA (Qwen's TileLang kernels, package flash-qla 0.1.3), its intra-card CP variants, its inter-card CP.

- fwd and fwd_bwd go through `flash_qla.chunk_gated_delta_rule` (fwd_bwd via its autograd Function).
- bwd times the backward kernels alone exactly as FlashQLA's published table does
  (benchmark/bench_gated_delta_rule.py, `bench_bwd`): the low-level `chunk_gated_delta_rule_fwd` runs
  once (no CP cache, `is_train` left at its default), and the timed call is
  `chunk_gated_delta_rule_bwd(q, k, v, g_cumsum, beta, A, do, dht, scale=, initial_state=, cu_seqlens=,
  auto_cp=)` with no `cp_context` and no `cp_cache`. Where intra-card CP triggers, that backward
  rebuilds its CP context (cached by tensor identity: no work after the first call) and recomputes the
  forward's CP pre-pass (warm-up chunks, the chunk states and their correction) inside the timed call.
  For `flash_qla-forcecp` the backward is handed a context built with `force_intra_cp=True` (the
  backward has no such switch, and the benchmark has no forced variant), still with no cache.
- bwd_train times the backward alone as autograd runs it in a training step
  (`ChunkGatedDeltaRuleFunction.backward`): the forward is run with `is_train=True` and the CP cache on,
  and the backward is handed the forward's CP context and cache, so it does not redo the CP pre-pass.
  It calls the same low-level pair rather than autograd itself, because a backward taken through
  autograd cannot be captured in a CUDA graph apart from its forward.
Both check their gradients against the oracle. Where intra-card CP does not trigger (no CP, or a
problem the CP heuristic leaves alone) the two time the same kernels.
- distributed points (cp modes inter, dual) build FlashQLA's CP context over the ranks' process group
  and pass it to `chunk_gated_delta_rule` (backends/cp/__init__.py).
Kernel names of every FlashQLA launch begin with `tilelang_`, which the provenance check relies on.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import torch

from qlabench.measure import caches as cache
from qlabench.measure.inputs import GDNInputs
from qlabench.core import kernel_event
from qlabench.core.point import Point
from qlabench.backends._gpu import needs_cuda, package_missing
from qlabench.backends.base import Backend, Outputs, backward_outputs
from qlabench.backends.cp import RankSetup, check_local_cu

# FlashQLA 0.1.3 picks its kernels by architecture at import and raises on any other.
SUPPORTED_SM = ((9, 0), (10, 0), (10, 3), (12, 0), (12, 1))


@lru_cache(maxsize=1)
def _import() -> tuple[object | None, str]:
    cache.configure()  # before tilelang is imported
    why = package_missing("flash_qla", "flash-qla") or needs_cuda(SUPPORTED_SM)
    if why:
        return None, why
    try:
        import flash_qla
        from flash_qla.ops.gated_delta_rule import chunk as qchunk
    except Exception as e:  # import runs arch detection and device queries: report, don't hide
        return None, f"import flash_qla failed: {type(e).__name__}: {e}"
    return (flash_qla, qchunk), ""


def _accepts_force_intra_cp() -> bool:
    mods, _ = _import()
    if mods is None:  # not installed: available() says so; nothing to learn about its API here
        return True
    flash_qla = mods[0]
    try:
        return "force_intra_cp" in inspect.signature(flash_qla.chunk_gated_delta_rule).parameters
    except (TypeError, ValueError):  # a wrapper without a readable signature: assume the current API
        return True


class FlashQLA(Backend):
    expect_kernels = ("tilelang_",)
    auto_cp = True
    force_intra_cp = False
    cp_reference = "flash_qla-nocp"

    def available(self) -> tuple[bool, str]:
        mods, why = _import()
        return mods is not None, why

    def check_point(self, point: Point, device: str) -> tuple[bool, str]:
        if point.K != 128 or point.V != 128:
            return False, f"FlashQLA kernels need K = V = 128 (got K={point.K}, V={point.V})"
        if point.gva_error:
            return False, "h_v must be a multiple of h_qk"
        if point.layout == "varlen" and point.batch != 1:
            return False, "varlen needs batch 1 with cu_seqlens"
        if self.force_intra_cp and not _accepts_force_intra_cp():
            return False, "this flash-qla has no force_intra_cp switch (added in flash-qla 0.1.3)"
        return True, ""

    def _cp_kwargs(self) -> dict:
        # force_intra_cp only when forcing: older releases (flash-qla 0.1.2, the published table's)
        # have auto_cp but not that switch, and the plain variants must still run on them.
        return {"auto_cp": self.auto_cp, **({"force_intra_cp": True} if self.force_intra_cp else {})}

    def forward(self, inp: GDNInputs) -> tuple[torch.Tensor, torch.Tensor]:
        (flash_qla, _), _ = _import()
        return flash_qla.chunk_gated_delta_rule(
            inp.q, inp.k, inp.v, inp.g, inp.beta, scale=inp.scale, initial_state=inp.h0,
            output_final_state=True, cu_seqlens=inp.cu_seqlens, **self._cp_kwargs(),
        )

    def prepare(self, mode: str, inp: GDNInputs) -> Callable[[], Outputs]:
        if mode == "bwd":
            return self._prepare_bwd_published(inp)
        if mode == "bwd_train":
            return self._prepare_bwd_train(inp)
        return super().prepare(mode, inp)

    def _prepare_bwd_published(self, inp: GDNInputs) -> Callable[[], Outputs]:
        """FlashQLA's `bench_bwd`: forward once, then only the backward, fed g-cumsum and A, no CP cache."""
        (_, qc), _ = _import()
        ctx_kw = {}
        if self.force_intra_cp:
            # The benchmark passes no context (the backward then decides CP itself, as auto_cp says);
            # forcing the split needs one built with the forced decision. Still no cache.
            ctx_kw["cp_context"] = qc._auto_intra_cp_context(inp.k, inp.v, inp.cu_seqlens, qc.CHUNK_SIZE, self.auto_cp,
                                                             True, force_intra_cp=True)
        g_cs, A, o, _, ht, _ = qc.chunk_gated_delta_rule_fwd(
            inp.q, inp.k, inp.v, inp.g, inp.beta, scale=inp.scale, initial_state=inp.h0, output_final_state=True,
            output_h=False, cu_seqlens=inp.cu_seqlens, auto_cp=self.auto_cp, **ctx_kw,
        )

        def run_bwd() -> Outputs:
            dq, dk, dv, db, dg, dh0 = qc.chunk_gated_delta_rule_bwd(
                inp.q, inp.k, inp.v, g_cs, inp.beta, A, inp.do, inp.dht, scale=inp.scale, initial_state=inp.h0,
                cu_seqlens=inp.cu_seqlens, auto_cp=self.auto_cp, **ctx_kw,
            )
            return backward_outputs(o, ht, dq, dk, dv, dg, db, dh0)

        return run_bwd

    def _prepare_bwd_train(self, inp: GDNInputs) -> Callable[[], Outputs]:
        """The backward as autograd runs it in training: the forward's CP context and cache handed over."""
        (_, qc), _ = _import()
        # The same CP context autograd builds in training (private helper: the public
        # build_cp_context needs the batch-1 cu_seqlens synthesised exactly this way).
        ctx = qc._auto_intra_cp_context(inp.k, inp.v, inp.cu_seqlens, qc.CHUNK_SIZE, self.auto_cp, True,
                                        force_intra_cp=self.force_intra_cp)
        intra = bool(getattr(ctx, "is_intra", False))
        g_cs, A, o, _, ht, cp_cache = qc.chunk_gated_delta_rule_fwd(
            inp.q, inp.k, inp.v, inp.g, inp.beta, scale=inp.scale, initial_state=inp.h0, cu_seqlens=inp.cu_seqlens,
            output_final_state=True, auto_cp=self.auto_cp, enable_fwd_cp_cache=intra, cp_context=ctx, is_train=True,
        )

        def run_bwd() -> Outputs:
            dq, dk, dv, db, dg, dh0 = qc.chunk_gated_delta_rule_bwd(
                inp.q, inp.k, inp.v, g_cs, inp.beta, A, inp.do, inp.dht, scale=inp.scale, initial_state=inp.h0,
                cu_seqlens=inp.cu_seqlens, auto_cp=self.auto_cp, cp_cache=cp_cache, cp_context=ctx,
            )
            return backward_outputs(o, ht, dq, dk, dv, dg, db, dh0)

        return run_bwd


    # -- inter-card CP ---------------------------------------------------------------------------
    def cp_setup(self, point: Point, rs: RankSetup) -> Any:
        (_, qc), _ = _import()
        ctx = qc.build_cp_context(
            rs.global_cu, enable_inter=True, enable_intra=point.cp_mode == "dual", group=rs.group,
            num_v_heads=point.h_v, chunk_size=qc.CHUNK_SIZE, is_train=point.has_backward,
        )
        check_local_cu("FlashQLA", ctx.cu_seqlens_cpu, rs)
        return ctx

    def cp_forward(self, inp: GDNInputs, ctx: Any):
        (flash_qla, _), _ = _import()
        return flash_qla.chunk_gated_delta_rule(
            inp.q, inp.k, inp.v, inp.g, inp.beta, scale=inp.scale, initial_state=inp.h0,
            output_final_state=True, cu_seqlens=ctx.cu_seqlens, cp_context=ctx,
        )

    def cp_intra_active(self, ctx: Any) -> bool | None:
        return bool(getattr(ctx, "is_intra", False))


# The intra-card variants run no distributed points: `flash_qla` is FlashQLA's inter-card CP backend.
class FlashQLANoCP(FlashQLA):
    auto_cp = False


class FlashQLAForceCP(FlashQLA):
    force_intra_cp = True
