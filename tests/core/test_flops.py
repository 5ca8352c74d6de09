"""FLOP and byte model: hand-computed tiny cases, an op-counting chunked forward checked against the
recurrence, and the measured-peak arithmetic."""

from __future__ import annotations

import math

import pytest
import torch

from qlabench.core.flops import (
    backward_chunk_flops,
    bytes_moved,
    flops,
    forward_chunk_flops,
    num_chunks,
    peak_fractions,
    state_bytes,
    throughput,
    triangular_inverse_flops,
)
from qlabench.measure.probes.peaks import Peaks, copy_gbps, matmul_tflops, measure_peaks
from qlabench.core.point import Point


def pt(**kw) -> Point:
    base = dict(backend="naive-chunk", mode="fwd", layout="dense", batch=1, seqlens=(64,), h_qk=1, h_v=2,
                K=128, V=128, dtype="bfloat16")
    base.update(kw)
    return Point(**base)


# -- FLOPs ------------------------------------------------------------------------------------------
def test_forward_chunk_flops_hand_computed():
    # C=4, K=2, V=3: A 2*16*2=64, inverse 4*3*2/3=8, W 64, U' 2*16*3=96, W S 2*4*2*3=48, Q S 48,
    # Q K^T 64, (P o M) U 96, K^T U 48.
    assert forward_chunk_flops(4, 2, 3) == 64 + 8 + 64 + 96 + 48 + 48 + 64 + 96 + 48 == 536


def test_backward_chunk_flops_hand_computed():
    # 16 C^2 K + 10 C^2 V + 16 C K V + 4 C^3 at C=4, K=2, V=3.
    assert backward_chunk_flops(4, 2, 3) == 16 * 32 + 10 * 48 + 16 * 24 + 4 * 64 == 1632


def _count_inverse(C: int) -> int:
    """Multiply-adds of forward substitution for (I + A)^-1, counted by actually doing it."""
    A = torch.tril(torch.rand(C, C, dtype=torch.float64), -1)
    T = torch.eye(C, dtype=torch.float64)
    madds = 0
    for i in range(C):
        for j in range(i):
            acc = -A[i, j]
            for m in range(j + 1, i):
                acc = acc - A[i, m] * T[m, j]
                madds += 1
            T[i, j] = acc
    assert torch.allclose(T @ (torch.eye(C, dtype=torch.float64) + A), torch.eye(C, dtype=torch.float64))
    return madds


@pytest.mark.parametrize("C", [1, 2, 3, 4, 7, 16])
def test_triangular_inverse_flops_match_a_counted_solve(C):
    assert triangular_inverse_flops(C) == 2 * _count_inverse(C)


