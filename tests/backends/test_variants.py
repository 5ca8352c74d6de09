"""The backward variants (bwd vs bwd_train) and the FlashInfer backend, on CPU.

The library backends cannot run here, so their call plumbing is tested against stand-ins for the
libraries' low-level functions: each stand-in records what it was handed and computes its outputs with
the plain-PyTorch references, so a mis-ordered output (FLA and FlashQLA return dbeta before dg) or a
wrongly converted input (FlashInfer's linear alpha and transposed states) fails the oracle comparison.
The real calls run in tests/gpu/test_backends_gpu.py.
"""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace

import pytest
import torch

from qlabench.measure.timing import TimerPlan
from qlabench.backends import REGISTRY
from qlabench.backends import fla as fla_mod
from qlabench.backends import flash_qla as qla_mod
from qlabench.backends import flashinfer as fi_mod
from qlabench.backends.naive import NaiveChunk, NaiveRecurrent
from qlabench.backends.reference import recurrent_gated_delta_rule
from qlabench.core.flops import bytes_moved, flops
from qlabench.core.point import MODES, Point
from qlabench.core.spec import parse_suite
from qlabench.measure import env as envmod
from qlabench.measure.correctness import compare
from qlabench.measure.inputs import GDNInputs, make_inputs
from qlabench.run.point import MeasureContext, run_point


def point(**kw) -> Point:
    base = dict(backend="flash_qla", mode="bwd", layout="varlen", batch=1, seqlens=(20, 12), h_qk=2, h_v=4, K=8,
                V=8, dtype="float32", gate="flashqla")
    base.update(kw)
    if base["layout"] == "dense":
        base["batch"] = len(base["seqlens"])
    return Point(**base)


def oracle(inp: GDNInputs) -> dict:
    return NaiveRecurrent().prepare("fwd_bwd", inp)()


def reference_grads(q, k, v, g, beta, h0, do, dht, scale, cu) -> dict:
    inp = GDNInputs(q=q, k=k, v=v, g=g, beta=beta, h0=h0, cu_seqlens=cu, scale=scale, do=do, dht=dht)
    return NaiveChunk().prepare("fwd_bwd", inp)()


def assert_matches_oracle(got: dict, inp: GDNInputs):
    errors, failure = compare(got, oracle(inp), "float32")
    assert failure is None, (failure, errors)
    assert set(errors) >= {"o", "ht", "dq", "dk", "dv", "dg", "dbeta", "dh0"}


# -- mode bwd_train exists everywhere bwd does -----------------------------------------------------------


def test_bwd_train_is_a_mode():
    assert "bwd_train" in MODES
    for b in REGISTRY.values():
        if "bwd" in b.modes:
            assert "bwd_train" in b.modes, b.name


def test_flops_and_bytes_count_bwd_train_as_a_backward():
    p = point()
    assert flops(p.with_(mode="bwd_train")) == flops(p) > 0
    assert bytes_moved(p.with_(mode="bwd_train")) == bytes_moved(p)
    assert flops(p.with_(mode="fwd_bwd")) > flops(p)


@pytest.mark.parametrize("mode", ["bwd", "bwd_train"])
def test_autograd_backends_run_both_backward_modes(mode):
    s = parse_suite({"name": "b", "device": "cpu",
                     "sweep": {"backends": ["naive-chunk"], "modes": [mode], "varlen": [[20, 12]],
                               "heads": [{"h_qk": 1, "h_v": 2}], "K": 8, "V": 8, "dtype": "float32",
                               "gate_zero_frac": 0.5},
                     "timing": {"timer": "wall", "warmup": 0, "min_samples": 2, "max_samples": 2},
                     "check": {"oracle_max_tokens": 32}}, "b.toml")
    ctx = MeasureContext(suite=s, device="cpu", env=envmod.capture("cpu"), run_id="r", timer=TimerPlan.resolve("wall", "cpu", s.timing),
                         registry={b.name: b for b in (NaiveRecurrent(), NaiveChunk())}, check=True)
    row = run_point(s.points[0], ctx)
    assert row.status == "ok", row.reason
    assert row.mode == mode and row.gate_zero_frac == 0.5
    assert row.err_dg is not None and row.err_dg < 1e-4


# -- FlashQLA: bwd = the published call, bwd_train = the training call -----------------------------------


