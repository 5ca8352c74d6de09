"""FLA's Triton kernels (package fla-core 0.6.0): the chunked op and the fused recurrence.

fla-core 0.6 routes `chunk_gated_delta_rule` to FlashQLA whenever flash_qla is importable on SM90/100
(backend FlashQLABackend, on by default). The switch (FLA_FLASH_QLA) is read from the environment on
every call, so this backend turns it off in the process before it runs anything; the provenance check
then proves from the launched kernel names that no FlashQLA (`tilelang_*`) kernel ran.

FLA's own TileLang kernel for the backward's dq/dk/dw/dg step (FLA_TILELANG, CUDA name `kernel_kernel`)
stays on: with Triton 3.4-3.7.0 on Hopper, fla-core refuses to run that step in Triton because Triton
miscompiles it (fla issue #640), so on the H200 stack this kernel *is* FLA's backward.
`fla-dispatch-on` leaves FLA's defaults alone: it exists so a test can show that the provenance check
catches a mis-dispatched "FLA" row.

The backward modes of `fla` time FLA's low-level `chunk_gated_delta_rule_bwd` alone, after one
forward (`chunk_gated_delta_rule_fwd`) outside the timed region:
- bwd: the published call, `chunk_gated_delta_rule_bwd(q, k, v, g_cumsum, beta, A, scale, h0, do, dht,
  cu_seqlens=cu_seqlens)` (FlashQLA's `bench_bwd`): FLA works out its chunk indices itself (cached by
  tensor identity, so only the first call pays for it).
- bwd_train: what autograd's `ChunkGatedDeltaRuleFunction.backward` hands the same function in a
  training step: also the forward's `chunk_indices`. FLA keeps nothing else for its backward (its own
  intra-card CP is off here), so the two time the same kernels.
FlashQLA's table feeds FLA's backward *FlashQLA's* g-cumsum and A. Both have the shapes and dtypes
FLA expects ([B, T, HV] fp32 and [B, T, HV, 64] in q's dtype), but not its conventions: FLA (0.5.1,
the table's, and 0.6.0) keeps g-cumsum in log2 space (`chunk_local_cumsum(..., scale=RCP_LN2)`) and A
as the *gated* (I + beta K K^T * exp(G_i - G_j))^-1 (`chunk_gated_delta_rule_fwd_intra`), while
FlashQLA's are the natural-log cumsum and the ungated `kkt_solve(k, beta)`. Fed those, FLA's backward
runs the same kernels on the same shapes (Triton's work does not depend on the values) but returns
wrong gradients, which the oracle check rejects. So both modes feed FLA's own intermediates: the
timed work is the published column's, with correct results.
`fla` also runs distributed points (cp mode fla-cp) through FLA's own inter-card CP context
(fla.ops.cp, backends/cp/__init__.py).

`fla-intracp` is FLA's own intra-card context parallelism (FLA_INTRACARD_CP=1; fla/ops/common/
intracard_cp.py): FLA cuts a long sequence into sub-sequences at chunk boundaries, summarises each with a
pre-scan, merges the summaries into their initial states and runs the sub-sequences side by side. FLA
does this only under torch.inference_mode(), only with cu_seqlens, and only for a sequence at least three
sub-sequence lengths long (at most FLA_INTRACARD_MAX_SPLITS = 32 pieces); otherwise the same call runs
unsplit. It reads cu_seqlens on the host on every call, so it cannot be captured in a CUDA graph: its
points are timed with CUDA events (`graph_capturable`). Whether the split ran is read from the kernels
the row launched (INTRACARD_KERNELS) and recorded in the row's extra_json (`intracard_cp`).
"""

from __future__ import annotations

import os
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
from qlabench.backends.decode import ServingSteps
from qlabench.backends.cp import RankSetup, check_local_cu

