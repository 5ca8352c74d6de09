"""`layer:<core>`: one Qwen3.5 GDN layer (backends/layer/ops.py) around a core backend, as one backend.

The point's model and TP give the shard's shapes (core/layer_shapes.py); its dtype the projections' and the
core's inputs' dtype; its layout the sequences (a dense point of seqlen 1 is a decode step: one token
per sequence against the recurrent state and the conv state). The layer ignores the point's gate
profile: its g comes from its own gating. The reduced check compares the layer's output, final state
and conv state with `layer:naive-recurrent` in float32 on the same weights and inputs (the fp32 oracle
core in the same layer); the full-size check with `layer:naive-chunk`.

The core's share of the layer's time is recorded in the row's extra_json["layer"] (`point_details`):
on CUDA from the kernel trace (the core's inputs, captured from the layer, traced alone, over the
layer's traced kernels: kernel time, launch gaps excluded); elsewhere from the run's timer (the core
timed alone over the layer's median).
"""

from __future__ import annotations

import os
from collections.abc import Callable

import torch
import torch.nn.functional as F

from qlabench.backends.base import Backend, JitBuild, Outputs
from qlabench.backends.layer.ops import causal_conv, causal_conv_varlen, gated_rmsnorm, gating, l2norm, random_weights
from qlabench.core.backend_decl import BackendDecl, find, layer_cores, layer_decl
from qlabench.core.errors import BackendError, PointError
from qlabench.core.layer_shapes import kernel_time_share, layer_backend_name, layer_shapes, prefix_share
from qlabench.core.point import Point
from qlabench.measure.inputs import TORCH_DTYPES, GDNInputs

# The layer's weights and hidden states are drawn from their own stream, apart from make_inputs' (which
# gives the layer only h0 and the sequence layout).
LAYER_SEED_OFFSET = 7919


class LayerCall:
    """A prepared layer: calling it runs the whole layer once (its outputs: o = the layer's output
    [B, T, hidden], ht = the core's final state, conv_state = the conv's); `core_call` runs the core
    alone on the inputs the layer hands it (computed once, when prepared)."""

    def __init__(self, run: Callable[[], Outputs], core_call: Callable[[], object], hidden: int):
        self.run = run
        self.core_call = core_call
        self.hidden = hidden

    def __call__(self) -> Outputs:
        return self.run()


