"""The FlashInfer backend's conventions, and why a harness must check them: on CPU, through run_point.

FlashQLA's own benchmark called FlashInfer with FlashQLA's conventions: log-space g where FlashInfer
takes the linear decay alpha, and an initial state in FlashQLA's [N, HV, K, V] layout where FlashInfer's
is [N, HV, V, K]. On the H200 that gave 75% non-finite outputs in the same time. Here a stand-in with
FlashInfer's documented semantics (no checks of its own: like the kernel, it computes whatever it is
handed) replaces the library, and the same row pipeline that times the real one must time qlabench's
conversion and refuse FlashQLA's: `incorrect`, with no timing.
"""

from __future__ import annotations

import pytest
import torch

from qlabench.measure.timing import TimerPlan
from qlabench.backends import REGISTRY
from qlabench.backends import flashinfer as fi_mod
from qlabench.backends.reference import recurrent_gated_delta_rule
from flashinfer_standins import flashinfer_semantics
from qlabench.core.spec import parse_suite
from qlabench.measure import env as envmod
from qlabench.run.point import MeasureContext, run_point


QLABENCH_ARGS = fi_mod.flashinfer_args


def flashqla_script_args(inp):
    """The arguments as FlashQLA's benchmark passes them: qlabench's, but g log-space and h0 untransposed."""
    a = QLABENCH_ARGS(inp)
    B, T, HV = inp.g.shape
    a["g"] = inp.g.float().reshape(B * T, HV).contiguous()
    a["initial_state"] = None if inp.h0 is None else inp.h0.float().contiguous()
    return a


def _run(monkeypatch, layout: str, seqlens: list[int]):
    monkeypatch.setattr(fi_mod, "_import", lambda: (flashinfer_semantics, ""))
    b = REGISTRY["flashinfer"]
    monkeypatch.setattr(type(b), "devices", frozenset({"cpu", "cuda"}))  # the stand-in runs anywhere
    sweep = {"backends": ["flashinfer"], "heads": [{"h_qk": 1, "h_v": 2}], "K": 128, "V": 128,
             "dtype": "bfloat16", "gate": "flashqla", "initial_state": True}
    sweep.update({"varlen": [seqlens]} if layout == "varlen" else {"batch": [len(seqlens)], "seqlen": [seqlens[0]]})
    s = parse_suite({"name": "fi", "device": "cpu", "sweep": sweep,
                     "timing": {"timer": "wall", "warmup": 0, "min_samples": 2, "max_samples": 2}}, "fi.toml")
    ctx = MeasureContext(suite=s, device="cpu", env=envmod.capture("cpu"), run_id="r", timer=TimerPlan.resolve("wall", "cpu", s.timing),
                         registry=REGISTRY, check=True)
    return run_point(s.points[0], ctx)


@pytest.mark.parametrize("layout,seqlens", [("varlen", [24, 40]), ("dense", [32, 32])])
def test_flashinfer_called_its_way_is_checked_and_timed(monkeypatch, layout, seqlens):
    row = _run(monkeypatch, layout, seqlens)
    assert row.status == "ok", row.reason
    assert row.median_ms is not None and row.err_o < 0.02


@pytest.mark.parametrize("layout,seqlens", [("varlen", [24, 40]), ("dense", [32, 32])])
def test_flashinfer_called_as_flashqla_benchmark_does_is_incorrect_not_timed(monkeypatch, layout, seqlens):
    monkeypatch.setattr(fi_mod, "flashinfer_args", flashqla_script_args)
    row = _run(monkeypatch, layout, seqlens)
    assert row.status == "incorrect" and row.median_ms is None
    assert "o" in row.reason


def test_either_convention_error_alone_is_caught(monkeypatch):
    """Log-space g alone (its heads at g = 0 give log(0)), and the untransposed state alone."""
    real = QLABENCH_ARGS

    def log_g(inp):
        a = real(inp)
        a["g"] = inp.g.float().reshape(a["g"].shape).contiguous()
        return a

    def untransposed(inp):
        a = real(inp)
        a["initial_state"] = inp.h0.float().contiguous()
        return a

    for wrong in (log_g, untransposed):
        monkeypatch.setattr(fi_mod, "flashinfer_args", wrong)
        row = _run(monkeypatch, "varlen", [24, 40])
        assert row.status == "incorrect" and row.median_ms is None, (wrong.__name__, row.reason)


