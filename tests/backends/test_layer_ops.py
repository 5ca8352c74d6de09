"""The torch ops of the layer: the gating formula, the causal short convolution and its state, the norms."""

from __future__ import annotations

import math

import pytest
import torch

from qlabench.backends.layer.ops import causal_conv, causal_conv_varlen, gated_rmsnorm, gating, l2norm


def test_gating_is_minus_exp_A_log_times_softplus_and_sigmoid_beta():
    a = torch.tensor([[0.0, 1.0, -2.0]])
    b = torch.tensor([[0.0, 2.0, -1.0]])
    A_log = torch.log(torch.tensor([2.0, 0.5, 8.0]))
    dt_bias = torch.tensor([1.0, 0.0, 3.0])
    g, beta = gating(a, b, A_log, dt_bias)
    for h in range(3):
        x = a[0, h].item() + dt_bias[h].item()
        assert g[0, h].item() == pytest.approx(-math.exp(A_log[h].item()) * math.log1p(math.exp(x)), rel=1e-6)
        assert beta[0, h].item() == pytest.approx(1 / (1 + math.exp(-b[0, h].item())), rel=1e-6)
    assert (g <= 0).all()  # a decay in log space
    assert g.dtype == beta.dtype == torch.float32


def test_gating_is_float32_from_bf16_inputs():
    a = torch.randn(2, 5, 4).to(torch.bfloat16)
    g, beta = gating(a, a, torch.zeros(4), torch.ones(4))
    assert g.dtype == torch.float32 and beta.dtype == torch.float32


def _conv_setup(T=12, C=6, K=4, seed=0):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(1, T, C, generator=gen, dtype=torch.float64)
    w = torch.randn(C, 1, K, generator=gen, dtype=torch.float64)
    state = torch.randn(1, C, K - 1, generator=gen, dtype=torch.float64)
    return x, w, state


def test_conv_is_causal_an_input_moves_only_its_own_and_the_next_three_outputs():
    x, w, state = _conv_setup()
    y, _ = causal_conv(x, w, state)
    t = 5
    x2 = x.clone()
    x2[:, t] += 1.0
    y2, _ = causal_conv(x2, w, state)
    changed = (y2 - y).abs().amax(dim=-1)[0] > 0
    assert changed.tolist() == [t <= i <= t + 3 for i in range(x.shape[1])]


def test_conv_matches_the_direct_sum_over_the_state_and_the_window():
    x, w, state = _conv_setup(T=5, C=3)
    y, new_state = causal_conv(x, w, state)
    stream = torch.cat([state[0].T, x[0]], dim=0)  # [3 + T, C]: the three earlier inputs, then x
    for t in range(5):
        direct = (stream[t:t + 4] * w[:, 0, :].T).sum(0)
        assert torch.allclose(y[0, t], torch.nn.functional.silu(direct))
    assert torch.equal(new_state[0], stream[-3:].T)


def test_a_decode_step_continues_the_prefill_through_the_conv_state():
    x, w, state = _conv_setup(T=9)
    full, full_state = causal_conv(x, w, state)
    head, st = causal_conv(x[:, :8], w, state)
    last, last_state = causal_conv(x[:, 8:], w, st)  # T = 1 against the state the prefill left
    assert torch.allclose(torch.cat([head, last], dim=1), full)
    assert torch.equal(last_state, full_state)


def test_varlen_conv_keeps_each_sequence_to_itself():
    x, w, _ = _conv_setup(T=10)
    states = torch.randn(2, x.shape[-1], 3, dtype=torch.float64)
    y, st = causal_conv_varlen(x, w, states, [0, 4, 10])
    y0, s0 = causal_conv(x[:, :4], w, states[:1])
    y1, s1 = causal_conv(x[:, 4:], w, states[1:])
    assert torch.allclose(y, torch.cat([y0, y1], dim=1))
    assert torch.equal(st, torch.cat([s0, s1]))


def test_l2norm_gives_unit_rows_in_the_input_dtype():
    x = torch.randn(2, 3, 4, 16).to(torch.bfloat16)
    n = l2norm(x)
    assert n.dtype == torch.bfloat16
    assert torch.allclose(n.float().norm(dim=-1), torch.ones(2, 3, 4), atol=1e-2)


def test_gated_rmsnorm_is_rmsnorm_times_weight_times_silu_z():
    o = torch.randn(2, 3, 8, dtype=torch.float64)
    z = torch.randn(2, 3, 8, dtype=torch.float64)
    w = torch.rand(8, dtype=torch.float64)
    got = gated_rmsnorm(o, z, w)
    rms = o.pow(2).mean(-1, keepdim=True).add(1e-6).sqrt()
    assert torch.allclose(got, o / rms * w * z * torch.sigmoid(z))
