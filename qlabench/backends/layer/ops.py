"""The torch ops of one Qwen3.5 Gated DeltaNet layer around a core, and its random weights.

The layer, as a serving or training step runs its token mixer on one GPU's shard (docs/LAYER.md):
    qkvz = x W_qkvz^T, ba = x W_ba^T                 input projections (two GEMMs)
    q, k, v = silu(causal depthwise conv4(qkv))       the short convolution, from a conv state
    q, k = l2norm(q), l2norm(k)
    g = -exp(A_log) * softplus(a + dt_bias), beta = sigmoid(b)      in float32
    o, ht = core(q, k, v, g, beta, h0)               the GDN kernel under test
    y = (rmsnorm(o) * silu(z)) W_o^T                 gated RMSNorm, output projection
Qwen3.5 checkpoints keep four input projections (qkv, z, b, a) where Qwen3-Next had two; serving
engines merge them into the two GEMMs timed here, and the FLOPs are the same. The q|k|v|z and b|a
blocks are contiguous (the checkpoints interleave them per key head group, a weight-loading detail
that changes no shape and no cost).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from qlabench.core.layer_shapes import LayerShapes

NORM_EPS = 1e-6  # rms_norm_eps of the Qwen3.5 configs
L2NORM_EPS = 1e-6


@dataclass
class LayerWeights:
    """One layer shard's parameters, all random (init below); projections and conv in the point's dtype,
    A_log, dt_bias and the norm weight in float32 as the checkpoints keep them."""

    w_qkvz: torch.Tensor  # [qkvz_out, hidden]
    w_ba: torch.Tensor  # [2 h_v, hidden]
    conv: torch.Tensor  # [conv_dim, 1, conv_kernel]
    A_log: torch.Tensor  # [h_v]
    dt_bias: torch.Tensor  # [h_v]
    norm: torch.Tensor  # [V]
    w_o: torch.Tensor  # [hidden, h_v V]


def random_weights(s: LayerShapes, dtype: torch.dtype, gen: torch.Generator, device) -> LayerWeights:
    """Random weights, drawn in float32 (so every dtype sees the same values) and cast.

    Projections: normal with std fan_in^-1/2, which keeps every activation near unit scale (a trained
    layer's are too; the time does not depend on the values). Conv: uniform(+-1/sqrt(kernel)), torch's
    default Conv1d bound. A_log = log(uniform(0, 16)) and dt_bias = 1, norm weight 1: the Qwen3-Next
    reference initialisation (transformers' Qwen3NextGatedDeltaNet).
    """
    def normal(*shape, std):
        return (torch.randn(shape, generator=gen, device=device) * std).to(dtype)

    conv = (torch.rand((s.conv_dim, 1, s.conv_kernel), generator=gen, device=device) * 2 - 1) / math.sqrt(s.conv_kernel)
    A = torch.rand((s.h_v,), generator=gen, device=device) * 16
    return LayerWeights(
        w_qkvz=normal(s.qkvz_out, s.hidden, std=s.hidden ** -0.5),
        w_ba=normal(s.ba_out, s.hidden, std=s.hidden ** -0.5),
        conv=conv.to(dtype),
        A_log=torch.log(A.clamp_min(1e-4)),
        dt_bias=torch.ones(s.h_v, device=device),
        norm=torch.ones(s.V, device=device),
        w_o=normal(s.hidden, s.o_in, std=s.o_in ** -0.5),
    )


def gating(a: torch.Tensor, b: torch.Tensor, A_log: torch.Tensor,
           dt_bias: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(g, beta) in float32: g = -exp(A_log) * softplus(a + dt_bias) (log-space decay, <= 0), beta = sigmoid(b)."""
    g = -A_log.float().exp() * F.softplus(a.float() + dt_bias.float())
    return g, b.float().sigmoid()


def causal_conv(x: torch.Tensor, weight: torch.Tensor, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """silu(causal depthwise conv) of x [B, T, C] continuing from `state` [B, C, kernel - 1] (the previous
    kernel - 1 inputs of each sequence; zeros for a fresh prompt). Returns (y [B, T, C], the new state):
    output t sees inputs t - kernel + 1 .. t only."""
    C, km1 = x.shape[-1], weight.shape[-1] - 1
    xp = torch.cat([state.to(x.dtype), x.transpose(1, 2)], dim=-1)  # [B, C, km1 + T]
    y = F.conv1d(xp, weight, groups=C)  # [B, C, T]: "valid" over the padded stream is causal
    return F.silu(y).transpose(1, 2).contiguous(), xp[..., xp.shape[-1] - km1:]


def causal_conv_varlen(x: torch.Tensor, weight: torch.Tensor, state: torch.Tensor,
                       bounds: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """`causal_conv` of a packed batch-1 stream x [1, T, C], sequence by sequence (one conv per sequence:
    no sequence sees another's tokens); state [N, C, kernel - 1]; `bounds` the cu_seqlens as a list (read
    once, ahead: a device-to-host copy inside the call would break CUDA-graph capture)."""
    ys, states = [], []
    for i in range(len(bounds) - 1):
        y, st = causal_conv(x[:, bounds[i]:bounds[i + 1]], weight, state[i:i + 1])
        ys.append(y)
        states.append(st)
    return torch.cat(ys, dim=1), torch.cat(states, dim=0)


def l2norm(x: torch.Tensor) -> torch.Tensor:
    """x / ||x|| over the head dim, computed in float32, returned in x's dtype."""
    return F.normalize(x.float(), dim=-1, eps=L2NORM_EPS).to(x.dtype)


def gated_rmsnorm(o: torch.Tensor, z: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """rmsnorm(o) * weight * silu(z) over the head dim, in float32, returned in o's dtype."""
    o32 = o.float()
    o32 = o32 * torch.rsqrt(o32.pow(2).mean(-1, keepdim=True) + NORM_EPS) * weight
    return (o32 * F.silu(z.float())).to(o.dtype)