def test_the_stand_in_is_the_oracle_under_flashinfers_conventions():
    """Guard for the tests above: the stand-in, handed alpha and a [V, K] state, is the reference itself."""
    torch.manual_seed(0)
    T, H, D = 16, 2, 4
    q, k, v = torch.randn(T, H, D), torch.nn.functional.normalize(torch.randn(T, H, D), dim=-1), torch.randn(T, H, D)
    g, beta = -torch.rand(T, H), torch.rand(T, H)
    h0 = torch.randn(1, H, D, D)
    cu = torch.tensor([0, T])
    o, ht = flashinfer_semantics(q, k, v, g.exp(), beta, 0.5, h0.transpose(-1, -2).contiguous(), True, cu)
    ro, rht = recurrent_gated_delta_rule(q[None], k[None], v[None], g[None], beta[None], scale=0.5,
                                         initial_state=h0, cu_seqlens=cu)
    assert torch.allclose(o, ro[0], atol=1e-5) and torch.allclose(ht.transpose(-1, -2), rht, atol=1e-5)


def test_its_provenance_is_the_cutlass_kernel_and_nothing_of_flashqla_or_fla():
    b = REGISTRY["flashinfer"]
    cutlass = "void cutlass::device_kernel<flat::kernel::FlatKernelTmaWarpSpecializedDeltaRule<float> >(int)"
    cast = "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda>(int)"
    assert b.provenance_error([cast, cutlass]) is None
    for other in ("tilelang_fused_chunk_gdr_fwd_kernel_kernel", "chunk_gated_delta_rule_fwd_kernel_h_blockdim64",
                  "chunk_fwd_kernel_o", "recompute_w_u_fwd_kernel"):
        assert "provenance mismatch" in b.provenance_error([cutlass, other]), other
    assert "launched no" in b.provenance_error([cast])


def flashinfer07_semantics(q, k, v, g=None, beta=None, scale=None, initial_state=None, output_final_state=False,
                           cu_seqlens=None, use_cp="auto", backend="auto", max_seqlen=None, seen=None):
    """0.7's signature (use_cp, backend, max_seqlen), same semantics; records what it was handed."""
    seen.append({"use_cp": use_cp, "backend": backend, "max_seqlen": max_seqlen})
    return flashinfer_semantics(q, k, v, g, beta, scale, initial_state, output_final_state, cu_seqlens)


@pytest.mark.parametrize("name,use_cp", [("flashinfer", "auto"), ("flashinfer-nocp", False)])
def test_on_07_it_passes_the_longest_sequence_pins_its_kernels_and_nocp_turns_cp_off(monkeypatch, name, use_cp):
    import functools

    seen: list[dict] = []
    stand_in = functools.partial(flashinfer07_semantics, seen=seen)
    stand_in.__signature__ = __import__("inspect").signature(flashinfer07_semantics)
    s, ctx = _cpu_point(monkeypatch, name, stand_in, [[24, 40, 8]])
    row = run_point(s.points[0], ctx)
    assert row.status == "ok", row.reason
    assert seen and all(c == {"use_cp": use_cp, "backend": "flashinfer", "max_seqlen": 40} for c in seen)


def test_nocp_is_unavailable_on_a_flashinfer_without_the_switch(monkeypatch):
    monkeypatch.setattr(fi_mod, "_import", lambda: (flashinfer_semantics, ""))
    ok, why = REGISTRY["flashinfer-nocp"].available()
    assert not ok and "use_cp" in why
    assert REGISTRY["flashinfer"].available() == (True, "")


FUSED_07 = ("kernel_cutlass_kernel_flashinfergdn_kernelsdelta_rule_dsldelta_rule_sm90_FullyFusedDeltaRuleSm90_object_at_"
            "_tensorptrf32gmemalign16o1_tensorptrf32gmemalign16o1_CopyAtom_ThrID10_TVLayoutSr_0")
