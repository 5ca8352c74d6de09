"""The naive kernels: the recurrence is pinned to the formula, and the chunked form equals it.

In float64 the chunked (WY) form and the token-by-token recurrence are the same function, so they
must agree to round-off (~1e-10 relative), outputs and gradients alike, on every shape the harness
produces: GVA, varlen with ragged lengths, initial states and each gate profile.
"""

from __future__ import annotations

import pytest
import torch

from qlabench.measure.inputs import make_inputs
from qlabench.backends.reference import chunk_gated_delta_rule, recurrent_gated_delta_rule
from qlabench.core.point import Point

F64 = torch.float64
TOL = 1e-10
CHUNK = 16  # small chunks so short sequences still span several of them


def rel(got: torch.Tensor, ref: torch.Tensor) -> float:
    assert got.shape == ref.shape
    return ((got.double() - ref.double()).norm() / ref.double().norm()).item()


def point(layout="dense", seqlens=(50, 50), h_qk=2, h_v=2, gate="flashqla", seed=0, initial_state=True, K=8, V=16):
    return Point(backend="naive-chunk", mode="fwd", layout=layout, batch=len(seqlens) if layout == "dense" else 1,
                 seqlens=seqlens, h_qk=h_qk, h_v=h_v, K=K, V=V, dtype="float64", gate=gate, seed=seed,
                 initial_state=initial_state)


CASES = {
    "dense": point(),
    "dense-no-h0": point(initial_state=False, seed=1),
    "gva2-fla": point(h_qk=1, h_v=2, gate="fla", seed=2),
    "gva4-strong": point(h_qk=2, h_v=8, gate="strong", seed=3, seqlens=(37,)),
    "varlen-ragged": point(layout="varlen", seqlens=(1, 37, 16, 5), h_qk=1, h_v=4, seed=4),
    "varlen-strong-no-h0": point(layout="varlen", seqlens=(23, 1, 40), h_qk=2, h_v=4, gate="strong", seed=5,
                                 initial_state=False),
    "varlen-fla-exact-chunks": point(layout="varlen", seqlens=(32, 16), gate="fla", seed=6),
    "K-neq-V": point(K=24, V=4, seqlens=(20, 20, 20), seed=7),
}


def args(inp):
    return (inp.q, inp.k, inp.v, inp.g, inp.beta)


def kwargs(inp):
    return dict(scale=inp.scale, initial_state=inp.h0, cu_seqlens=inp.cu_seqlens)


# -- the oracle itself ------------------------------------------------------------------------------


def hand_written(q, k, v, g, beta, scale, h0):
    """The defining loop, one value head and one token at a time: B = 1, plain 2-D algebra."""
    T, h_qk, K = q.shape[1:]
    h_v, V = v.shape[2:]
    group = h_v // h_qk
    o = torch.zeros(1, T, h_v, V, dtype=F64)
    finals = []
    for i in range(h_v):
        j = i // group  # the q/k head this value head shares
        S = h0[0, i].clone()
        for t in range(T):
            S = S * torch.exp(g[0, t, i])
            u = beta[0, t, i] * (v[0, t, i] - S.T @ k[0, t, j])
            S = S + torch.outer(k[0, t, j], u)
            o[0, t, i] = S.T @ (scale * q[0, t, j])
        finals.append(S)
    return o, torch.stack(finals)[None]