DISPATCH_OFF = {"FLA_FLASH_QLA": "0", "FLA_INTRACARD_CP": "0"}
DISPATCH_DEFAULT = {"FLA_FLASH_QLA": "1", "FLA_INTRACARD_CP": "0"}
DISPATCH_INTRACARD = {"FLA_FLASH_QLA": "0", "FLA_INTRACARD_CP": "1"}
# Launched by FLA's intra-card CP only when it splits a call: the pre-scan that summarises each
# sub-sequence (`chunk_cp_fwd_h`) and the merge of those summaries into initial states. (FLA's
# inter-card CP launches them too, but `fla-intracp` runs no distributed point.)
INTRACARD_KERNELS = (kernel_event.FLA_CP_MARK, "chunk_cp_fwd_bwd_kernel_merge")
CHUNK = 64  # FLA's chunk size for the gated delta rule (chunk_gated_delta_rule's default)
# Every FlashQLA kernel is named `tilelang_*` (FLA's own TileLang dqkwg kernel is `kernel_kernel`).
FLASHQLA_KERNELS = ("tilelang_",)


@lru_cache(maxsize=1)
def _import():
    cache.configure()  # before fla/triton are imported: they may read their cache dirs at import
    why = package_missing("fla", "fla-core") or package_missing("triton", "triton") or needs_cuda()
    if why:
        return None, why
    try:
        from fla.ops.gated_delta_rule import chunk as fchunk
        from fla.ops.gated_delta_rule import fused_recurrent_gated_delta_rule
        from fla.ops.utils.index import prepare_chunk_indices
    except Exception as e:
        return None, f"import fla failed: {type(e).__name__}: {e}"
    return (fchunk, fused_recurrent_gated_delta_rule, prepare_chunk_indices), ""


class _FLABase(Backend):
    forbid_kernels = FLASHQLA_KERNELS
    env = DISPATCH_OFF

    def available(self) -> tuple[bool, str]:
        mods, why = _import()
        return mods is not None, why

    def check_point(self, point: Point, device: str) -> tuple[bool, str]:
        if point.K > 256:
            return False, f"FLA's chunk kernels need K <= 256 (got {point.K})"
        if point.layout == "varlen" and point.batch != 1:
            return False, "varlen needs batch 1 with cu_seqlens"
        return True, ""

    def prepare(self, mode: str, inp: GDNInputs) -> Callable[[], Outputs]:
        # Process-wide on purpose: FLA reads these on every call, and setting them once here keeps
        # the environment lookups out of the timed region.
        os.environ.update(self.env)
        return self._prepare(mode, inp)

    def _prepare(self, mode: str, inp: GDNInputs) -> Callable[[], Outputs]:
        return super().prepare(mode, inp)


