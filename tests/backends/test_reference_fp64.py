"""The float64 full-size reference: equal to the token-by-token recurrence in float64, outputs and
gradients, on every shape the harness produces; the same whole or a block of heads at a time; and its
block-wise comparison equal to comparing the whole tensors."""

from __future__ import annotations

import math

import pytest
import torch

from qlabench.backends.reference import chunk_gated_delta_rule_fp64, recurrent_gated_delta_rule
from qlabench.backends.reference.fp64_full import (
    HEAD_DIM, block_heads, bytes_per_head, fp64_errors, reference_blocks, reference_outputs,
)
from qlabench.backends.registry import REGISTRY
from qlabench.core.point import Point
from qlabench.measure.correctness import compare
from qlabench.measure.inputs import make_inputs

F64 = torch.float64
TOL = 1e-12
CHUNK = 16  # small chunks so short sequences span several


def rel(got: torch.Tensor, ref: torch.Tensor) -> float:
    assert got.shape == ref.shape
    return ((got.double() - ref.double()).norm() / ref.double().norm()).item()


def point(layout="dense", seqlens=(50, 50), h_qk=2, h_v=2, gate="flashqla", seed=0, initial_state=True, K=8, V=16,
          dtype="float64", mode="fwd_bwd", **gate_params):
    return Point(backend="naive-chunk", mode=mode, layout=layout, batch=len(seqlens) if layout == "dense" else 1,
                 seqlens=seqlens, h_qk=h_qk, h_v=h_v, K=K, V=V, dtype=dtype, gate=gate, seed=seed,
                 initial_state=initial_state, **gate_params)


CASES = {
    "dense": point(),
    "dense-no-h0": point(initial_state=False, seed=1),
    "gva4-fla": point(h_qk=1, h_v=4, gate="fla", seed=2),
    "gva4-strong": point(h_qk=2, h_v=8, gate="strong", seed=3, seqlens=(37,)),
    "varlen-ragged": point(layout="varlen", seqlens=(1, 37, 16, 5), h_qk=1, h_v=4, seed=4),
    "varlen-exact-chunks-no-h0": point(layout="varlen", seqlens=(32, 16), gate="fla", seed=5, initial_state=False),
    "no-decay": point(seqlens=(70,), gate_zero_frac=1.0, seed=6),
    "decay-g-5": point(seqlens=(70,), gate_zero_frac=0.0, gate_scale=0.16, seed=7),
    "K-neq-V": point(K=24, V=4, seqlens=(20, 20, 20), seed=8),
}


def args(inp):
    return (inp.q, inp.k, inp.v, inp.g, inp.beta)


def kwargs(inp):
    return dict(scale=inp.scale, initial_state=inp.h0, cu_seqlens=inp.cu_seqlens)


def recurrence(inp, grads: bool) -> dict:
    """The float64 recurrence's outputs (and gradients for inp.do, inp.dht), through autograd."""
    return REGISTRY["naive-recurrent"].prepare("fwd_bwd" if grads else "fwd", inp.to(F64))()


@pytest.mark.parametrize("name", list(CASES))
def test_forward_equals_the_recurrence_in_float64(name):
    inp = make_inputs(CASES[name])
    want = recurrence(inp, grads=False)
    o, ht = chunk_gated_delta_rule_fp64(*args(inp), **kwargs(inp), chunk_size=CHUNK)
    assert o.dtype == ht.dtype == F64
    assert rel(o, want["o"]) < TOL
    assert rel(ht, want["ht"]) < TOL


@pytest.mark.parametrize("name", list(CASES))
def test_gradients_equal_autograd_through_the_recurrence(name):
    inp = make_inputs(CASES[name])
    want = recurrence(inp, grads=True)
    got = reference_outputs(inp, grads=True, chunk_size=CHUNK)
    assert set(got) == set(want) == {"o", "ht", "dq", "dk", "dv", "dg", "dbeta"} | ({"dh0"} if inp.h0 is not None
                                                                                     else set())
    for n in want:
        assert torch.isfinite(got[n]).all(), n
        assert rel(got[n], want[n]) < TOL, n


def test_chunk_size_does_not_change_the_result():
    inp = make_inputs(CASES["varlen-ragged"])
    a = reference_outputs(inp, grads=True, chunk_size=8)
    b = reference_outputs(inp, grads=True, chunk_size=64)
    for n in a:
        assert rel(a[n], b[n]) < TOL, n


def test_decay_strong_enough_to_underflow_stays_finite_and_exact():
    # g ~ -60 per token: exp of a chunk's cumulative decay underflows to 0, which must not become NaN.
    inp = make_inputs(CASES["dense"])
    inp.g = inp.g * 0 - 60.0
    want = recurrence(inp, grads=True)
    got = reference_outputs(inp, grads=True, chunk_size=CHUNK)
    for n in want:
        assert torch.isfinite(got[n]).all(), n
        assert rel(got[n], want[n]) < TOL, n


def test_half_precision_inputs_are_cast_exactly():
    inp = make_inputs(CASES["gva4-fla"].with_(dtype="bfloat16"))
    o, ht = chunk_gated_delta_rule_fp64(*args(inp), **kwargs(inp), chunk_size=CHUNK)
    want = recurrence(inp, grads=False)  # the same bf16 values, cast to float64 before the recurrence
    assert o.dtype == F64
    assert rel(o, want["o"]) < TOL and rel(ht, want["ht"]) < TOL