def test_recurrence_matches_the_formula():
    gen = torch.Generator().manual_seed(1234)
    T, h_qk, h_v, K, V = 6, 2, 4, 3, 5

    def randn(*s):
        return torch.randn(*s, generator=gen, dtype=F64)

    q, k, v = randn(1, T, h_qk, K), randn(1, T, h_qk, K), randn(1, T, h_v, V)
    # Distinct decays per head, so a wrong head mapping or a misplaced decay cannot go unnoticed.
    g = -torch.rand(1, T, h_v, generator=gen, dtype=F64) * torch.arange(1, h_v + 1, dtype=F64)
    beta = torch.rand(1, T, h_v, generator=gen, dtype=F64)
    h0 = randn(1, h_v, K, V)
    scale = 0.7
    want_o, want_S = hand_written(q, k, v, g, beta, scale, h0)
    o, S = recurrent_gated_delta_rule(q, k, v, g, beta, scale=scale, initial_state=h0, compute_dtype=F64)
    torch.testing.assert_close(o, want_o, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(S, want_S, rtol=1e-12, atol=1e-12)
    # The head mapping is i // (h_v / h_qk) (repeat_interleave), not i % h_qk: check it would differ.
    swapped = hand_written(q.flip(2), k.flip(2), v, g, beta, scale, h0)[0]
    assert rel(swapped, want_o) > 1e-3


def test_recurrence_default_scale_is_inverse_sqrt_k():
    inp = make_inputs(point(seqlens=(4,), K=16))
    o1, _ = recurrent_gated_delta_rule(*args(inp), initial_state=inp.h0, compute_dtype=F64)
    o2, _ = recurrent_gated_delta_rule(*args(inp), scale=16**-0.5, initial_state=inp.h0, compute_dtype=F64)
    torch.testing.assert_close(o1, o2, rtol=0, atol=0)


def test_varlen_equals_sequences_run_one_by_one():
    p = CASES["varlen-ragged"]
    inp = make_inputs(p)
    o, S = recurrent_gated_delta_rule(*args(inp), **kwargs(inp), compute_dtype=F64)
    bounds = inp.cu_seqlens.tolist()
    for n in range(len(bounds) - 1):
        s, e = bounds[n], bounds[n + 1]
        on, Sn = recurrent_gated_delta_rule(*(x[:, s:e] for x in args(inp)), scale=inp.scale,
                                            initial_state=inp.h0[n : n + 1], compute_dtype=F64)
        torch.testing.assert_close(o[:, s:e], on, rtol=0, atol=0)
        torch.testing.assert_close(S[n : n + 1], Sn, rtol=0, atol=0)


# -- chunked form == recurrence ----------------------------------------------------------------------


@pytest.mark.parametrize("name", list(CASES))
def test_chunk_forward_equals_recurrence(name):
    inp = make_inputs(CASES[name])
    o_ref, S_ref = recurrent_gated_delta_rule(*args(inp), **kwargs(inp), compute_dtype=F64)
    o, S = chunk_gated_delta_rule(*args(inp), **kwargs(inp), chunk_size=CHUNK)
    assert o.dtype == F64 and S.dtype == F64
    assert rel(o, o_ref) < TOL
    assert rel(S, S_ref) < TOL


@pytest.mark.parametrize("seed", [10, 11, 12])
@pytest.mark.parametrize("gate", ["flashqla", "fla", "strong"])
def test_chunk_forward_over_seeds_and_gates(seed, gate):
    inp = make_inputs(point(layout="varlen", seqlens=(9, 30), h_qk=1, h_v=2, gate=gate, seed=seed))
    o_ref, S_ref = recurrent_gated_delta_rule(*args(inp), **kwargs(inp), compute_dtype=F64)
    for chunk in (8, 64):
        o, S = chunk_gated_delta_rule(*args(inp), **kwargs(inp), chunk_size=chunk)
        assert rel(o, o_ref) < TOL
        assert rel(S, S_ref) < TOL


def _grads(fn, inp, do, dht, **extra):
    leaves = [x.detach().clone().requires_grad_(True) for x in args(inp)]
    h0 = None if inp.h0 is None else inp.h0.detach().clone().requires_grad_(True)
    o, S = fn(*leaves, scale=inp.scale, initial_state=h0, cu_seqlens=inp.cu_seqlens, **extra)
    wrt = leaves + ([h0] if h0 is not None else [])
    return torch.autograd.grad((o, S), wrt, (do, dht))


@pytest.mark.parametrize("name", list(CASES))
def test_chunk_gradients_equal_autograd_through_the_recurrence(name):
    inp = make_inputs(CASES[name])
    gen = torch.Generator().manual_seed(99)
    do = torch.randn(inp.v.shape, generator=gen, dtype=F64)
    dht = torch.randn(inp.dht.shape, generator=gen, dtype=F64)
    ref = _grads(recurrent_gated_delta_rule, inp, do, dht, compute_dtype=F64)
    got = _grads(chunk_gated_delta_rule, inp, do, dht, chunk_size=CHUNK)
    names = ["dq", "dk", "dv", "dg", "dbeta", "dh0"][: len(ref)]
    assert len(got) == len(ref) == (6 if inp.h0 is not None else 5)
    for n, a, b in zip(names, got, ref, strict=True):
        assert torch.isfinite(a).all(), n
        assert rel(a, b) < TOL, n


def test_chunk_casts_half_inputs_and_returns_o_in_their_dtype():
    inp = make_inputs(CASES["gva2-fla"]).to(torch.bfloat16)
    o, S = chunk_gated_delta_rule(*args(inp), **kwargs(inp), chunk_size=CHUNK)
    assert o.dtype == torch.bfloat16 and S.dtype == torch.float32
    o_ref, S_ref = recurrent_gated_delta_rule(*args(inp), **kwargs(inp), compute_dtype=torch.float32)
    assert rel(o, o_ref) < 0.02
    assert rel(S, S_ref) < 1e-4


def test_gva_needs_h_v_a_multiple_of_h_qk():
    inp = make_inputs(point(h_qk=2, h_v=4))
    with pytest.raises(ValueError, match="multiple"):
        recurrent_gated_delta_rule(inp.q, inp.k, inp.v[:, :, :3], inp.g[:, :, :3], inp.beta[:, :, :3])
