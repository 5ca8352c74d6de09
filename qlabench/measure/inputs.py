"""Deterministic inputs for a point: q, k (l2-normalised), v, gate g, beta, initial state, cu_seqlens.

Layout follows FLA and FlashQLA: [B, T, H, D] with the time axis second; varlen points pack their
sequences into batch 1 and pass int32 `cu_seqlens`. g and beta are float32, as in FlashQLA's table.

A serving point (decode, mtp) also gets its state pool, as an engine keeps it: `pool` holds `point.pool`
random states in the point's state dtype and layout, and `slots` [R, B] int32 addresses the batch's
states in it, R disjoint rotations (R = pool // batch) so a timed loop can cycle through the pool instead
of re-reading one batch's states from L2. `h0` is then pool[slots[0]] in float32 and the canonical
[B, HV, K, V] layout: exactly the values the kernel starts from, for the oracle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import torch
import torch.nn.functional as F

from qlabench.core.errors import PointError
from qlabench.core.point import FLASHQLA_GATE_SCALE, Point, flashqla_zero_heads

TORCH_DTYPES = {
    "float64": torch.float64,
    "float32": torch.float32,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
}


@dataclass
class GDNInputs:
    q: torch.Tensor  # [B, T, h_qk, K]
    k: torch.Tensor  # [B, T, h_qk, K]
    v: torch.Tensor  # [B, T, h_v, V]
    g: torch.Tensor  # [B, T, h_v] float32, log-space decay (<= 0)
    beta: torch.Tensor  # [B, T, h_v] float32
    h0: torch.Tensor | None  # [N, h_v, K, V] float32
    cu_seqlens: torch.Tensor | None  # [N + 1] int32, varlen only
    scale: float
    do: torch.Tensor  # gradient of o for backward modes
    dht: torch.Tensor  # gradient of the final state
    pool: torch.Tensor | None = None  # serving: [P, HV, K, V] ("kv") or [P, HV, V, K] ("vk") in the state dtype
    slots: torch.Tensor | None = None  # serving: [R, B] int32, R disjoint rotations of the batch's slots
    state_layout: str | None = None  # serving: the pool's layout, "kv" or "vk"

    def to(self, dtype: torch.dtype | None = None, device=None) -> GDNInputs:
        """A copy with floating tensors cast to `dtype` (None keeps each tensor's dtype). The state pool keeps
        its dtype: it is what the serving kernel reads, and the references start from `h0`."""
        out = {}
        for f in fields(self):
            x = getattr(self, f.name)
            if isinstance(x, torch.Tensor):
                cast = dtype and x.is_floating_point() and f.name != "pool"
                x = x.to(device=device or x.device, dtype=dtype if cast else x.dtype)
            out[f.name] = x
        return GDNInputs(**out)


def _gate(point: Point, shape: tuple[int, int, int], gen: torch.Generator, device) -> torch.Tensor:
    B, T, H = shape
    if point.gate == "flashqla":
        # FlashQLA's benchmark: logsigmoid(randn) / 16, then a random 25% of value heads get g = 0
        # (h_v - ceil(0.75 * h_v) of them). The point's gate_scale / gate_zero_frac replace 16 / 0.25.
        scale = FLASHQLA_GATE_SCALE if point.gate_scale is None else point.gate_scale
        g = F.logsigmoid(torch.randn(shape, generator=gen, device=device)) / scale
        n_zero = flashqla_zero_heads(H, point.gate_zero_frac)
        if n_zero:
            heads = torch.randperm(H, generator=gen, device=device)[:n_zero]
            g[:, :, heads] = 0
        return g
    if point.gate == "fla":
        return F.logsigmoid(torch.rand(shape, generator=gen, device=device))
    if point.gate == "strong":
        # Mamba-style strong decay: -A * softplus(x) with per-head A log-spaced in [1, 16].
        A = torch.logspace(0, math.log10(16), H, device=device)
        return -A * F.softplus(torch.randn(shape, generator=gen, device=device))
    raise PointError(f"unknown gate profile {point.gate!r}")


def make_inputs(point: Point, device: str | torch.device = "cpu", seqlens: tuple[int, ...] | None = None) -> GDNInputs:
    """Inputs for `point` (or for the same point with other `seqlens`, e.g. a reduced check)."""
    seqlens = tuple(seqlens or point.seqlens)
    device = torch.device(device)
    gen = torch.Generator(device=device).manual_seed(point.seed)
    if point.layout == "dense":
        B, T = len(seqlens), seqlens[0]
        cu = None
    else:
        B, T = 1, sum(seqlens)
        cu = torch.tensor([0, *torch.tensor(seqlens).cumsum(0).tolist()], dtype=torch.int32, device=device)
    N = len(seqlens)
    dt = TORCH_DTYPES[point.dtype]
    # Draw in float32 (float64 for float64 points) so every dtype sees the same values, then cast.
    base = torch.float64 if dt == torch.float64 else torch.float32

    def randn(*shape):
        return torch.randn(shape, generator=gen, device=device, dtype=base)

    q = F.normalize(randn(B, T, point.h_qk, point.K), dim=-1).to(dt)
    k = F.normalize(randn(B, T, point.h_qk, point.K), dim=-1).to(dt)
    v = randn(B, T, point.h_v, point.V).to(dt)
    g = _gate(point, (B, T, point.h_v), gen, device).to(base)
    beta = _beta(point, randn(B, T, point.h_v))
    h0 = randn(N, point.h_v, point.K, point.V) if point.initial_state else None
    do = randn(B, T, point.h_v, point.V).to(dt)
    dht = randn(N, point.h_v, point.K, point.V)
    pool = slots = None
    if point.is_serving:  # drawn last, so a prefill point's draws do not depend on the serving axes
        pool, slots = state_pool(point, N, randn, gen, device)
        h0 = canonical_states(pool[slots[0].long()], point.state_layout)
    return GDNInputs(q=q, k=k, v=v, g=g, beta=beta, h0=h0, cu_seqlens=cu, scale=point.K**-0.5, do=do, dht=dht,
                     pool=pool, slots=slots, state_layout=point.state_layout)


# beta_regime "low"/"high": sigmoid(randn) squeezed into the last BETA_EDGE of [0, 1] at either end.
BETA_EDGE = 0.05


def _beta(point: Point, z: torch.Tensor) -> torch.Tensor:
    b = z.sigmoid()
    if point.beta_regime == "low":
        return b * BETA_EDGE
    if point.beta_regime == "high":
        return 1.0 - b * BETA_EDGE
    return b


def state_pool(point: Point, batch: int, randn, gen: torch.Generator, device) -> tuple[torch.Tensor, torch.Tensor]:
    """A serving point's pool of `point.pool` random states (its dtype and layout) and its slot rotations."""
    P, HV, K, V = point.pool, point.h_v, point.K, point.V
    states = randn(P, HV, K, V)
    if point.state_layout == "vk":
        states = states.transpose(-1, -2)
    pool = states.to(TORCH_DTYPES[point.state_dtype]).contiguous()
    rotations = max(1, P // batch)
    perm = torch.randperm(P, generator=gen, device=device)[: rotations * batch]
    return pool, perm.view(rotations, batch).to(torch.int32)


def canonical_states(states: torch.Tensor, layout: str) -> torch.Tensor:
    """States of the pool's layout as float32 [.., HV, K, V], qlabench's canonical layout."""
    states = states.float()
    return (states.transpose(-1, -2) if layout == "vk" else states).contiguous()


@dataclass
class RawGates:
    """A GDN layer's raw gate inputs, from which an engine or a kernel computes the decay: Qwen3.5's gating
    (`gdn_gate`). `a` [B, T, HV] float32 (the projection's output), `A_log` and `dt_bias` [HV] float32."""

    A_log: torch.Tensor
    dt_bias: torch.Tensor
    a: torch.Tensor


def gdn_gate(A_log: torch.Tensor, dt_bias: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """The log-space decay g = -exp(A_log) * softplus(a + dt_bias) in float32 (softplus with beta 1 and
    threshold 20): vLLM 0.34's fused_post_conv_prep and FlashInfer 0.7.4's `use_gate_in_kernel`
    (gdn_kernels/gates.py: materialize_gates) compute it in this order; the one copy qlabench uses."""
    return -torch.exp(A_log.float()) * F.softplus(a.float() + dt_bias.float())


def raw_gates(g: torch.Tensor) -> RawGates:
    """Raw gates whose `gdn_gate` is `g` [B, T, HV] to float32 rounding: per value head A_log = log(A) with A
    spread over [1, 16] and dt_bias over [-1, 1] (fixed, so every point's gate is the same function of its g),
    and a = softplus^-1(-g / A) - dt_bias, solved in float64. A head with g = 0 (no decay) gets
    softplus^-1 of 1e-30: its gate comes back within 16e-30 of 0, exp() of it exactly 1 in float32."""
    HV = g.shape[-1]
    A = torch.linspace(1.0, 16.0, HV, dtype=torch.float64, device=g.device)
    dt_bias = torch.linspace(-1.0, 1.0, HV, dtype=torch.float64, device=g.device)
    y = (-g.double() / A).clamp_min(1e-30)
    a = y + torch.log(-torch.expm1(-y)) - dt_bias  # softplus^-1(y) = log(expm1(y)), stable for small and large y
    return RawGates(A_log=A.log().float(), dt_bias=dt_bias.float(), a=a.float().contiguous())


def reduced_seqlens(point: Point, max_tokens: int) -> tuple[int, ...]:
    """Sequence lengths for a correctness check of at most ~max_tokens, keeping the layout's shape.

    A serving point is checked whole: its T per sequence and its batch are what the kernel is chosen for,
    and the recurrence costs only T steps, however large the batch."""
    if point.is_serving or point.total_tokens <= max_tokens:
        return point.seqlens
    if point.layout == "dense":
        T = max(1, max_tokens // point.batch)
        return (T,) * point.batch
    f = max_tokens / point.total_tokens
    return tuple(max(1, int(s * f)) for s in point.seqlens)
