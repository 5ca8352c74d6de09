"""FlashInfer 0.7.4's GDN training route (`flashinfer-train`) on CPU, through run_point.

A stand-in module with `flashinfer.gdn_train`'s entry points and their documented semantics (q, k, v [1, T, H, D],
g log-space, beta after the sigmoid, no initial or final state, gradients returned as dq, dk, dv, dbeta, dg)
replaces the library. Every training mode must give an `ok` row checked against the oracle of the loss <o, do>
(`naive-recurrent-no-state`); a stand-in that swaps dbeta and dg is `incorrect`. Where `is_gdn_train_supported`
says no (the H200, SM90, on 0.7.4), the row is `skipped` with that answer; a point with an initial state is refused.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from qlabench.core.result import off_device
from qlabench.backends import REGISTRY
from qlabench.backends import flashinfer_train as ft
from qlabench.backends.reference import recurrent_gated_delta_rule
from qlabench.core.backend_decl import candidates, decl_of
from qlabench.core.decl_types import TRAINING_MODES
from qlabench.core.spec import parse_suite
from qlabench.measure import env as envmod
from qlabench.measure.timing import TimerPlan
from qlabench.run.point import MeasureContext, run_point


def fake_gdn_train(supported: bool = True, swap_dg_dbeta: bool = False) -> SimpleNamespace:
    def fwd(q, k, v, g, beta, ctx, scale):
        o, _ = recurrent_gated_delta_rule(q.float(), k.float(), v.float(), g, beta, scale=scale, cu_seqlens=ctx["cu"])
        return o.to(q.dtype)

    def kcp_partition(cu, world_size):
        assert cu.device.type == "cpu" and cu.dtype == torch.int64 and world_size == 1
        return {"cu": cu}

    def build_kcp_context(part, group, rank, device):
        assert group is None and rank == 0
        return {"cu": part["cu"].to(device)}

    def chunk_gdn_kcp(q, k, v, g, beta, ctx, *, scale=None):
        return fwd(q, k, v, g, beta, ctx, scale)

    def chunk_gdn_kcp_fwd(q, k, v, g, beta, ctx, *, scale=None):
        return fwd(q, k, v, g, beta, ctx, scale), {"saved": True}

    def chunk_gdn_kcp_bwd(q, k, v, g, beta, ctx, dout, *, saved=None, scale=None):
        leaves = [t.detach().requires_grad_(True) for t in (q, k, v, g, beta)]
        with torch.enable_grad():
            dq, dk, dv, dg, db = torch.autograd.grad(fwd(*leaves, ctx, scale), leaves, dout)
        return (dq, dk, dv, dg, db) if swap_dg_dbeta else (dq, dk, dv, db, dg)

    return SimpleNamespace(is_gdn_train_supported=lambda device=None: supported, kcp_partition=kcp_partition,
                           build_kcp_context=build_kcp_context, chunk_gdn_kcp=chunk_gdn_kcp,
                           chunk_gdn_kcp_fwd=chunk_gdn_kcp_fwd, chunk_gdn_kcp_bwd=chunk_gdn_kcp_bwd)


def _run(monkeypatch, module, mode, initial_state=False, layout="varlen"):
    monkeypatch.setattr(ft, "_import", lambda: (module, ""))
    monkeypatch.setattr(ft.FlashInferTrain, "devices", frozenset({"cpu", "cuda"}))  # the stand-in runs anywhere
    sweep = {"backends": ["flashinfer-train"], "modes": [mode], "heads": [{"h_qk": 1, "h_v": 2}], "K": 128, "V": 128,
             "dtype": "bfloat16", "gate": "flashqla", "initial_state": initial_state}
    sweep.update({"varlen": [[24, 40]]} if layout == "varlen" else {"batch": [2], "seqlen": [32]})
    s = parse_suite({"name": "ft", "device": "cpu", "sweep": sweep,
                     "timing": {"timer": "wall", "warmup": 0, "min_samples": 2, "max_samples": 2}}, "ft.toml")
    ctx = MeasureContext(suite=s, device="cpu", env=envmod.capture("cpu"), run_id="r",
                         timer=TimerPlan.resolve("wall", "cpu", s.timing), registry=REGISTRY, check=True)
    return run_point(s.points[0], ctx)


@pytest.mark.parametrize("mode", sorted(TRAINING_MODES))
def test_every_training_mode_is_checked_against_the_oracle_without_a_final_state(monkeypatch, mode):
    row = _run(monkeypatch, fake_gdn_train(), mode)
    assert row.status == "ok", row.reason
    assert row.oracle.startswith("naive-recurrent-no-state ") and row.err_o < 0.02 and row.err_ht is None
    if mode != "fwd":
        assert max(row.err_dq, row.err_dk, row.err_dv, row.err_dg, row.err_dbeta) < 0.03


def test_a_dense_batch_is_packed_and_its_gradients_come_back_in_its_shape(monkeypatch):
    row = _run(monkeypatch, fake_gdn_train(), "fwd_bwd", layout="dense")
    assert row.status == "ok", row.reason


def test_gradients_returned_in_the_wrong_order_are_incorrect(monkeypatch):
    row = _run(monkeypatch, fake_gdn_train(swap_dg_dbeta=True), "bwd_train")
    assert row.status == "incorrect" and row.median_ms is None and "dg" in row.reason


def test_where_is_gdn_train_supported_says_no_the_row_is_skipped_with_its_answer(monkeypatch):
    row = _run(monkeypatch, fake_gdn_train(supported=False), "fwd_bwd")
    assert row.status == "skipped" and row.reason.startswith("unsupported: not supported on ")
    assert "is_gdn_train_supported('cpu') returned False" in row.reason
    assert off_device(row.status, row.reason)  # a view reads it as "does not run on this GPU", at every point


def test_the_reason_on_the_h200_names_sm90_the_version_and_the_check():
    assert ft.unsupported_reason(False, "cuda:0", (9, 0), "0.7.4") == (
        "not supported on SM90 by flashinfer 0.7.4: is_gdn_train_supported('cuda:0') returned False")
    assert ft.unsupported_reason(True, "cuda:0", (10, 0), "0.7.4") == ""


def test_a_point_with_an_initial_state_is_refused(monkeypatch):
    row = _run(monkeypatch, fake_gdn_train(), "fwd_bwd", initial_state=True)
    assert row.status == "skipped" and "zero state" in row.reason


def test_without_the_training_module_it_is_unavailable_with_the_reason(monkeypatch):
    ft._import.cache_clear()
    ok, why = REGISTRY["flashinfer-train"].available()
    assert not ok and why  # no flashinfer here (or no CUDA): said, not hidden
    ft._import.cache_clear()


def test_declared_as_a_training_candidate_of_flashinfer():
    d = decl_of("flashinfer-train")
    assert d.library == "flashinfer" and d.modes == TRAINING_MODES and "flashinfer-train" in candidates("train")
    assert "flashinfer-train" not in candidates("prefill")
    assert REGISTRY["flashinfer-train"].oracle == "naive-recurrent-no-state" and not REGISTRY["flashinfer-train"].graph_capturable


def test_installed_but_without_cuda_it_says_it_needs_a_gpu(monkeypatch):
    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is visible")
    monkeypatch.setattr(ft, "package_missing", lambda *a, **kw: None)  # as if flashinfer were installed
    ft._import.cache_clear()
    try:
        assert REGISTRY["flashinfer-train"].available() == (False, "needs a CUDA GPU (none visible)")
    finally:
        ft._import.cache_clear()
