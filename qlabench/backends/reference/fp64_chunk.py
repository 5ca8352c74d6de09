"""Float64 chunked gated delta rule for full-size references: batched over heads, chunks and sequences.

The algebra of naive_chunk.py (the WY / UT form, an in-chunk unit-lower-triangular solve), arranged so
that 128k tokens cost a handful of batched matmuls plus one short loop:
- every chunk's in-chunk work (the solve, the chunk's transition and its outputs) is a batched matmul
  over (batch, head, chunk); the only Python loop is the chunk-to-chunk recursion, one batched
  (K x K) @ (K x V) product per chunk:
      S_{c+1} = M_c S_c + B_c,    M_c = exp(G_C) I - Kd^T Wk,    B_c = Kd^T Wv,
  with Wk, Wv the chunk's solves (naive_chunk.py) and Kd_j = exp(G_C - G_j) k_j;
  the outputs then come from the chunk-start states, all chunks at once;
- packed (varlen) sequences are each padded to a whole number of chunks and laid end to end, so no
  chunk spans two sequences; the recursion restarts from the sequence's h0 at its first chunk;
- states are kept per chunk (T / C of them, for the outputs and for autograd), never per token.
Every exponent is a difference G_i - G_j <= 0 or a cumulative G <= 0 (masked before exp), so strong
decay underflows to 0 where it should and never overflows. Differentiable by autograd.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from qlabench.backends.reference._layout import expand_qk_heads, sequences

F64 = torch.float64


def _masked_exp(diff: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    # Masked before exp: above the diagonal G_i - G_j > 0 may overflow, and inf * 0 is NaN.
    return diff.masked_fill(~mask, float("-inf")).exp()


def _scan(q, k, v, g, beta, segments, h0s, scale: float, C: int):
    """q, k: [B, Tp, H, K]; v: [B, Tp, H, V]; g, beta: [B, Tp, H]; Tp = n * C.

    `segments`: the (first, end) chunk range of each sequence; `h0s`: its initial state [B, H, K, V].
    Returns (o [B, Tp, H, V], one final state [B, H, K, V] per segment).
    """
    B, Tp, H, K = q.shape
    V = v.shape[-1]
    n = Tp // C
    q, k, v = (x.reshape(B, n, C, H, -1).permute(0, 3, 1, 2, 4) for x in (q, k, v))  # [B, H, n, C, *]
    g, beta = (x.reshape(B, n, C, H).permute(0, 3, 1, 2) for x in (g, beta))
    G = g.cumsum(-1)
    # decay_ij = exp(G_i - G_j), i > j; the diagonal's exp(0) = 1 is added as a constant (below) and the
    # tail exp(G_C - G_j) is summed from the g after j: a difference of equal cumsums would give dg a
    # term +x - x per token, which rounds away dg's true value where strong decay makes it tiny.
    idx = torch.arange(C, device=q.device)
    strict = idx[:, None] > idx[None, :]
    decay = _masked_exp(G[..., :, None] - G[..., None, :], strict)
    A = (beta[..., None] * (k @ k.transpose(-1, -2))) * decay
    eye_c = torch.eye(C, dtype=q.dtype, device=q.device)
    rhs = torch.cat([beta[..., None] * v, (beta * G.exp())[..., None] * k], dim=-1)
    sol = torch.linalg.solve_triangular(eye_c + A, rhs, upper=False, unitriangular=True)
    del A, rhs
    Wv, Wk = sol[..., :V], sol[..., V:]
    G_last = G[..., -1]  # [B, H, n]
    tail = F.pad(g[..., 1:].flip(-1).cumsum(-1).flip(-1), [0, 1])  # sum of g after j = G_C - G_j
    kd_t = (tail.exp()[..., None] * k).transpose(-1, -2)  # [B, H, n, K, C]
    M = G_last.exp()[..., None, None] * torch.eye(K, dtype=q.dtype, device=q.device) - kd_t @ Wk
    Bc = kd_t @ Wv
    del kd_t
    # Unbound once: indexing M[:, :, c] in the loop would make autograd build a zero tensor of M's full
    # size per chunk for its gradient (quadratic in the chunks); unbind's backward stacks them once.
    Ms, Bs = M.unbind(2), Bc.unbind(2)
    starts, finals = [], []
    for (c0, c1), S in zip(segments, h0s, strict=True):
        for c in range(c0, c1):
            starts.append(S)
            S = Bs[c] + Ms[c] @ S
        finals.append(S)
    S0 = torch.stack(starts, dim=2)  # [B, H, n, K, V]: the state each chunk starts from
    del starts
    U = Wv - Wk @ S0
    QK = (q @ k.transpose(-1, -2)) * (decay + eye_c)
    o = scale * ((G.exp()[..., None] * q) @ S0 + QK @ U)
    return o.permute(0, 2, 3, 1, 4).reshape(B, Tp, H, V), finals


def _packed_index(cu_seqlens: torch.Tensor, C: int, device) -> tuple[torch.Tensor, torch.Tensor, list]:
    """For packed sequences: the source token of each chunk-aligned slot, its validity, and each sequence's
    chunk range. Slot layout: sequence n's tokens, then zeros up to a multiple of C, then sequence n + 1."""
    src, valid, segments, c0 = [], [], [], 0
    for _, s, e in sequences(1, 0, cu_seqlens):
        n_chunks = -(-(e - s) // C)
        pad = n_chunks * C - (e - s)
        src += [torch.arange(s, e), torch.zeros(pad, dtype=torch.long)]
        valid += [torch.ones(e - s, dtype=torch.bool), torch.zeros(pad, dtype=torch.bool)]
        segments.append((c0, c0 + n_chunks))
        c0 += n_chunks
    return torch.cat(src).to(device), torch.cat(valid).to(device), segments


def chunk_gated_delta_rule_fp64(
    q: torch.Tensor,  # [B, T, h_qk, K]
    k: torch.Tensor,  # [B, T, h_qk, K]
    v: torch.Tensor,  # [B, T, h_v, V]
    g: torch.Tensor,  # [B, T, h_v], log-space decay
    beta: torch.Tensor,  # [B, T, h_v]
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,  # [N, h_v, K, V]
    cu_seqlens: torch.Tensor | None = None,  # [N + 1], sequences packed in batch 1
    chunk_size: int = 64,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The contract of `recurrent_gated_delta_rule`, computed in float64: (o [B, T, h_v, V], final state
    [N, h_v, K, V]), both float64, whatever the inputs' dtypes (they are cast exactly)."""
    B, T, h_v, V = v.shape
    K = q.shape[-1]
    C = chunk_size
    scale = K**-0.5 if scale is None else scale
    q, k = expand_qk_heads(q, h_v).to(F64), expand_qk_heads(k, h_v).to(F64)
    v, g, beta = v.to(F64), g.to(F64), beta.to(F64)
    h0 = None if initial_state is None else initial_state.to(F64)
    if cu_seqlens is None:
        Tp = -(-T // C) * C
        xs = [F.pad(x, [0, 0] * (x.dim() - 2) + [0, Tp - T]) for x in (q, k, v, g, beta)]
        S = h0 if h0 is not None else q.new_zeros(B, h_v, K, V)
        o, finals = _scan(*xs, [(0, Tp // C)], [S], scale, C)
        return o[:, :T], finals[0]
    src, valid, segments = _packed_index(cu_seqlens, C, q.device)
    mask = valid[None, :, None]
    xs = [x[:, src] * (mask[..., None] if x.dim() == 4 else mask) for x in (q, k, v, g, beta)]
    # split, not a slice per sequence: each slice's backward would be a zero tensor of h0's full size
    h0s = list(h0.split(1)) if h0 is not None else [q.new_zeros(1, h_v, K, V)] * len(segments)
    o, finals = _scan(*xs, segments, h0s, scale, C)
    return o[:, valid], torch.cat(finals)
