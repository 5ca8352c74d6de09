"""FlashInfer 0.7.4's fused-gate prefill (`flashinfer-gate`) on CPU, through run_point.

A stand-in with the semantics flashinfer-python 0.7.4 documents for `use_gate_in_kernel=True` (the gate
materialised as in gdn_kernels/gates.py, then the prefill of linear alpha) replaces the library. The row must be
`ok` and checked against the oracle with the gate computed outside (`naive-recurrent-gate-outside`); a library that
drops A_log or dt_bias from the gate gives an `incorrect` row. The real call runs in
tests/gpu/test_flashinfer074_gpu.py.
"""

from __future__ import annotations

import inspect

import pytest
import torch

from qlabench.backends import REGISTRY
from qlabench.backends import flashinfer as fi_mod
from qlabench.backends import flashinfer_gate as fg
from qlabench.core.spec import parse_suite
from qlabench.measure import env as envmod
from qlabench.measure.inputs import make_inputs
from qlabench.core.point import Point
from qlabench.measure.timing import TimerPlan
from qlabench.run.point import MeasureContext, run_point
from flashinfer_standins import fi072, fi074, materialize


def _run(monkeypatch, prefill, layout="varlen", seqlens=(24, 40)):
    monkeypatch.setattr(fi_mod, "_import", lambda: (prefill, ""))
    b = REGISTRY["flashinfer-gate"]
    monkeypatch.setattr(type(b), "devices", frozenset({"cpu", "cuda"}))  # the stand-in runs anywhere
    sweep = {"backends": ["flashinfer-gate"], "heads": [{"h_qk": 1, "h_v": 4}], "K": 128, "V": 128,
             "dtype": "bfloat16", "gate": "flashqla", "initial_state": True}
    sweep.update({"varlen": [list(seqlens)]} if layout == "varlen" else {"batch": [len(seqlens)], "seqlen": [seqlens[0]]})
    s = parse_suite({"name": "fig", "device": "cpu", "sweep": sweep,
                     "timing": {"timer": "wall", "warmup": 0, "min_samples": 2, "max_samples": 2}}, "fig.toml")
    ctx = MeasureContext(suite=s, device="cpu", env=envmod.capture("cpu"), run_id="r",
                         timer=TimerPlan.resolve("wall", "cpu", s.timing), registry=REGISTRY, check=True)
    return run_point(s.points[0], ctx)


@pytest.mark.parametrize("layout,seqlens", [("varlen", (24, 40)), ("dense", (32, 32))])
def test_the_fused_gate_call_is_checked_against_the_gate_computed_outside(monkeypatch, layout, seqlens):
    row = _run(monkeypatch, fi074, layout, seqlens)
    assert row.status == "ok", row.reason
    assert row.oracle.startswith("naive-recurrent-gate-outside ") and row.err_o < 0.02 and row.err_ht < 0.02


@pytest.mark.parametrize("drop", ["A_log", "dt_bias"])
def test_a_library_that_leaves_a_raw_gate_out_is_incorrect(monkeypatch, drop):
    def wrong(*a, **kw):
        kw[drop] = torch.zeros_like(kw[drop])
        return fi074(*a, **kw)

    wrong.__signature__ = inspect.signature(fi074)
    row = _run(monkeypatch, wrong)
    assert row.status == "incorrect" and row.median_ms is None, row.reason


def test_the_raw_gates_go_in_the_call_not_the_alpha(monkeypatch):
    inp = make_inputs(Point(backend="flashinfer-gate", mode="fwd", layout="varlen", batch=1, seqlens=(24, 40), h_qk=1,
                            h_v=4, dtype="bfloat16"))
    args = fg.fused_gate_args(inp, fi_mod.flashinfer_args(inp) | fi_mod.version_args(fi074, inp))
    assert args["use_gate_in_kernel"] is True and args["backend"] == "flashinfer" and args["max_seqlen"] == 40
    assert args["g"].shape == (64, 4) and args["g"].dtype == torch.float32 and args["A_log"].shape == (4,)
    alpha = materialize(args["g"], args["A_log"], args["dt_bias"])
    assert torch.allclose(alpha, inp.g.exp().reshape(64, 4), rtol=1e-5)


def test_an_older_flashinfer_without_raw_gates_says_why(monkeypatch):
    monkeypatch.setattr(fi_mod, "_import", lambda: (fi072, ""))
    ok, why = REGISTRY["flashinfer-gate"].available()
    assert not ok and "use_gate_in_kernel" in why and "0.7.4" in why
    monkeypatch.setattr(fi_mod, "_import", lambda: (fi074, ""))
    assert REGISTRY["flashinfer-gate"].available() == (True, "")


def test_the_oracle_with_the_gate_outside_is_the_oracle_on_the_gating_formulas_g():
    """Guard: naive-recurrent-gate-outside differs from the plain oracle by the gate's float32 rounding only."""
    p = Point(backend="naive-recurrent", mode="fwd", layout="varlen", batch=1, seqlens=(20, 12), h_qk=1, h_v=2, K=8,
              V=8, dtype="float32")
    inp = make_inputs(p)
    plain = REGISTRY["naive-recurrent"].prepare("fwd", inp)()
    outside = REGISTRY["naive-recurrent-gate-outside"].prepare("fwd", inp)()
    assert torch.allclose(plain["o"], outside["o"], rtol=1e-4, atol=1e-5) and not torch.equal(plain["o"], outside["o"])


@pytest.mark.parametrize("name", ["flashinfer-gate", "vllm-flashinfer-prefill"])
def test_installed_but_without_cuda_they_say_they_need_a_gpu(monkeypatch, name):
    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is visible")
    from qlabench.backends import _gpu

    monkeypatch.setattr(fi_mod, "package_missing", lambda *a, **kw: None)  # as if flashinfer were installed
    try:
        fi_mod._import.cache_clear()
        assert REGISTRY[name].available() == (False, "needs a CUDA GPU (none visible)")
        monkeypatch.setattr(_gpu, "cuda_capability", lambda: (8, 0))  # an A100
        fi_mod._import.cache_clear()
        assert REGISTRY[name].available() == (False, "needs CUDA SM90/SM100/SM103, this GPU is SM80")
    finally:
        fi_mod._import.cache_clear()
