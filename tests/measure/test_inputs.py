"""Deterministic inputs: seeded, normalised, gate profiles as documented, reduced check lengths."""

from __future__ import annotations

import math

import pytest
import torch

from qlabench.measure.inputs import make_inputs, reduced_seqlens
from qlabench.core.point import GATES, Point


def point(**kw) -> Point:
    base = dict(backend="naive-chunk", mode="fwd", layout="dense", batch=2, seqlens=(24, 24), h_qk=2, h_v=4,
                K=16, V=8, dtype="float32", gate="flashqla", seed=0, initial_state=True)
    base.update(kw)
    if base["layout"] == "varlen":
        base["batch"] = 1
    return Point(**base)


def tensors(inp):
    return {n: getattr(inp, n) for n in ("q", "k", "v", "g", "beta", "h0", "do", "dht")}


def test_same_seed_same_inputs_other_seed_other_inputs():
    a, b, c = make_inputs(point()), make_inputs(point()), make_inputs(point(seed=1))
    for name, x in tensors(a).items():
        assert torch.equal(x, tensors(b)[name]), name
        assert not torch.equal(x, tensors(c)[name]), name


def test_shapes_and_dtypes_dense():
    p = point(dtype="bfloat16")
    inp = make_inputs(p)
    B, T = 2, 24
    assert inp.q.shape == inp.k.shape == (B, T, 2, 16)
    assert inp.v.shape == inp.do.shape == (B, T, 4, 8)
    assert inp.g.shape == inp.beta.shape == (B, T, 4)
    assert inp.h0.shape == inp.dht.shape == (B, 4, 16, 8)
    assert inp.q.dtype == inp.k.dtype == inp.v.dtype == torch.bfloat16
    assert inp.g.dtype == inp.beta.dtype == inp.h0.dtype == torch.float32
    assert inp.cu_seqlens is None
    assert inp.scale == 16**-0.5


def test_varlen_packs_into_batch_one_with_cu_seqlens():
    inp = make_inputs(point(layout="varlen", seqlens=(5, 1, 18)))
    assert inp.q.shape[:2] == (1, 24)
    assert inp.cu_seqlens.dtype == torch.int32
    assert inp.cu_seqlens.tolist() == [0, 5, 6, 24]
    assert inp.h0.shape[0] == 3


def test_no_initial_state():
    assert make_inputs(point(initial_state=False)).h0 is None


def test_every_dtype_sees_the_same_values():
    f32 = make_inputs(point(dtype="float32"))
    for dt, tdt in (("bfloat16", torch.bfloat16), ("float16", torch.float16)):
        low = make_inputs(point(dtype=dt))
        assert torch.equal(low.q, f32.q.to(tdt))
        assert torch.equal(low.v, f32.v.to(tdt))
        assert torch.equal(low.g, f32.g) and torch.equal(low.beta, f32.beta)


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16"])
def test_q_and_k_are_l2_normalised(dtype):
    inp = make_inputs(point(dtype=dtype))
    tol = 1e-12 if dtype == "float64" else 1e-5 if dtype == "float32" else 1e-2
    for x in (inp.q, inp.k):
        norms = x.double().norm(dim=-1)
        assert torch.allclose(norms, torch.ones_like(norms), atol=tol)


@pytest.mark.parametrize("h_v", [1, 2, 3, 4, 6, 8, 12, 48])
def test_flashqla_gate_zeroes_a_quarter_of_the_heads(h_v):
    inp = make_inputs(point(h_qk=1, h_v=h_v, gate="flashqla", seed=h_v))
    g = inp.g
    decaying = [(g[:, :, h] < 0).all().item() for h in range(h_v)]
    zero = [(g[:, :, h] == 0).all().item() for h in range(h_v)]
    assert sum(decaying) == math.ceil(0.75 * h_v)
    assert all(d != z for d, z in zip(decaying, zero, strict=True))  # each head is one or the other
    assert g.min() >= math.log(0.5) / 16 - 1  # logsigmoid(randn) / 16: a gentle decay


def test_flashqla_zero_heads_depend_on_the_seed():
    patterns = {tuple((make_inputs(point(h_qk=1, h_v=8, seed=s)).g[0, 0] == 0).tolist()) for s in range(8)}
    assert len(patterns) > 1


@pytest.mark.parametrize("gate", GATES)
def test_gate_is_log_decay_and_beta_in_unit_interval(gate):
    inp = make_inputs(point(gate=gate, seqlens=(64, 64)))
    assert (inp.g <= 0).all()
    assert torch.isfinite(inp.g).all()
    assert ((inp.beta > 0) & (inp.beta < 1)).all()


def test_fla_gate_range():
    g = make_inputs(point(gate="fla")).g
    # logsigmoid of uniform [0, 1)
    assert (g >= math.log(1 / (1 + math.e**0)) - 1e-6).all() and (g <= math.log(1 / (1 + math.e**-1))).all()


def test_strong_gate_decays_harder_on_later_heads():
    g = make_inputs(point(gate="strong", h_qk=1, h_v=8, seqlens=(256, 256))).g
    per_head = g.mean(dim=(0, 1))
    assert per_head[-1] < 4 * per_head[0]  # A goes from 1 to 16 across the heads
    assert g.min() < -5  # much stronger than the flashqla profile


def test_to_casts_floats_and_keeps_integers():
    inp = make_inputs(point(layout="varlen", seqlens=(3, 4)))
    d = inp.to(torch.float64)
    assert d.q.dtype == d.g.dtype == d.h0.dtype == torch.float64
    assert d.cu_seqlens.dtype == torch.int32
    assert torch.equal(d.q, inp.q.double())
    assert inp.q.dtype == torch.float32  # the original is untouched