class FakeFlashQLA:
    """Stand-in for flash_qla.ops.gated_delta_rule.chunk: records calls, computes with the references."""

    CHUNK_SIZE = 64

    def __init__(self):
        self.calls = []

    def _auto_intra_cp_context(self, k, v, cu_seqlens, chunk_size, auto_cp, is_train, force_intra_cp=False):
        ctx = SimpleNamespace(is_intra=bool(auto_cp), auto_cp=auto_cp, is_train=is_train, force=force_intra_cp)
        self.calls.append(("context", dict(auto_cp=auto_cp, is_train=is_train, force_intra_cp=force_intra_cp)))
        return ctx

    def chunk_gated_delta_rule_fwd(self, q, k, v, g, beta, scale=None, initial_state=None, cu_seqlens=None,
                                   output_final_state=True, output_h=False, auto_cp=True, state_v_first=False,
                                   enable_fwd_cp_cache=False, cp_context=None, is_train=None):
        self.raw = (q, k, v, g, beta, initial_state, scale, cu_seqlens)
        kw = dict(auto_cp=auto_cp, enable_fwd_cp_cache=enable_fwd_cp_cache, cp_context=cp_context, is_train=is_train)
        self.calls.append(("fwd", kw))
        o, ht = recurrent_gated_delta_rule(q, k, v, g, beta, scale=scale, initial_state=initial_state,
                                           cu_seqlens=cu_seqlens)
        self.g_cs, self.A = g.cumsum(1), torch.zeros(1)  # stand-ins: identity is what is checked
        self.cache = object() if enable_fwd_cp_cache else None
        return self.g_cs, self.A, o, None, ht, self.cache

    def chunk_gated_delta_rule_bwd(self, q, k, v, g, beta, A, do, dht=None, scale=None, initial_state=None,
                                   cu_seqlens=None, state_v_first=False, auto_cp=True, cp_cache=None, cp_context=None):
        assert g is self.g_cs and A is self.A, "the backward must be fed the forward's g-cumsum and A"
        self.calls.append(("bwd", dict(auto_cp=auto_cp, cp_cache=cp_cache, cp_context=cp_context)))
        rq, rk, rv, rg, rbeta, rh0, rscale, rcu = self.raw
        r = reference_grads(rq, rk, rv, rg, rbeta, rh0, do, dht, rscale, rcu)
        return r["dq"], r["dk"], r["dv"], r["dbeta"], r["dg"], r["dh0"]  # FlashQLA's order: db before dg


@pytest.fixture
def fake_qla(monkeypatch):
    fake = FakeFlashQLA()
    monkeypatch.setattr(qla_mod, "_import", lambda: ((SimpleNamespace(), fake), ""))
    return fake


def calls(fake, kind):
    return [kw for k, kw in fake.calls if k == kind]


def prepared(backend, mode, p):
    inp = make_inputs(p)
    fn = REGISTRY[backend].prepare(mode, inp)
    return fn, inp


def test_flash_qla_bwd_is_the_published_call(fake_qla):
    fn, inp = prepared("flash_qla", "bwd", point())
    assert calls(fake_qla, "context") == []  # the benchmark builds none: the backward decides CP itself
    (fwd,) = calls(fake_qla, "fwd")
    assert fwd == dict(auto_cp=True, enable_fwd_cp_cache=False, cp_context=None, is_train=None)
    for _ in range(2):
        assert_matches_oracle(fn(), inp)
    assert calls(fake_qla, "bwd") == [dict(auto_cp=True, cp_cache=None, cp_context=None)] * 2


def test_flash_qla_nocp_bwd_passes_auto_cp_off(fake_qla):
    fn, inp = prepared("flash_qla-nocp", "bwd", point())
    assert_matches_oracle(fn(), inp)
    assert calls(fake_qla, "fwd")[0]["auto_cp"] is False
    assert calls(fake_qla, "bwd") == [dict(auto_cp=False, cp_cache=None, cp_context=None)]


def test_flash_qla_forcecp_bwd_forces_the_split_without_a_cache(fake_qla):
    fn, inp = prepared("flash_qla-forcecp", "bwd", point())
    assert_matches_oracle(fn(), inp)
    assert calls(fake_qla, "context") == [dict(auto_cp=True, is_train=True, force_intra_cp=True)]
    ctx = calls(fake_qla, "fwd")[0]["cp_context"]
    assert ctx is not None and ctx.force
    assert calls(fake_qla, "bwd") == [dict(auto_cp=True, cp_cache=None, cp_context=ctx)]


@pytest.mark.parametrize("backend,force", [("flash_qla", False), ("flash_qla-forcecp", True)])
def test_flash_qla_bwd_train_hands_over_context_and_cache(fake_qla, backend, force):
    fn, inp = prepared(backend, "bwd_train", point())
    assert calls(fake_qla, "context") == [dict(auto_cp=True, is_train=True, force_intra_cp=force)]
    (fwd,) = calls(fake_qla, "fwd")
    assert fwd["is_train"] is True and fwd["enable_fwd_cp_cache"] is True and fwd["cp_context"] is not None
    assert_matches_oracle(fn(), inp)
    (bwd,) = calls(fake_qla, "bwd")
    assert bwd["cp_cache"] is fake_qla.cache is not None and bwd["cp_context"] is fwd["cp_context"]


