"""`fla-intracp` (FLA's own intra-card CP) on CPU: what it refuses and why, its environment, that its call
runs under inference mode, and how a row tells a split call from an unsplit one.

FLA cannot run here: the call goes to a stand-in for FLA's chunk module (as in test_variants.py). The real
call runs in tests/gpu/test_fla_intracp_gpu.py.
"""

from __future__ import annotations

import os

import pytest
import torch

from qlabench.backends import REGISTRY
from qlabench.backends import fla as fla_mod
from qlabench.backends.fla import INTRACARD_KERNELS, intracard_evidence
from qlabench.backends.reference import recurrent_gated_delta_rule
from qlabench.core.point import Point
from qlabench.measure.inputs import make_inputs

B = REGISTRY["fla-intracp"]


def point(**kw) -> Point:
    base = dict(backend="fla-intracp", mode="fwd", layout="varlen", batch=1, seqlens=(32768,), h_qk=2, h_v=8, K=128,
                V=128, dtype="bfloat16", gate="flashqla")
    base.update(kw)
    if base["layout"] == "dense":
        base["batch"] = len(base["seqlens"])
    return Point(**base)


def test_registered_forward_only_and_not_graph_capturable():
    assert B.modes == frozenset({"fwd"}) and not B.graph_capturable and B.cp_modes == ()
    assert B.env == {"FLA_FLASH_QLA": "0", "FLA_INTRACARD_CP": "1"}
    # FlashQLA kernels are forbidden as in `fla`; the other FLA backends keep FLA's intra-card CP off
    assert B.forbid_kernels == REGISTRY["fla"].forbid_kernels == ("tilelang_",)
    assert REGISTRY["fla"].env["FLA_INTRACARD_CP"] == "0" and REGISTRY["fla"].graph_capturable
    assert [n for n, b in REGISTRY.items() if not b.graph_capturable] == ["fla-intracp", "flashinfer-train"]


def test_a_varlen_forward_point_is_supported():
    assert B.supports(point(), "cuda") == (True, "")
    assert B.supports(point(seqlens=(28672, 4096)), "cuda:0") == (True, "")


@pytest.mark.parametrize("p, device, words", [
    (point(layout="dense"), "cuda", "splits only varlen calls (cu_seqlens)"),
    (point(mode="bwd"), "cuda", "fla-intracp has no bwd mode (has: fwd)"),
    (point(mode="bwd_train"), "cuda", "fla-intracp has no bwd_train mode"),
    (point(mode="fwd_bwd"), "cuda", "fla-intracp has no fwd_bwd mode"),
    (point(), "cpu", "fla-intracp does not run on cpu"),
    (point(K=512, V=512), "cuda", "K <= 256"),
    (point(dtype="float64"), "cuda", "does not support float64"),
])
def test_what_it_refuses_and_why(p, device, words):
    ok, why = B.supports(p, device)
    assert not ok and words in why


class FakeChunk:
    """FLA's chunk module: the plain-PyTorch recurrence, recording whether it ran under inference mode."""

    def __init__(self):
        self.inference = []

    def chunk_gated_delta_rule(self, q, k, v, g, beta, scale=None, initial_state=None, output_final_state=False,
                               cu_seqlens=None, **kw):
        self.inference.append(torch.is_inference_mode_enabled())
        return recurrent_gated_delta_rule(q, k, v, g, beta, scale=scale, initial_state=initial_state,
                                          cu_seqlens=cu_seqlens)