def _counted_chunked_forward(q, k, v, g, beta, S, C):
    """One head's chunked forward with every matmul's FLOPs counted (2 m k n each); q,k: [T,K], v: [T,V]."""
    count = [0]

    def mm(a, b):
        count[0] += 2 * a.shape[0] * a.shape[1] * b.shape[1]
        return a @ b

    T_len = k.shape[0]
    idx = torch.arange(C)
    strict, incl = idx[:, None] > idx[None, :], idx[:, None] >= idx[None, :]
    outs = []
    for s in range(0, T_len, C):
        qc, kc, vc, bc = q[s:s + C], k[s:s + C], v[s:s + C], beta[s:s + C]
        G = g[s:s + C].cumsum(0)
        diff = G[:, None] - G[None, :]
        A = mm(bc[:, None] * kc, kc.T) * diff.masked_fill(~strict, -math.inf).exp()
        Tinv = torch.linalg.inv(torch.eye(C, dtype=q.dtype) + A)  # counted by the inverse formula
        W = mm(Tinv, (bc * G.exp())[:, None] * kc)
        Up = mm(Tinv, bc[:, None] * vc)
        U = Up - mm(W, S)
        P = mm(qc, kc.T) * diff.masked_fill(~incl, -math.inf).exp()
        outs.append(mm(G.exp()[:, None] * qc, S) + mm(P, U))
        S = G[-1].exp() * S + mm(((G[-1] - G).exp()[:, None] * kc).T, U)
    count[0] += (T_len // C) * triangular_inverse_flops(C)
    return torch.cat(outs), S, count[0]


def test_forward_model_counts_a_correct_chunked_algorithm():
    from qlabench.backends.reference import recurrent_gated_delta_rule

    torch.manual_seed(0)
    C, T, K, V = 8, 32, 4, 6
    q = torch.nn.functional.normalize(torch.randn(T, K, dtype=torch.float64), dim=-1)
    k = torch.nn.functional.normalize(torch.randn(T, K, dtype=torch.float64), dim=-1)
    v = torch.randn(T, V, dtype=torch.float64)
    g = -torch.rand(T, dtype=torch.float64) * 0.1
    beta = torch.rand(T, dtype=torch.float64)
    S0 = torch.randn(K, V, dtype=torch.float64)
    o, S, counted = _counted_chunked_forward(q, k, v, g, beta, S0, C)
    ref_o, ref_S = recurrent_gated_delta_rule(q[None, :, None], k[None, :, None], v[None, :, None],
                                              g[None, :, None], beta[None, :, None], scale=1.0,
                                              initial_state=S0[None, None], compute_dtype=torch.float64)
    assert torch.allclose(o, ref_o[0, :, 0], atol=1e-10)
    assert torch.allclose(S, ref_S[0, 0], atol=1e-10)
    assert counted == (T // C) * forward_chunk_flops(C, K, V)


def test_flops_scale_with_value_heads_and_padded_chunks_not_qk_heads():
    one = flops(pt(h_qk=1, h_v=2))
    assert one == 2 * forward_chunk_flops(64, 128, 128)
    assert flops(pt(h_qk=2, h_v=2)) == one  # GVA: work is per value head
    assert flops(pt(h_v=4, h_qk=1)) == 2 * one
    # varlen 10 + 70 tokens: 1 + 2 chunks, partial chunks padded to whole ones
    v = pt(layout="varlen", seqlens=(10, 70))
    assert num_chunks(v) == 3
    assert flops(v) == 3 * 2 * forward_chunk_flops(64, 128, 128)


def test_modes_add_up_and_backward_is_two_to_three_forwards():
    f, b, fb = (flops(pt(mode=m)) for m in ("fwd", "bwd", "fwd_bwd"))
    assert fb == f + b
    assert 2.0 <= b / f <= 3.0  # the documented recompute model at C=64, K=V=128


# -- bytes ------------------------------------------------------------------------------------------
def test_forward_bytes_hand_computed():
    # 64 tokens, h_qk=1, h_v=2, K=V=128, bf16 q/k/v/o, fp32 g/beta/states, one sequence:
    q = k = 64 * 1 * 128 * 2
    v = o = 64 * 2 * 128 * 2
    g = beta = 64 * 2 * 4
    h0 = ht = 1 * 2 * 128 * 128 * 4
    assert bytes_moved(pt()) == q + k + v + g + beta + h0 + o + ht
    assert bytes_moved(pt(initial_state=False)) == q + k + v + g + beta + o + ht


def test_backward_and_fused_bytes_count_each_tensor_once():
    p = pt()
    q = 64 * 128 * 2
    v = 64 * 2 * 128 * 2
    g = 64 * 2 * 4
    st = 2 * 128 * 128 * 4
    inputs = 2 * q + v + 2 * g + st
    grads = 2 * q + v + 2 * g + st
    assert bytes_moved(p.with_(mode="bwd")) == inputs + v + st + grads  # + do, dht
    assert bytes_moved(p.with_(mode="fwd_bwd")) == inputs + v + st + grads + v + st  # + o, ht


def test_state_bytes_are_opt_in():
    p = pt(seqlens=(256,))
    extra = 4 * 2 * 128 * 128 * 2  # 4 chunks, 2 heads, bf16 states
    assert state_bytes(p) == extra
    assert bytes_moved(p, include_states=True) - bytes_moved(p) == extra
    fb = p.with_(mode="fwd_bwd")
    assert bytes_moved(fb, include_states=True) - bytes_moved(fb) == 2 * extra


def test_float32_points_use_four_byte_elements():
    assert bytes_moved(pt(dtype="float32")) - bytes_moved(pt()) == (2 * 64 * 128 + 2 * 64 * 2 * 128) * 2


# -- throughput and peaks ---------------------------------------------------------------------------
def test_throughput_units():
    p = pt()
    tf, gb = throughput(p, 1.0)  # one millisecond
    assert tf == pytest.approx(flops(p) * 1e3 / 1e12)
    assert gb == pytest.approx(bytes_moved(p) * 1e3 / 1e9)
    tf2, gb2 = throughput(p, 2.0)
    assert tf2 == pytest.approx(tf / 2) and gb2 == pytest.approx(gb / 2)
    assert throughput(p, None) == (None, None)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            throughput(p, bad)


def test_peak_fractions():
    assert peak_fractions(400.0, 2400.0, Peaks(tflops=800.0, gbps=4800.0)) == (0.5, 0.5)
    assert peak_fractions(400.0, None, Peaks(tflops=800.0, gbps=4800.0)) == (0.5, None)
    assert peak_fractions(400.0, 2400.0, Peaks(tflops=None, gbps=4800.0)) == (None, 0.5)
    assert peak_fractions(400.0, 2400.0, None) == (None, None)


def test_peak_arithmetic():
    assert matmul_tflops(1000, 1.0) == pytest.approx(2.0)  # 2e9 FLOPs in 1 ms
    assert copy_gbps(10**9, 2.0) == pytest.approx(1000.0)  # 1 GB read + 1 GB written in 2 ms


def test_measure_peaks_is_none_without_cuda():
    assert measure_peaks("cpu") is None


@pytest.mark.gpu
def test_measure_peaks_on_the_gpu_are_plausible():
    p = measure_peaks("cuda", matmul_n=4096, copy_bytes=1 << 28, reps=3, trials=2)
    assert p is not None and p.tflops > 10 and p.gbps > 100
    # each HBM peak is the best of its kernels, every kernel counted (Triton's included: the GPU host has it)
    reads, writes = dict(p.read_kernels), dict(p.write_kernels)
    assert p.read_tbs == max(v for v in reads.values() if v) and reads[p.read_kernel] == p.read_tbs
    assert p.write_tbs == max(v for v in writes.values() if v) and writes[p.write_kernel] == p.write_tbs
    assert not p.kernel_errors, p.kernel_errors
    assert p.stream_bytes >= 1 << 30 and 0.5 < p.read_tbs < 20 and 0.5 < p.write_tbs < 20