def test_flash_qla_nocp_bwd_train_has_no_cache(fake_qla):
    fn, inp = prepared("flash_qla-nocp", "bwd_train", point())
    assert_matches_oracle(fn(), inp)
    (bwd,) = calls(fake_qla, "bwd")
    assert bwd["cp_cache"] is None and bwd["auto_cp"] is False


# -- FLA: both modes feed FLA's own intermediates; bwd_train also its chunk indices ----------------------


class FakeFLAChunk:
    """Stand-in for fla.ops.gated_delta_rule.chunk's low-level pair."""

    def __init__(self):
        self.bwd_kwargs = []

    def chunk_gated_delta_rule_fwd(self, q, k, v, g, beta, scale, initial_state, output_final_state, cu_seqlens=None,
                                   chunk_indices=None, **kw):
        self.raw = (q, k, v, g, beta, initial_state, scale, cu_seqlens)
        self.fwd_chunk_indices = chunk_indices
        o, ht = recurrent_gated_delta_rule(q, k, v, g, beta, scale=scale, initial_state=initial_state,
                                           cu_seqlens=cu_seqlens)
        self.g_cs, self.A = g.cumsum(1) / 0.6931471805599453, torch.zeros(1)
        return self.g_cs, o, self.A, ht, initial_state, None

    def chunk_gated_delta_rule_bwd(self, q, k, v, g, beta, A, scale, initial_state, do, dht, **kw):
        assert g is self.g_cs and A is self.A, "FLA's backward must be fed FLA's own g-cumsum and A"
        self.bwd_kwargs.append(kw)
        rq, rk, rv, rg, rbeta, rh0, rscale, rcu = self.raw
        r = reference_grads(rq, rk, rv, rg, rbeta, rh0, do, dht, rscale, rcu)
        return r["dq"], r["dk"], r["dv"], r["dbeta"], r["dg"], r["dh0"], None, None


@pytest.fixture
def fake_fla(monkeypatch):
    fake = FakeFLAChunk()
    marker = torch.tensor([[0, 0]])
    monkeypatch.setattr(fla_mod, "_import", lambda: ((fake, None, lambda cu, bt: marker), ""))
    fake.marker = marker
    return fake


@pytest.mark.parametrize("layout,seqlens", [("varlen", (20, 12)), ("dense", (16, 16))])
def test_fla_bwd_is_the_published_call(fake_fla, layout, seqlens):
    inp = make_inputs(point(backend="fla", layout=layout, seqlens=seqlens))
    fn = REGISTRY["fla"]._prepare("bwd", inp)  # _prepare: leaves os.environ alone
    assert_matches_oracle(fn(), inp)
    assert fake_fla.bwd_kwargs == [dict(cu_seqlens=inp.cu_seqlens)]  # no chunk_indices, as the benchmark


def test_fla_bwd_train_passes_the_forward_chunk_indices(fake_fla):
    inp = make_inputs(point(backend="fla"))
    fn = REGISTRY["fla"]._prepare("bwd_train", inp)
    assert_matches_oracle(fn(), inp)
    (kw,) = fake_fla.bwd_kwargs
    assert kw["chunk_indices"] is fake_fla.marker is fake_fla.fwd_chunk_indices


# -- FlashInfer -----------------------------------------------------------------------------------------


def fake_prefill(q, k, v, g=None, beta=None, scale=None, initial_state=None, output_final_state=False,
                 cu_seqlens=None, **kw):
    """FlashInfer's chunk_gated_delta_rule by its documented conventions, in plain PyTorch."""
    assert cu_seqlens is not None, "cu_seqlens is required for varlen mode"
    assert q.dim() == k.dim() == v.dim() == 3 and q.is_contiguous() and v.is_contiguous()
    assert g.dtype == beta.dtype == torch.float32 and g.shape == beta.shape == v.shape[:2]
    assert bool((g > 0).all()) and bool((g <= 1).all()), "g must be the linear decay alpha"
    N = cu_seqlens.numel() - 1
    assert initial_state.dtype == torch.float32 and initial_state.shape == (N, v.shape[1], v.shape[2], q.shape[2])
    assert initial_state.is_contiguous()
    o, ht = recurrent_gated_delta_rule(q[None], k[None], v[None], g.log()[None], beta[None], scale=scale,
                                       initial_state=initial_state.transpose(-1, -2), cu_seqlens=cu_seqlens)
    state = ht.transpose(-1, -2).contiguous()  # FlashInfer's [N, HV, V, K]
    return (o[0], state) if output_final_state else o[0]