def test_the_call_runs_under_inference_mode_and_its_outputs_are_the_recurrence(monkeypatch):
    fake = FakeChunk()
    monkeypatch.setattr(fla_mod, "_import", lambda: ((fake, None, None), ""))
    p = point(seqlens=(20, 12), h_qk=1, h_v=2, K=8, V=8, dtype="float32")
    inp = make_inputs(p)
    fn = B._prepare("fwd", inp)  # _prepare: leaves os.environ alone
    out = fn()
    assert fake.inference == [True] and not torch.is_inference_mode_enabled()
    o, ht = recurrent_gated_delta_rule(inp.q, inp.k, inp.v, inp.g, inp.beta, scale=inp.scale, initial_state=inp.h0,
                                       cu_seqlens=inp.cu_seqlens)
    assert torch.equal(out["o"], o) and torch.equal(out["ht"], ht)
    # FLA's planner is not installed here: the row says why it has no plan, and claims nothing
    details = B.point_details(fn, (), (), 1.0, lambda g: 1.0)["intracard_cp"]
    assert "error" in details["plan"] and details["engaged"] is None


def test_prepare_sets_the_intracard_switch_for_the_process(monkeypatch):
    monkeypatch.setattr(fla_mod, "_import", lambda: ((FakeChunk(), None, None), ""))
    monkeypatch.setenv("FLA_INTRACARD_CP", "0")
    monkeypatch.setenv("FLA_FLASH_QLA", "1")
    B.prepare("fwd", make_inputs(point(seqlens=(8,), h_qk=1, h_v=1, K=4, V=4, dtype="float32")))
    assert (os.environ["FLA_INTRACARD_CP"], os.environ["FLA_FLASH_QLA"]) == ("1", "0")


# -- did the split run? -----------------------------------------------------------------------------

PLAIN = ("chunk_local_cumsum_scalar_kernel", "chunk_gated_delta_rule_fwd_kernel_h_blockdim64", "chunk_fwd_kernel_o")
SPLIT = PLAIN[:1] + INTRACARD_KERNELS + PLAIN[1:]


def test_a_split_call_is_recognised_from_its_kernels():
    e = intracard_evidence(SPLIT, {"subseq_len": 8192, "max_splits": 32, "subsequences": 4})
    assert e["engaged"] is True and e["kernels_launched"] == sorted(INTRACARD_KERNELS)
    assert e["note"].startswith("intra-card CP engaged: FLA split the call into 4 sub-sequences")
    assert "disagree" not in e["note"]


def test_an_unsplit_call_says_so_and_never_claims_cp():
    e = intracard_evidence(PLAIN, {"subseq_len": 8192, "max_splits": 32, "subsequences": 0})
    assert e["engaged"] is False and e["kernels_launched"] == []
    assert e["note"].startswith("intra-card CP did not engage") and "24576 tokens here" in e["note"]
    assert "disagree" not in e["note"]


def test_kernels_decide_and_a_disagreeing_plan_is_shown():
    e = intracard_evidence(PLAIN, {"subseq_len": 8192, "max_splits": 32, "subsequences": 4})
    assert e["engaged"] is False and e["note"].startswith("intra-card CP did not engage")
    assert "planner said 4 sub-sequences: the kernels and the plan disagree" in e["note"]


def test_without_kernels_engagement_is_unknown():
    e = intracard_evidence((), None)
    assert e["engaged"] is None and "unknown" in e["note"] and "plan" not in e


def test_numerics_suite_packs_several_sequences_fla_splits():
    """fla-core 0.6.0's intra-card CP is wrong for every split sequence after the first one in a packed call
    (docs/upstream/fla-intracp-packed): the numerics suite holds a call where FLA splits several sequences
    (the 8 random cuts of 128k split only two), beside plain `fla` on the same layout, so a fixed release
    shows up as fixed. FLA splits a sequence from three sub-sequence lengths on, and a sub-sequence is at
    least 128 chunks of 64 tokens."""
    from qlabench.core.spec import load_suite

    min_split = 3 * 128 * 64
    packed = {(p.backend, p.seqlens) for p in load_suite("numerics").points
              if p.mode == "fwd" and p.layout == "varlen" and sum(n >= min_split for n in p.seqlens) >= 3}
    layouts = {s for b, s in packed if b == "fla-intracp"}
    assert layouts and all(("fla", s) in packed for s in layouts)
    repro = fla_mod.__file__.rsplit("/qlabench/", 1)[0] + "/docs/upstream/fla-intracp-packed/repro.py"
    assert os.path.isfile(repro)