CP_07 = [f"kernel_cutlass_kernel_flashinfergdn_kernelsdelta_rule_dsldelta_rule_cp_sm90CPDeltaRule{c}Sm90_object_at__x_0"
         for c in ("TPrecompute", "MNPrecompute", "FixupSimt", "Prefill")]


def test_on_07_its_provenance_is_the_fused_kernel_or_its_cp_and_the_row_says_which():
    """The 0.7.2 names as the H200 launched them; a DSL kernel of anything else is not FlashInfer's prefill."""
    b = REGISTRY["flashinfer"]
    assert b.provenance_error([FUSED_07]) is None and b.provenance_error(CP_07) is None
    decode = "kernel_cutlass_gdn_decode_kernel_small_batch_pretranspose_x_0"
    assert "launched no" in b.provenance_error([decode])
    assert "launched no" in b.provenance_error(CP_07[:3])  # CP's precompute without its prefill kernel
    assert "provenance mismatch" in b.provenance_error([FUSED_07, "tilelang_fused_chunk_gdr_fwd_kernel_kernel"])
    details = lambda ks: b.point_details(None, tuple(ks), (1.0,) * len(ks), 1.0, None)  # noqa: E731
    assert details([FUSED_07]) == {"flashinfer_cp": False}
    assert details(CP_07) == {"flashinfer_cp": True}
    assert details(["void cutlass::device_kernel<flat::kernel::FlatKernelTmaWarpSpecializedDeltaRule<float> >(int)"]) == {}


@pytest.mark.parametrize("version", ["0.7.2.post1", "0.7.4"])
@pytest.mark.parametrize("name,use_cp", [("flashinfer", None), ("flashinfer-nocp", False), ("flashinfer-forcecp", True)])
def test_the_prefill_settings_make_the_same_call_on_072_and_074(monkeypatch, version, name, use_cp):
    """0.7.4's chunk_gated_delta_rule takes 0.7.2's arguments under the same names (its new ones are keyword-only
    or after them): each setting's arguments are the same on both signatures, and the row is ok on each."""
    import inspect

    from flashinfer_standins import fi072, fi074

    real = fi074 if version == "0.7.4" else fi072
    seen: list[dict] = []

    def stand_in(*a, **kw):
        seen.append(kw)
        return real(*a, **kw)

    stand_in.__signature__ = inspect.signature(real)
    s, ctx = _cpu_point(monkeypatch, name, stand_in, [[24, 40]])
    row = run_point(s.points[0], ctx)
    assert row.status == "ok", row.reason
    assert seen and all(kw["max_seqlen"] == 40 and kw["backend"] == "flashinfer" for kw in seen)
    assert all(kw.get("use_cp", None) == use_cp for kw in seen)
    assert not any(k in kw for kw in seen for k in ("use_gate_in_kernel", "gate_domain", "A_log"))


def test_the_pool_call_is_there_on_074_too():
    from flashinfer_standins import fi072, fi074
    from qlabench.backends.flashinfer_pool import has_state_indices

    assert has_state_indices(fi072) and has_state_indices(fi074)


def _cpu_point(monkeypatch, name, stand_in, varlen):
    """`name`'s suite of one packed point on the CPU, with `stand_in` as FlashInfer's prefill: (suite, context)."""
    monkeypatch.setattr(fi_mod, "_import", lambda: (stand_in, ""))
    b = REGISTRY[name]
    assert b.available() == (True, "")
    monkeypatch.setattr(type(b), "devices", frozenset({"cpu", "cuda"}))
    s = parse_suite({"name": "fi", "device": "cpu", "sweep": {
        "backends": [name], "heads": [{"h_qk": 1, "h_v": 2}], "K": 128, "V": 128, "dtype": "bfloat16",
        "gate": "flashqla", "initial_state": True, "varlen": varlen},
        "timing": {"timer": "wall", "warmup": 0, "min_samples": 2, "max_samples": 2}}, "fi.toml")
    return s, MeasureContext(suite=s, device="cpu", env=envmod.capture("cpu"), run_id="r",
                             timer=TimerPlan.resolve("wall", "cpu", s.timing), registry=REGISTRY, check=True)