class FLAChunk(_FLABase):
    cp_reference = "fla"
    cp_final_state = False  # FLA's CP returns no final state

    def forward(self, inp: GDNInputs) -> tuple[torch.Tensor, torch.Tensor]:
        (fchunk, _, _), _ = _import()
        return fchunk.chunk_gated_delta_rule(
            inp.q, inp.k, inp.v, inp.g, inp.beta, scale=inp.scale, initial_state=inp.h0,
            output_final_state=True, cu_seqlens=inp.cu_seqlens,
        )

    def _prepare(self, mode: str, inp: GDNInputs) -> Callable[[], Outputs]:
        if mode not in ("bwd", "bwd_train"):
            return super()._prepare(mode, inp)
        # Backward alone, through FLA's own low-level pair, fed FLA's own forward intermediates (log2
        # g-cumsum and the gated A; FlashQLA's are neither, see the module docstring).
        (fchunk, _, prep_idx), _ = _import()
        ci = prep_idx(inp.cu_seqlens, 64) if inp.cu_seqlens is not None else None
        g_cs, o, A, ht, _, _ = fchunk.chunk_gated_delta_rule_fwd(
            inp.q, inp.k, inp.v, inp.g, inp.beta, inp.scale, inp.h0, True, cu_seqlens=inp.cu_seqlens,
            chunk_indices=ci,
        )
        # bwd: the published call passes no chunk_indices; bwd_train: autograd passes the forward's.
        extra = {"chunk_indices": ci} if mode == "bwd_train" else {}

        def run_bwd() -> Outputs:
            dq, dk, dv, db, dg, dh0, *_ = fchunk.chunk_gated_delta_rule_bwd(
                inp.q, inp.k, inp.v, g_cs, inp.beta, A, inp.scale, inp.h0, inp.do, inp.dht,
                cu_seqlens=inp.cu_seqlens, **extra,
            )
            return backward_outputs(o, ht, dq, dk, dv, dg, db, dh0)

        return run_bwd

    # -- inter-card CP ---------------------------------------------------------------------------
    def cp_available(self) -> tuple[bool, str]:
        ok, why = self.available()
        if not ok:
            return False, why
        try:
            import fla.ops.cp  # noqa: F401
        except Exception as e:
            return False, f"fla.ops.cp missing: {type(e).__name__}: {e}"
        return True, ""

    def cp_check_point(self, point: Point, device: str) -> tuple[bool, str]:
        if point.initial_state:
            return False, ("FLA's CP takes no initial state (chunk_gated_delta_rule asserts initial_state is None "
                           "under cp_context): use initial_state = false")
        return self.check_point(point, device)

    def cp_setup(self, point: Point, rs: RankSetup) -> Any:
        os.environ.update(self.env)  # as in prepare: FLA reads its dispatch switches on every call
        from fla.ops.cp import build_cp_context

        ctx = build_cp_context(rs.global_cu, group=rs.group)
        check_local_cu("FLA", ctx.cu_seqlens_cpu, rs)
        return ctx

    def cp_forward(self, inp: GDNInputs, ctx: Any):
        (fchunk, _, _), _ = _import()
        o, _ = fchunk.chunk_gated_delta_rule(
            inp.q, inp.k, inp.v, inp.g, inp.beta, scale=inp.scale, initial_state=None,
            output_final_state=False, cp_context=ctx,
        )
        return o, None


class FLADispatchOn(FLAChunk):
    env = DISPATCH_DEFAULT


class FLARecurrent(ServingSteps, _FLABase):
    """FLA's fused recurrence: a forward over whole sequences, and the serving step (decode, mtp).

    fla-core 0.6.0's `fused_recurrent_gated_delta_rule` takes the batch's states as a dense
    `initial_state` and returns the final ones; it has no slot-indexed pool. So its serving step is what an
    engine calling it does: gather the batch's states from the pool, run the kernel, scatter the final
    states back (`index_select`, the kernel, `index_copy_`: three launches, and the gather/scatter traffic
    counts against its fraction of the bandwidth limit). Both pool layouts: "vk" through the kernel's
    `state_v_first`. Its final state is float32; a bfloat16 pool gets it rounded on the way back.
    """

    slot_dtype = torch.int64  # index_copy_ takes int64 indices; converted once, outside the timed call
    expect_kernels = ("fused_recurrent_gated_delta_rule_fwd_kernel",)

    def forward(self, inp: GDNInputs) -> tuple[torch.Tensor, torch.Tensor]:
        (_, fused_recurrent, _), _ = _import()
        # beta by keyword: the fifth positional parameter is `gk`.
        return fused_recurrent(
            inp.q, inp.k, inp.v, g=inp.g, beta=inp.beta, scale=inp.scale, initial_state=inp.h0,
            output_final_state=True, cu_seqlens=inp.cu_seqlens,
        )

    def step(self, inp: GDNInputs, pool: torch.Tensor, slots: torch.Tensor) -> torch.Tensor:
        (_, fused_recurrent, _), _ = _import()
        o, ht = fused_recurrent(
            inp.q, inp.k, inp.v, g=inp.g, beta=inp.beta, scale=inp.scale, initial_state=pool.index_select(0, slots),
            output_final_state=True, state_v_first=inp.state_layout == "vk",
        )
        pool.index_copy_(0, slots, ht.to(pool.dtype))
        return o