@pytest.mark.parametrize("layout,seqlens", [("varlen", (20, 12)), ("varlen", (32,)), ("dense", (16, 16))])
def test_flashinfer_conversions_agree_with_the_oracle(monkeypatch, layout, seqlens):
    monkeypatch.setattr(fi_mod, "_import", lambda: (fake_prefill, ""))
    p = point(backend="flashinfer", mode="fwd", layout=layout, seqlens=seqlens, K=8, V=8)
    inp = make_inputs(p)
    got = REGISTRY["flashinfer"].prepare("fwd", inp)()
    assert got["o"].shape == inp.v.shape and got["ht"].shape == inp.dht.shape
    errors, failure = compare(got, oracle(inp), "float32")
    assert failure is None, (failure, errors)
    o, ht = REGISTRY["flashinfer"].forward(inp)
    assert torch.equal(o, got["o"]) and torch.equal(ht, got["ht"])


def test_flashinfer_args_follow_its_conventions():
    inp = make_inputs(point(backend="flashinfer", mode="fwd", seqlens=(20, 12)))
    a = fi_mod.flashinfer_args(inp)
    assert torch.equal(a["g"], inp.g[0].exp())
    assert torch.equal(a["initial_state"], inp.h0.transpose(-1, -2))
    assert a["cu_seqlens"] is inp.cu_seqlens and a["output_final_state"] is True
    dense = make_inputs(point(backend="flashinfer", mode="fwd", layout="dense", seqlens=(16, 16)))
    assert fi_mod.flashinfer_args(dense)["cu_seqlens"].tolist() == [0, 16, 32]


def test_flashinfer_declares_itself():
    b = REGISTRY["flashinfer"]
    assert b.modes == {"fwd"} and b.devices == {"cuda"} and b.dtypes == {"bfloat16", "float16"}
    assert any(e.startswith("cutlass::device_kernel<flat::kernel::FlatKernelTmaWarpSpecializedDeltaRule")
               for e in b.expect_kernels)
    from qlabench.core.kernel_event import provenance_error

    name = ("void cutlass::device_kernel<flat::kernel::FlatKernelTmaWarpSpecializedDeltaRule<cute::tuple<>, "
            "float, true> >(T1::Params)")
    assert provenance_error(["at::native::copy_kernel", name], b.expect_kernels, b.forbid_kernels) is None
    assert provenance_error(["tilelang_fused_fwd"], b.expect_kernels, b.forbid_kernels).startswith(
        "backend provenance mismatch")
    ok, why = b.supports(point(backend="flashinfer", mode="fwd", K=128, V=64, dtype="bfloat16"), "cuda")
    assert not ok and "head size" in why
    ok, why = b.supports(point(backend="flashinfer", mode="bwd", K=128, V=128, dtype="bfloat16"), "cuda")
    assert not ok and "no bwd mode" in why


def _study_like_suite():
    return parse_suite({"name": "fi", "device": "cpu",
                        "sweep": {"backends": ["flashinfer"], "varlen": [[32768]], "dtype": "bfloat16",
                                  "heads": [{"model": "397b", "tp": 8}]}}, "fi.toml")


@pytest.mark.skipif(importlib.util.find_spec("flashinfer") is not None, reason="flashinfer is installed here")
def test_flashinfer_unavailable_gives_a_skipped_row_with_the_reason():
    ok, why = REGISTRY["flashinfer"].available()
    assert not ok and "flashinfer-python is not installed" in why and "qlabench[flashinfer]" in why
    s = _study_like_suite()
    ctx = MeasureContext(suite=s, device="cpu", env=envmod.capture("cpu"), run_id="r", timer=TimerPlan.resolve("wall", "cpu", s.timing),
                         registry=REGISTRY, check=True)
    row = run_point(s.points[0], ctx)
    assert row.status == "skipped" and row.backend == "flashinfer"
    assert row.reason == f"backend unavailable: {why}"
    assert row.median_ms is None and row.layout == "varlen" and row.seqlens == (32768,)


def test_a_broken_flashinfer_install_is_a_reason_too(monkeypatch):
    monkeypatch.setattr(fi_mod, "_import", lambda: (None, "import flashinfer.gdn_prefill failed: ImportError: tvm_ffi"))
    s = _study_like_suite()
    ctx = MeasureContext(suite=s, device="cpu", env=envmod.capture("cpu"), run_id="r", timer=TimerPlan.resolve("wall", "cpu", s.timing),
                         registry=REGISTRY, check=True)
    row = run_point(s.points[0], ctx)
    assert row.status == "skipped" and "tvm_ffi" in row.reason
