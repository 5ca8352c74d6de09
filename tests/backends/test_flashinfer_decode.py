"""FlashInfer 0.7.2's decode / mtp backends on CPU: their conversions, through the row pipeline.

FlashInfer's serving kernels take the raw gate projections (A_log, a, dt_bias, b) and a pool in their own
layout. A stand-in with the kernels' documented semantics (no checks of its own: like the kernels, it
computes whatever it is handed) replaces `flashinfer.gdn_decode`; called through qlabench's conversion
the rows are `ok`, and a conversion that skips a step comes out `incorrect`, never timed.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from qlabench.backends import REGISTRY
from qlabench.backends import flashinfer_decode as fid
from qlabench.backends.reference import recurrent_gated_delta_rule
from qlabench.core.point import Point

pytestmark = pytest.mark.skipif(not hasattr(Point, "is_serving"), reason="needs the serving Point axes")


def _recur(q, k, v, A_log, a, dt_bias, b, scale, h0_kv):
    """The kernels' math: gates from the raw projections, then the fp32 recurrence from [B, HV, K, V]."""
    g, beta = fid.kernel_gates(A_log, a, dt_bias, b)
    o, ht = recurrent_gated_delta_rule(q.float(), k.float(), v.float(), g, beta, scale=scale, initial_state=h0_kv)
    return o.to(torch.bfloat16), ht


def _decode(q, k, v, state, A_log, a, dt_bias, b, scale=None, output=None, use_qk_l2norm=True, backend="auto"):
    """gated_delta_rule_decode: dense state [B, HV, K, V] fp32, updated in place."""
    assert not use_qk_l2norm and q.shape[1] == 1 and state.dtype == torch.float32
    o, ht = _recur(q, k, v, A_log, a, dt_bias, b, scale, state)
    state.copy_(ht)
    return o, state


def _pretranspose(q, k, v, state, A_log, a, dt_bias, b, scale=None, output=None, use_qk_l2norm=True,
                  initial_state=None, initial_state_indices=None, disable_state_update=False, backend="auto"):
    """gated_delta_rule_decode_pretranspose in pool mode: pool [P, HV, V, K], read and written at the indices."""
    assert not use_qk_l2norm and state is None and not disable_state_update
    idx = initial_state_indices.long()
    o, ht = _recur(q, k, v, A_log, a, dt_bias, b, scale, initial_state[idx].float().transpose(-1, -2))
    initial_state[idx] = ht.transpose(-1, -2).to(initial_state.dtype)
    return o, initial_state


def _mtp(q, k, v, initial_state, initial_state_indices, A_log, a, dt_bias, b, scale=None, output=None,
         disable_state_update=None, use_qk_l2norm=True):
    assert disable_state_update is False and initial_state.dtype == torch.float32
    return _pretranspose(q, k, v, None, A_log, a, dt_bias, b, scale, output, use_qk_l2norm,
                         initial_state, initial_state_indices)


STAND_IN = SimpleNamespace(gated_delta_rule_decode=_decode, gated_delta_rule_decode_pretranspose=_pretranspose,
                           gated_delta_rule_mtp=_mtp)


def rows(monkeypatch, tmp_path, backend, mode="decode", T=1, layouts=("kv", "vk"), state_dtype="float32", **extra):
    from qlabench.core.spec import parse_suite
    from qlabench.run.options import InProcess, RunOptions
    from qlabench.run.sweep import run_sweep

    monkeypatch.setattr(fid, "_import", lambda: (STAND_IN, ""))
    for b in fid.serving_backends():
        monkeypatch.setattr(type(b), "devices", frozenset({"cpu", "cuda"}))  # the stand-in runs anywhere
    sweep = {"backends": [backend], "modes": [mode], "batch": [3], "seqlen": [T], "heads": [{"h_qk": 1, "h_v": 2}],
             "K": 128, "V": 128, "dtype": "bfloat16", "state_layout": list(layouts), "state_dtype": [state_dtype],
             **extra}
    s = parse_suite({"name": "fi7", "device": "cpu", "sweep": sweep,
                     "timing": {"timer": "wall", "warmup": 0, "min_samples": 2, "max_samples": 2}})
    return run_sweep(s, tmp_path, RunOptions(executor=InProcess(REGISTRY))).rows


@pytest.mark.parametrize("backend,mode,T,layout,state_dtype", [
    ("flashinfer-decode", "decode", 1, "kv", "float32"),
    ("flashinfer-decode-pt", "decode", 1, "vk", "float32"),
    ("flashinfer-decode-pt", "decode", 1, "vk", "bfloat16"),
    ("flashinfer-decode-pt", "mtp", 4, "vk", "bfloat16"),
    ("flashinfer-mtp", "mtp", 3, "vk", "float32"),
])
def test_called_the_qlabench_way_each_is_checked_and_timed(monkeypatch, tmp_path, backend, mode, T, layout,
                                                           state_dtype):
    (r,) = rows(monkeypatch, tmp_path, backend, mode, T, (layout,), state_dtype)
    assert r.status == "ok", r.reason
    assert r.median_ms is not None and r.err_o < 0.02 and r.err_pool == 0.0