class FLAIntraCP(FLAChunk):
    env = DISPATCH_INTRACARD
    graph_capturable = False  # FLA reads cu_seqlens on the host inside every call

    def check_point(self, point: Point, device: str) -> tuple[bool, str]:
        if point.layout != "varlen":
            return False, ("FLA's intra-card CP splits only varlen calls (cu_seqlens); a dense point would run "
                           "plain `fla`: pack it as varlen (one sequence as varlen = [[T]])")
        return super().check_point(point, device)

    def _prepare(self, mode: str, inp: GDNInputs) -> Callable[[], Outputs]:
        run = super()._prepare(mode, inp)

        def run_inference() -> Outputs:
            with torch.inference_mode():  # FLA's intra-card CP is off outside inference mode
                return run()

        run_inference.intracard_plan = split_plan(inp)  # read back by point_details
        return run_inference

    def point_details(self, fn, kernels, kernel_dur_us, median_ms, time_ms) -> dict:
        return {"intracard_cp": intracard_evidence(kernels, getattr(fn, "intracard_plan", None))}


def split_plan(inp: GDNInputs) -> dict:
    """How FLA's own planner splits this call (fla.ops.common.intracard_cp, the functions its CP path calls,
    on this device's SM count): the sub-sequence length and how many sub-sequences it makes (0: unsplit).
    FLA's private API: on a version without it, the reason instead."""
    try:
        from fla.ops.common import intracard_cp as icp
        from fla.ops.common.backends.intracard import MAX_SUBSEQS
        from fla.utils import get_multiprocessor_count

        cu = inp.cu_seqlens.cpu()
        lens = torch.diff(cu)
        sub_len = icp.compute_subseq_len(seq_len=int(lens.max()), num_sms=get_multiprocessor_count(),
                                         num_heads=inp.v.shape[2], chunk_size=CHUNK)
        n_sub = 0
        if not bool((lens < 2 * sub_len).all()):  # FLA's early return
            _, info, _ = icp.prepare_subseq_cu_seqlens(cu, sub_len, CHUNK, MAX_SUBSEQS)
            n_sub = sum(info.num_subseqs) if info else 0
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"[:200]}
    return {"subseq_len": sub_len, "max_splits": MAX_SUBSEQS, "subsequences": n_sub}


def intracard_evidence(kernels: tuple[str, ...], plan: dict | None = None) -> dict:
    """Whether FLA's intra-card split ran in a traced call, from the kernels it launched; never claimed
    without them. `plan` (split_plan) adds what FLA's planner decided, and says when the two disagree."""
    launched = sorted({k for k in INTRACARD_KERNELS if any(str(n).startswith(k) for n in kernels)})
    out: dict = {"kernels_launched": launched}
    if plan:
        out["plan"] = plan
    if not kernels:
        out.update(engaged=None, note="kernels not recorded: whether intra-card CP engaged is unknown")
        return out
    engaged = INTRACARD_KERNELS[0] in launched  # the pre-scan runs whenever FLA splits
    n_sub = (plan or {}).get("subsequences")
    if engaged:
        pieces = f" into {n_sub} sub-sequences" if n_sub else ""
        note = f"intra-card CP engaged: FLA split the call{pieces} (launched {', '.join(launched)})"
    else:
        note = ("intra-card CP did not engage: FLA ran the call unsplit (no pre-scan kernel launched); it splits "
                "only a sequence at least three sub-sequence lengths long")
        if plan and "subseq_len" in plan:
            note += f" ({3 * plan['subseq_len']} tokens here)"
    if n_sub is not None and bool(n_sub) != engaged:
        note += f"; FLA's planner said {n_sub} sub-sequences: the kernels and the plan disagree"
    out.update(engaged=engaged, note=note)
    return out
