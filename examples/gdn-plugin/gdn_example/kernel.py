"""A Gated DeltaNet forward in plain PyTorch, with FLA's `chunk_gated_delta_rule` calling convention.

    o, final_state = chunk_gated_delta_rule(q, k, v, g, beta, scale=None, initial_state=None,
                                            output_final_state=False, cu_seqlens=None)

q, k [B, T, H, K]; v [B, T, HV, V]; g (log-space decay) and beta [B, T, HV]; initial_state [N, HV, K, V];
cu_seqlens None (N = B dense sequences) or [N + 1] offsets of N sequences packed into B = 1.
Returns o [B, T, HV, V] and, with output_final_state, the final states [N, HV, K, V] (else None).

`chunk_gated_delta_rule_off` is the same kernel with its output 5% too large: a wrong kernel, which qlabench
reports as `incorrect` and never times.
"""

from __future__ import annotations

import torch


def _sequence(q, k, v, g, beta, scale, h):
    """One sequence: q, k [T, H, K], v [T, HV, V], g, beta [T, HV], h [HV, K, V] (float32); o [T, HV, V]."""
    hv = v.shape[1]
    rep = hv // q.shape[1]  # grouped value heads: each q/k head serves `rep` value heads
    q = q.repeat_interleave(rep, dim=1) * scale
    k = k.repeat_interleave(rep, dim=1)
    out = []
    for t in range(q.shape[0]):
        h = h * g[t].exp()[:, None, None]
        kt, vt = k[t], v[t]
        pred = torch.einsum("hk,hkv->hv", kt, h)
        h = h + torch.einsum("hk,hv->hkv", kt, beta[t][:, None] * (vt - pred))
        out.append(torch.einsum("hk,hkv->hv", q[t], h))
    return torch.stack(out), h


def chunk_gated_delta_rule(q, k, v, g, beta, scale=None, initial_state=None, output_final_state=False,
                           cu_seqlens=None):
    B, T, H, K = q.shape
    HV, V = v.shape[2], v.shape[3]
    scale = K ** -0.5 if scale is None else scale
    f32 = [x.float() for x in (q, k, v, g, beta)]
    if cu_seqlens is None:
        spans = [(b, 0, T) for b in range(B)]
    else:
        bounds = cu_seqlens.tolist()
        spans = [(0, s, e) for s, e in zip(bounds[:-1], bounds[1:])]
    o = torch.zeros(B, T, HV, V, dtype=torch.float32, device=q.device)
    finals = []
    for n, (b, s, e) in enumerate(spans):
        h = (initial_state[n].float() if initial_state is not None
             else torch.zeros(HV, K, V, dtype=torch.float32, device=q.device))
        o_n, h = _sequence(*(x[b, s:e] for x in f32), scale, h)
        o[b, s:e] = o_n
        finals.append(h)
    return o.to(v.dtype), (torch.stack(finals) if output_final_state else None)


def chunk_gated_delta_rule_off(q, k, v, g, beta, scale=None, initial_state=None, output_final_state=False,
                               cu_seqlens=None):
    o, ht = chunk_gated_delta_rule(q, k, v, g, beta, scale=scale, initial_state=initial_state,
                                   output_final_state=output_final_state, cu_seqlens=cu_seqlens)
    return o * 1.05, ht