# -- blocks of value heads --------------------------------------------------------------------------


@pytest.mark.parametrize("h_qk, h_v, fit, want", [
    (2, 8, 1, 1), (2, 8, 3, 2), (2, 8, 4, 4), (2, 8, 7, 4), (2, 8, 8, 8), (2, 8, 100, 8),
    (1, 6, 4, 3), (3, 6, 5, 4), (16, 64, 9, 8), (16, 64, 0, 1), (16, 64, 3, 2),
])
def test_a_block_is_whole_gva_groups_or_a_divisor_of_one(h_qk, h_v, fit, want):
    assert block_heads(h_qk, h_v, per_head=10, budget=10 * fit) == want


@pytest.mark.parametrize("h_qk, h_v, fit, sizes", [
    (2, 8, 1, [1] * 8), (2, 8, 2, [2] * 4), (2, 8, 4, [4, 4]), (2, 8, 8, [8]), (3, 6, 4, [4, 2]),
])
def test_any_block_size_gives_the_whole_reference(h_qk, h_v, fit, sizes):
    inp = make_inputs(point(layout="varlen", seqlens=(9, 40, 3), h_qk=h_qk, h_v=h_v, seed=11))
    per = bytes_per_head(3 * 64, 8, 16, grads=True)
    blocks = list(reference_blocks(inp, grads=True, budget=per * fit))
    assert [b.v_heads.stop - b.v_heads.start for b in blocks] == sizes
    assert min(b.v_heads.start for b in blocks) == 0 and max(b.v_heads.stop for b in blocks) == h_v
    got = reference_outputs(inp, grads=True, budget=per * fit)
    want = recurrence(inp, grads=True)
    for n in want:
        assert rel(got[n], want[n]) < TOL, n


@pytest.mark.parametrize("K, V", [(32, 32), (64, 16), (16, 64)])
def test_memory_estimate_covers_what_autograd_keeps(K, V):
    """bytes_per_head is an upper bound of the tensors the float64 graph holds for the backward."""
    T, H = 512, 2
    gen = torch.Generator().manual_seed(0)
    x = [torch.randn(1, T, H, d, generator=gen, dtype=F64).requires_grad_() for d in (K, K, V)]
    g = (-torch.rand(1, T, H, generator=gen, dtype=F64)).requires_grad_()
    beta = torch.rand(1, T, H, generator=gen, dtype=F64).requires_grad_()
    kept: dict[int, int] = {}

    def pack(t):
        kept[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        chunk_gated_delta_rule_fp64(*x, g, beta)
    assert sum(kept.values()) <= H * bytes_per_head(T, K, V, grads=True)


# -- the block-wise comparison -------------------------------------------------------------------------


def _perturbed(ref: dict, eps: float, seed: int = 0) -> dict:
    gen = torch.Generator().manual_seed(seed)
    return {n: (t * (1 + eps * torch.randn(t.shape, generator=gen, dtype=F64))).float() for n, t in ref.items()}


@pytest.mark.parametrize("heads_per_block", [1, 4, 8])
def test_block_wise_errors_equal_whole_tensor_errors(heads_per_block):
    inp = make_inputs(point(layout="varlen", seqlens=(30, 70), h_qk=2, h_v=8, seed=12))
    want_ref = recurrence(inp, grads=True)
    got = _perturbed(want_ref, 1e-3)
    want_errors, _ = compare(got, want_ref, "float32")
    per = bytes_per_head(2 * 64, 8, 16, grads=True)
    errors, failure = fp64_errors(got, inp, grads=True, dtype="float32", budget=per * heads_per_block)
    assert set(errors) == set(want_errors)
    for n, e in want_errors.items():
        assert errors[n] == pytest.approx(e, rel=1e-9), n
    assert failure is not None and "rel err" in failure  # 1e-3 is over the float32 tolerance


def test_block_wise_comparison_reports_nan_wrong_shapes_and_missing_outputs():
    inp = make_inputs(point(h_qk=1, h_v=4, seed=13))
    got = _perturbed(recurrence(inp, grads=True), 1e-9)
    got["dk"][0, 3, 0, 1] = math.nan
    got["dv"] = got["dv"][:, :-1]
    del got["ht"]
    errors, failure = fp64_errors(got, inp, grads=True, dtype="float32", budget=1)
    assert math.isnan(errors["dk"]) and errors["dv"] == math.inf and "ht" not in errors
    assert errors["o"] < 1e-6 and errors["dq"] < 1e-6  # float32 rounding of the perturbed copy
    assert "dk has NaN/Inf" in failure and "dv rel err inf" in failure and "missing outputs: ht" in failure


def test_head_dims_are_those_of_the_outputs():
    inp = make_inputs(point(h_qk=1, h_v=4, seed=14))
    out = reference_outputs(inp, grads=True)
    for n, d in HEAD_DIM.items():
        heads = inp.q.shape[2] if n in ("dq", "dk") else inp.v.shape[2]
        assert out[n].shape[d] == heads, n