class LayerBackend(Backend):
    oracle = layer_backend_name("naive-recurrent")
    full_size_reference = layer_backend_name("naive-chunk")

    def __init__(self, core: Backend, decl: BackendDecl | None = None):
        super().__init__(decl or find(layer_backend_name(core.name)) or layer_decl(core.decl))
        self.core = core
        self.expect_kernels = core.expect_kernels  # the layer's trace holds the core's kernels too
        self.forbid_kernels = core.forbid_kernels
        self.env = core.env

    # what its core runs on (a test's stand-in core may say more than its declaration)
    @property
    def devices(self) -> frozenset[str]:
        return self.core.devices

    @property
    def dtypes(self) -> frozenset[str]:
        return self.core.dtypes

    def _core_point(self, point: Point) -> Point:
        return point.with_(backend=self.core.name)

    def available(self) -> tuple[bool, str]:
        return self.core.available()

    def check_point(self, point: Point, device: str) -> tuple[bool, str]:
        try:
            layer_shapes(point.model, point.tp, point.h_qk, point.h_v, point.K, point.V)
        except (PointError, KeyError) as e:
            return False, str(e).strip("'\"")
        ok, why = self.core.supports(self._core_point(point), device)
        return ok, (f"core {self.core.name}: {why}" if not ok else "")

    def first_use_note(self) -> str:
        return self.core.first_use_note()

    def jit_build(self, points: list[Point]) -> JitBuild | None:
        return self.core.jit_build([self._core_point(p) for p in points])

    def prepare(self, mode: str, inp: GDNInputs) -> Callable[[], Outputs]:
        raise BackendError(f"{self.name} needs the point (its model's hidden size): use prepare_point")

    def prepare_point(self, point: Point, inp: GDNInputs) -> LayerCall:
        """The layer for `point` on the sequences of `inp` (its shape, cu_seqlens and h0: a reduced
        check's inputs give the reduced layer)."""
        s = layer_shapes(point.model, point.tp, point.h_qk, point.h_v, point.K, point.V)
        # The core's dispatch switches, as its own prepare sets them (FLA reads them on every call); the
        # layer calls the core's forward directly.
        os.environ.update(self.env)
        dev, dt = inp.q.device, TORCH_DTYPES[point.dtype]
        B, T = inp.q.shape[:2]
        cu = inp.cu_seqlens
        bounds = None if cu is None else cu.tolist()
        n_seqs = B if cu is None else len(bounds) - 1
        gen = torch.Generator(device=dev).manual_seed(point.seed + LAYER_SEED_OFFSET)
        w = random_weights(s, dt, gen, dev)
        # Hidden states as after the block's input RMSNorm: unit scale.
        x = torch.randn((B, T, s.hidden), generator=gen, device=dev).to(dt)
        conv_state = torch.randn((n_seqs, s.conv_dim, s.conv_kernel - 1), generator=gen, device=dev).to(dt)
        if not point.initial_state:  # a fresh prompt: no earlier tokens in the conv either
            conv_state.zero_()
        qk = s.h_qk * s.K

        def pre(x: torch.Tensor):
            qkvz = F.linear(x, w.w_qkvz)
            ba = F.linear(x, w.w_ba)
            mixed, z = qkvz.split([s.conv_dim, s.o_in], dim=-1)
            if cu is None:
                mixed, new_state = causal_conv(mixed, w.conv, conv_state)
            else:
                mixed, new_state = causal_conv_varlen(mixed, w.conv, conv_state, bounds)
            q, k, v = mixed.split([qk, qk, s.h_v * s.V], dim=-1)
            q = l2norm(q.reshape(B, T, s.h_qk, s.K))
            k = l2norm(k.reshape(B, T, s.h_qk, s.K))
            v = v.reshape(B, T, s.h_v, s.V).contiguous()
            b, a = ba.split([s.h_v, s.h_v], dim=-1)
            g, beta = gating(a, b, w.A_log, w.dt_bias)
            core_inp = GDNInputs(q=q, k=k, v=v, g=g, beta=beta, h0=inp.h0, cu_seqlens=cu, scale=s.K ** -0.5,
                                 do=None, dht=None)
            return core_inp, z.reshape(B, T, s.h_v, s.V), new_state

        def run() -> Outputs:
            with torch.no_grad():
                core_inp, z, new_state = pre(x)
                o, ht = self.core.forward(core_inp)
                y = F.linear(gated_rmsnorm(o, z, w.norm).reshape(B, T, s.o_in), w.w_o)
            return {"o": y, "ht": ht, "conv_state": new_state}

        with torch.no_grad():
            core_inp = pre(x)[0]

        def core_call() -> object:
            with torch.no_grad():
                return self.core.forward(core_inp)

        return LayerCall(run, core_call, s.hidden)

    def point_details(self, fn, kernels, kernel_dur_us, median_ms, time_ms) -> dict:
        if not isinstance(fn, LayerCall):
            return {}
        d: dict = {"core": self.core.name, "hidden": fn.hidden}
        if kernels:
            from qlabench.measure.probes.kineto import capture_kernels

            core_us = sum(e.dur_us or 0.0 for e in capture_kernels(fn.core_call))
            layer_us = sum(kernel_dur_us)
            d.update(core_share=kernel_time_share(core_us, layer_us), core_kernel_us=core_us,
                     layer_kernel_us=layer_us, core_share_from="kernel trace")
            by_prefix = prefix_share(kernels, kernel_dur_us, self.core.expect_kernels)
            if by_prefix is not None:  # the same share read off the layer's own trace, as a cross-check
                d["core_share_prefix"] = by_prefix
        else:
            core_ms = time_ms(fn.core_call)
            d.update(core_share=kernel_time_share(core_ms, median_ms), core_ms=core_ms, core_share_from="timer")
        return {"layer": d}


def layer_backends(registry: dict[str, Backend]) -> list[LayerBackend]:
    """A `layer:<core>` backend for each declared layer core in `registry` (core/backend_decl.py: layer_cores)."""
    return [LayerBackend(registry[c]) for c in layer_cores() if c in registry]
