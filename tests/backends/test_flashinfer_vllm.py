"""`vllm-flashinfer-prefill`: FlashInfer's prefill called exactly as vLLM 0.34 calls it, on CPU through run_point.

What vLLM 0.34.0's fi_chunk_gated_delta_rule hands FlashInfer (qwen_gdn_linear_attn.py:392-451): an output buffer
it owns, int32 cu_seqlens, g exponentiated, use_cp="auto", backend="flashinfer", no max_seqlen, no scale. The
arguments are held to that list; a stand-in of 0.7.4 runs the call, and the row is checked against the oracle
from the buffer vLLM reads (not from the return value).
"""

from __future__ import annotations

import inspect

import pytest
import torch

from flashinfer_standins import fi074, flashinfer_semantics
from qlabench.backends import REGISTRY
from qlabench.backends import flashinfer as fi_mod
from qlabench.backends import flashinfer_vllm as fv
from qlabench.core.backend_decl import decl_of
from qlabench.core.engine_switches import ENGINES
from qlabench.core.point import Point
from qlabench.core.spec import parse_suite
from qlabench.measure import env as envmod
from qlabench.measure.inputs import make_inputs
from qlabench.measure.timing import TimerPlan
from qlabench.run.point import MeasureContext, run_point

# the keywords of vLLM 0.34.0's call (fi_chunk_gated_delta_rule), nothing more
VLLM_034_KEYWORDS = {"q", "k", "v", "g", "beta", "initial_state", "output_final_state", "cu_seqlens", "output",
                     "state_checkpoints", "checkpoint_cu_starts", "checkpoint_every_n_tokens", "use_cp", "backend"}


def _inputs(layout="varlen", seqlens=(24, 40)):
    return make_inputs(Point(backend="vllm-flashinfer-prefill", mode="fwd", layout=layout, batch=1 if layout ==
                             "varlen" else len(seqlens), seqlens=seqlens, h_qk=1, h_v=4, dtype="bfloat16"))


@pytest.mark.parametrize("layout,seqlens", [("varlen", (24, 40)), ("dense", (32, 32))])
def test_the_arguments_are_vllms(layout, seqlens):
    inp = _inputs(layout, seqlens)
    a = fv.vllm_args(inp)
    assert set(a) == VLLM_034_KEYWORDS  # no max_seqlen, no scale
    assert a["use_cp"] == "auto" and a["backend"] == "flashinfer" and a["output_final_state"] is True
    assert a["cu_seqlens"].dtype == torch.int32 and a["cu_seqlens"].tolist() == [0, *torch.tensor(seqlens).cumsum(0).tolist()]
    T = sum(seqlens)
    assert a["output"].shape == (T, 4, 128) and a["output"].dtype == torch.bfloat16
    assert a["g"].dtype == torch.float32 and torch.equal(a["g"], inp.g.float().exp().reshape(T, 4))
    assert a["initial_state"].shape == (len(seqlens), 4, 128, 128)  # FlashInfer's [N, HV, V, K]
    assert a["state_checkpoints"] is None and a["checkpoint_every_n_tokens"] == 0


def test_a_scale_flashinfer_would_not_default_to_is_refused():
    inp = _inputs()
    inp.scale = 0.5
    with pytest.raises(ValueError, match="vLLM passes no scale"):
        fv.vllm_args(inp)


def _run(monkeypatch, prefill):
    monkeypatch.setattr(fi_mod, "_import", lambda: (prefill, ""))
    b = REGISTRY["vllm-flashinfer-prefill"]
    monkeypatch.setattr(type(b), "devices", frozenset({"cpu", "cuda"}))
    sweep = {"backends": ["vllm-flashinfer-prefill"], "heads": [{"h_qk": 1, "h_v": 4}], "K": 128, "V": 128,
             "dtype": "bfloat16", "gate": "flashqla", "initial_state": True, "varlen": [[24, 40]]}
    s = parse_suite({"name": "fv", "device": "cpu", "sweep": sweep,
                     "timing": {"timer": "wall", "warmup": 0, "min_samples": 2, "max_samples": 2}}, "fv.toml")
    ctx = MeasureContext(suite=s, device="cpu", env=envmod.capture("cpu"), run_id="r",
                         timer=TimerPlan.resolve("wall", "cpu", s.timing), registry=REGISTRY, check=True)
    return run_point(s.points[0], ctx)


def test_the_call_runs_and_its_output_buffer_is_what_is_checked(monkeypatch):
    row = _run(monkeypatch, fi074)
    assert row.status == "ok", row.reason
    assert row.err_o < 0.02 and row.err_ht < 0.02


def test_a_library_that_ignores_the_output_buffer_is_incorrect(monkeypatch):
    """vLLM reads the buffer it passed: a call that returns its result elsewhere leaves the buffer unwritten."""
    def returns_elsewhere(q, k, v, g=None, beta=None, scale=None, initial_state=None, output_final_state=False,
                          cu_seqlens=None, output=None, **kw):
        output.zero_()
        return flashinfer_semantics(q, k, v, g, beta, q.shape[-1] ** -0.5, initial_state, output_final_state,
                                    cu_seqlens)

    returns_elsewhere.__signature__ = inspect.signature(fi074)
    row = _run(monkeypatch, returns_elsewhere)
    assert row.status == "incorrect" and "o " in row.reason


def test_a_flashinfer_without_output_or_use_cp_says_why(monkeypatch):
    def fi0613(q, k, v, g=None, beta=None, scale=None, initial_state=None, output_final_state=False, cu_seqlens=None):
        return None

    monkeypatch.setattr(fi_mod, "_import", lambda: (fi0613, ""))
    ok, why = REGISTRY["vllm-flashinfer-prefill"].available()
    assert not ok and "output/use_cp/backend" in why and ENGINES["vllm"].version in why


def test_declared_with_the_engine_version_and_not_a_candidate():
    d = decl_of("vllm-flashinfer-prefill")
    assert ENGINES["vllm"].version in d.label and ENGINES["vllm"].version in d.call and ENGINES["vllm"].version == "0.34.0"
    assert d.library == "flashinfer" and d.modes == {"fwd"} and d.size_dependent_path
    assert "max_seqlen" not in d.call.split("#")[0] and 'use_cp="auto"' in d.call and "output=out" in d.call
    assert not d.roles  # the same kernels as `flashinfer`: a row of what vLLM gets, never ranked against it