def test_explicit_seqlens_override():
    inp = make_inputs(point(), seqlens=(8, 8))
    assert inp.q.shape[:2] == (2, 8)


# -- reduced check lengths ----------------------------------------------------------------------------


def test_reduced_seqlens_unchanged_when_small():
    p = point(seqlens=(24, 24))
    assert reduced_seqlens(p, 48) == (24, 24)


def test_reduced_seqlens_dense_keeps_batch():
    p = point(batch=4, seqlens=(1000,) * 4)
    got = reduced_seqlens(p, 512)
    assert got == (128,) * 4
    assert reduced_seqlens(p, 2) == (1,) * 4  # never below one token per sequence


def test_reduced_seqlens_varlen_keeps_sequences_and_proportions():
    p = point(layout="varlen", seqlens=(4000, 1000, 3))
    got = reduced_seqlens(p, 500)
    assert len(got) == 3 and min(got) >= 1
    assert sum(got) <= 500
    assert abs(got[0] / got[1] - 4) < 0.05
    # the reduced point is still a valid point of the same layout
    assert p.with_(seqlens=got).layout == "varlen"


# -- packed layouts: the published method packs every layout as batch 1 with int32 cu_seqlens -------------


def test_a_single_packed_sequence_keeps_its_cu_seqlens():
    from qlabench.core.spec import parse_suite

    s = parse_suite({"name": "p", "sweep": {"backends": ["naive-chunk"], "varlen": [[32768]], "seqlen": [32768],
                                            "heads": [{"h_qk": 1, "h_v": 1}], "K": 4, "V": 4}}, "p.toml")
    dense, packed = s.points
    assert (dense.layout, dense.batch, dense.seqlens) == ("dense", 1, (32768,))
    assert (packed.layout, packed.batch, packed.seqlens) == ("varlen", 1, (32768,))
    assert dense.key() != packed.key() and packed.layout_label == "32768" and dense.layout_label == "1x32768"
    inp = make_inputs(packed)
    assert inp.q.shape[:2] == (1, 32768)
    assert inp.cu_seqlens is not None and inp.cu_seqlens.dtype == torch.int32
    assert inp.cu_seqlens.tolist() == [0, 32768]
    assert inp.h0.shape[0] == 1
    assert make_inputs(dense).cu_seqlens is None


def test_a_flat_one_element_varlen_is_one_packed_layout():
    from qlabench.core.spec import parse_suite

    s = parse_suite({"name": "p", "sweep": {"backends": ["naive-chunk"], "varlen": [8192],
                                            "heads": [{"h_qk": 1, "h_v": 1}]}}, "p.toml")
    assert [(p.layout, p.seqlens) for p in s.points] == [("varlen", (8192,))]


def test_the_reduced_check_of_a_single_packed_sequence_stays_packed():
    p = point(layout="varlen", seqlens=(32768,))
    small = reduced_seqlens(p, 256)
    assert small == (256,)
    inp = make_inputs(p, seqlens=small)
    assert inp.cu_seqlens.tolist() == [0, 256]


def test_dense_batches_have_no_cu_seqlens():
    assert make_inputs(point(batch=2, seqlens=(24, 24))).cu_seqlens is None


# -- raw gates: the inputs of a call that computes its decay itself (FlashInfer 0.7.4's use_gate_in_kernel) --
def _outside_gate(A_log, dt_bias, a):
    """Qwen3.5's gating written out again in plain torch, as vLLM 0.34's fused_post_conv_prep states it: softplus
    x + log(1 + exp(-x)) for x > 0, log(1 + exp(x)) otherwise, x itself above the threshold 20."""
    x = a.double() + dt_bias.double()
    sp = torch.where(x > 0, x + torch.log1p(torch.exp(-x)), torch.log1p(torch.exp(x)))
    sp = torch.where(x <= 20.0, sp, x)
    return -torch.exp(A_log.double()) * sp


@pytest.mark.parametrize("gate", GATES)
def test_raw_gates_give_back_the_points_gate_through_the_gating_formula(gate):
    from qlabench.measure.inputs import gdn_gate, raw_gates

    inp = make_inputs(Point(backend="naive-chunk", mode="fwd", layout="varlen", batch=1, seqlens=(40, 88), h_qk=2,
                            h_v=8, K=16, V=16, gate=gate))
    raw = raw_gates(inp.g)
    assert raw.A_log.shape == raw.dt_bias.shape == (8,) and raw.a.shape == inp.g.shape
    assert raw.a.dtype == raw.A_log.dtype == raw.dt_bias.dtype == torch.float32
    assert len(set(raw.A_log.tolist())) == 8 and len(set(raw.dt_bias.tolist())) == 8  # both vary per head
    g = gdn_gate(raw.A_log, raw.dt_bias, raw.a)
    assert torch.allclose(g.double(), _outside_gate(raw.A_log, raw.dt_bias, raw.a), rtol=1e-6, atol=1e-30)
    decaying = inp.g != 0
    rel = ((g - inp.g).abs() / inp.g.abs().clamp_min(1e-30))[decaying]
    assert rel.max() < 1e-5
    # a head with no decay stays without decay: exp of its gate is exactly 1 in float32
    assert torch.equal(torch.exp(g[~decaying]), torch.ones_like(g[~decaying]))


def test_the_gating_formula_is_not_the_identity_on_raw_inputs():
    """Guard for the test above: handing the raw `a` over as if it were g is far off."""
    from qlabench.measure.inputs import raw_gates

    inp = make_inputs(Point(backend="naive-chunk", mode="fwd", layout="dense", batch=1, seqlens=(64,), h_qk=1, h_v=4,
                            K=16, V=16, gate="fla"))
    assert (raw_gates(inp.g).a - inp.g).abs().max() > 1.0