@pytest.mark.parametrize("backend,mode,T", [("flashinfer-decode", "decode", 1), ("flashinfer-mtp", "mtp", 2)])
def test_passing_g_where_the_kernel_takes_a_is_incorrect(monkeypatch, tmp_path, backend, mode, T):
    """The conversion an adapter forgets: log-space g handed over as the raw decay input `a`."""
    real = fid.kernel_args

    def g_as_a(inp):
        x = real(inp)
        x.a = inp.g.to(torch.bfloat16).contiguous()
        return x

    monkeypatch.setattr(fid, "kernel_args", g_as_a)
    layout = "kv" if backend == "flashinfer-decode" else "vk"
    (r,) = rows(monkeypatch, tmp_path, backend, mode, T, (layout,))
    assert r.status == "incorrect" and r.median_ms is None, r.reason


def test_passing_post_sigmoid_beta_as_b_is_incorrect(monkeypatch, tmp_path):
    real = fid.kernel_args

    def beta_as_b(inp):
        x = real(inp)
        x.b = inp.beta.to(torch.bfloat16).contiguous()  # the kernel applies sigmoid again
        return x

    monkeypatch.setattr(fid, "kernel_args", beta_as_b)
    (r,) = rows(monkeypatch, tmp_path, "flashinfer-decode-pt", layouts=("vk",))
    assert r.status == "incorrect" and r.median_ms is None, r.reason


def test_the_raw_gates_give_back_g_and_beta():
    g = torch.tensor([[[0.0, -1e-4, -0.5, -3.0, -30.0]]])
    beta = torch.tensor([[[1e-3, 0.05, 0.5, 0.95, 0.999]]])
    A_log, a, dt_bias, b = fid.raw_gates(g, beta)
    assert a.dtype == b.dtype == torch.bfloat16 and A_log.dtype == dt_bias.dtype == torch.float32
    g2, beta2 = fid.kernel_gates(A_log, a, dt_bias, b)
    assert torch.isfinite(g2).all() and (g2 <= 0).all()
    assert torch.allclose(g2, g, rtol=0.02, atol=1e-6) and torch.allclose(beta2, beta, rtol=0.01, atol=1e-6)
    # unrounded (fp32) the inversion is exact to float precision
    g3, beta3 = fid.kernel_gates(*fid.raw_gates(g, beta, torch.float32))
    assert torch.allclose(g3, g, rtol=1e-5, atol=1e-7) and torch.allclose(beta3, beta, rtol=1e-4)


def _point(backend, **kw):
    base = dict(backend=backend, mode="decode", layout="dense", batch=2, seqlens=(1, 1), h_qk=1, h_v=2, K=128, V=128,
                dtype="bfloat16", state_dtype="float32", state_layout="vk", pool=4)
    base.update(kw)
    return Point(**base)


@pytest.mark.parametrize("backend,kw,why", [
    ("flashinfer-decode-pt", {"state_layout": "kv"}, "state_layout"),
    ("flashinfer-decode", {"state_layout": "vk"}, "state_layout"),
    ("flashinfer-mtp", {"mode": "mtp", "seqlens": (2, 2), "state_dtype": "bfloat16"}, "bfloat16"),
    ("flashinfer-decode-pt", {"K": 64, "V": 64}, "K, V >= 128"),
    ("flashinfer-decode-pt", {"dtype": "float16", "state_dtype": "float32"}, "float16"),
])
def test_points_a_kernel_cannot_take_are_refused_with_the_reason(monkeypatch, backend, kw, why):
    monkeypatch.setattr(fid, "_import", lambda: (STAND_IN, ""))
    b = REGISTRY[backend]
    monkeypatch.setattr(type(b), "devices", frozenset({"cpu", "cuda"}))
    ok, reason = b.supports(_point(backend, **kw), "cpu")
    assert not ok and why in reason, reason


def test_without_the_cute_dsl_kernels_the_backends_say_why():
    gd = SimpleNamespace(gated_delta_rule_mtp=_mtp, _NONTRANSPOSE_AVAILABLE=True, _PRETRANSPOSE_AVAILABLE=False,
                         _MTP_AVAILABLE=False)
    why = fid.kernels_missing(gd)
    assert "nvidia-cutlass-dsl" in why and "_MTP_AVAILABLE" in why
    assert "0.7.2" in fid.kernels_missing(SimpleNamespace())  # 0.6.13 has no gated_delta_rule_mtp
    assert fid.kernels_missing(SimpleNamespace(gated_delta_rule_mtp=_mtp)) == ""


def test_provenance_names_the_cute_dsl_kernels_and_nothing_of_flashqla_or_fla():
    b = REGISTRY["flashinfer-mtp"]
    mtp = "kernel_cutlass_gdn_verify_kernel_mtp_tensorptrbf16_0"
    assert b.provenance_error([mtp]) is None
    assert "launched no" in b.provenance_error(["kernel_cutlass_gdn_decode_kernel_big_batch_pretranspose_0"])
    assert "provenance mismatch" in b.provenance_error([mtp, "fused_recurrent_gated_delta_rule_fwd_kernel"])
