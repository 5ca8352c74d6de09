"""Token-by-token gated delta rule: the correctness oracle.

For each value head, with state S (K x V), at every step t:
    S <- S * exp(g_t);  u = beta_t * (v_t - S^T k_t);  S <- S + k_t u^T;  o_t = S^T (scale * q_t)
It is written for clarity, not speed, and is differentiable through autograd. Dense batches step
all sequences together; packed (varlen) sequences run one after another.
"""

from __future__ import annotations

import torch

from qlabench.backends.reference._layout import expand_qk_heads, sequences


def _recur(q, k, v, g, beta, S, scale):
    """q, k: [B, T, H, K]; v: [B, T, H, V]; g, beta: [B, T, H]; S: [B, H, K, V]."""
    outs = []
    for t in range(q.shape[1]):
        S = S * g[:, t].exp()[..., None, None]
        u = beta[:, t, :, None] * (v[:, t] - torch.einsum("bhkv,bhk->bhv", S, k[:, t]))
        S = S + k[:, t, :, :, None] * u[:, :, None, :]
        outs.append(torch.einsum("bhkv,bhk->bhv", S, q[:, t] * scale))
    o = torch.stack(outs, dim=1) if outs else v.new_zeros(v.shape)
    return o, S


def recurrent_gated_delta_rule(
    q: torch.Tensor,  # [B, T, h_qk, K]
    k: torch.Tensor,  # [B, T, h_qk, K]
    v: torch.Tensor,  # [B, T, h_v, V]
    g: torch.Tensor,  # [B, T, h_v], log-space decay
    beta: torch.Tensor,  # [B, T, h_v]
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,  # [N, h_v, K, V]
    cu_seqlens: torch.Tensor | None = None,  # [N + 1], sequences packed in batch 1
    compute_dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Returns (o [B, T, h_v, V], final state [N, h_v, K, V]), both in compute_dtype."""
    B, T, h_v, V = v.shape
    K = q.shape[-1]
    scale = K**-0.5 if scale is None else scale
    cd = compute_dtype
    q, k = expand_qk_heads(q, h_v).to(cd), expand_qk_heads(k, h_v).to(cd)
    v, g, beta = v.to(cd), g.to(cd), beta.to(cd)
    h0 = None if initial_state is None else initial_state.to(cd)
    if cu_seqlens is None:
        S = h0 if h0 is not None else q.new_zeros(B, h_v, K, V)
        return _recur(q, k, v, g, beta, S, scale)
    outs, finals = [], []
    for n, (_, s, e) in enumerate(sequences(B, T, cu_seqlens)):
        S = h0[n : n + 1] if h0 is not None else q.new_zeros(1, h_v, K, V)
        o, S = _recur(q[:, s:e], k[:, s:e], v[:, s:e], g[:, s:e], beta[:, s:e], S, scale)
        outs.append(o)
        finals.append(S)
    return torch.cat(outs, dim=1), torch.cat(finals)
