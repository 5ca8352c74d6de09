"""Chunked gated delta rule in plain PyTorch (the WY / UT-transform form), differentiable by autograd.

Within a chunk of C tokens starting from state S0, with G_i the in-chunk cumulative log-decay:
    (I + A) U = diag(beta) V - diag(beta * exp(G)) K S0,   A_ij = beta_i (k_i . k_j) exp(G_i - G_j), j < i
so U = T (beta V) - T (beta exp(G) K) S0 with T = (I + A)^-1 (unit lower-triangular solve). Then
    O   = scale * (exp(G) Q S0 + (Q K^T * M) U),            M_ij = exp(G_i - G_j), j <= i
    S_C = exp(G_C) S0 + K^T diag(exp(G_C - G_j)) U.
Tokens are padded to a multiple of C with k = v = g = beta = 0, which leaves the state unchanged.
bf16/fp16 inputs are computed in float32 (the triangular solve has no half-precision kernel).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from qlabench.backends.reference._layout import expand_qk_heads, sequences


def _masked_exp(diff: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    # Mask *before* exp: above the diagonal G_i - G_j is positive and can overflow to inf,
    # and inf * 0 would put NaNs into the values and the gradients.
    return diff.masked_fill(~mask, float("-inf")).exp()


def _chunked(q, k, v, g, beta, S, scale, C):
    """q, k: [B, T, H, K]; v: [B, T, H, V]; g, beta: [B, T, H]; S: [B, H, K, V]; T % C == 0."""
    B, T, H, K = q.shape
    V = v.shape[-1]
    n = T // C
    # -> [B, H, n, C, *]
    q, k, v = (x.reshape(B, n, C, H, -1).permute(0, 3, 1, 2, 4) for x in (q, k, v))
    g, beta = (x.reshape(B, n, C, H).permute(0, 3, 1, 2) for x in (g, beta))
    G = g.cumsum(-1)
    diff = G[..., :, None] - G[..., None, :]
    idx = torch.arange(C, device=q.device)
    strict = idx[:, None] > idx[None, :]
    incl = idx[:, None] >= idx[None, :]
    A = (beta[..., None] * (k @ k.transpose(-1, -2))) * _masked_exp(diff, strict)
    eye = torch.eye(C, dtype=q.dtype, device=q.device)
    # T = (I + A)^-1 applied to [beta V | beta exp(G) K] in one unit-lower-triangular solve.
    rhs = torch.cat([beta[..., None] * v, (beta * G.exp())[..., None] * k], dim=-1)
    sol = torch.linalg.solve_triangular(eye + A, rhs, upper=False, unitriangular=True)
    Wv, Wk = sol[..., :V], sol[..., V:]
    QK = (q @ k.transpose(-1, -2)) * _masked_exp(diff, incl)
    decay_q = G.exp()[..., None] * q
    decay_k = (G[..., -1:] - G).exp()[..., None] * k
    outs = []
    for c in range(n):
        U = Wv[:, :, c] - Wk[:, :, c] @ S
        outs.append(scale * (decay_q[:, :, c] @ S + QK[:, :, c] @ U))
        S = G[:, :, c, -1].exp()[..., None, None] * S + decay_k[:, :, c].transpose(-1, -2) @ U
    o = torch.stack(outs, dim=2).reshape(B, H, T, V).transpose(1, 2)
    return o, S


def _pad_time(x: torch.Tensor, T_pad: int) -> torch.Tensor:
    extra = T_pad - x.shape[1]
    if extra == 0:
        return x
    pad = [0, 0] * (x.dim() - 2) + [0, extra]
    return F.pad(x, pad)


def chunk_gated_delta_rule(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    beta: torch.Tensor,
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,
    cu_seqlens: torch.Tensor | None = None,
    chunk_size: int = 64,
    compute_dtype: torch.dtype | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Same contract as `recurrent_gated_delta_rule`: (o in v's dtype, final state in compute dtype)."""
    B, T, h_v, V = v.shape
    K = q.shape[-1]
    scale = K**-0.5 if scale is None else scale
    cd = compute_dtype or (q.dtype if q.dtype in (torch.float32, torch.float64) else torch.float32)
    out_dtype = v.dtype
    q, k = expand_qk_heads(q, h_v).to(cd), expand_qk_heads(k, h_v).to(cd)
    v, g, beta = v.to(cd), g.to(cd), beta.to(cd)
    h0 = None if initial_state is None else initial_state.to(cd)

    def run(qs, ks, vs, gs, bs, S):
        L = qs.shape[1]
        Lp = -(-L // chunk_size) * chunk_size
        o, S = _chunked(*(_pad_time(x, Lp) for x in (qs, ks, vs, gs, bs)), S, scale, chunk_size)
        return o[:, :L], S

    if cu_seqlens is None:
        S = h0 if h0 is not None else q.new_zeros(B, h_v, K, V)
        o, S = run(q, k, v, g, beta, S)
        return o.to(out_dtype), S
    outs, finals = [], []
    for n, (_, s, e) in enumerate(sequences(B, T, cu_seqlens)):
        S = h0[n : n + 1] if h0 is not None else q.new_zeros(1, h_v, K, V)
        o, S = run(q[:, s:e], k[:, s:e], v[:, s:e], g[:, s:e], beta[:, s:e], S)
        outs.append(o)
        finals.append(S)
    return torch.cat(outs, dim=1).to(out_dtype), torch.cat(finals)
