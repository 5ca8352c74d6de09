"""One Qwen3.5 Gated DeltaNet layer at a TP shard: its shapes, and the core's share of its time. Pure Python.

A layer backend (`layer:<core>`, qlabench/backends/layer/) times the whole token mixer of a GDN layer
with the core kernel under test inside it; docs/LAYER.md says what it runs. This module holds what
needs no torch: the hidden sizes (the catalogue in core/models.py has the heads only), the layer's
projection widths at a TP degree, the backend-name convention and the share of the core in the
layer's kernel time.

Where each number comes from (all are `hidden_size`; the heads, head dims 128 and conv kernel 4 agree
with qlabench/core/models.py and with the same sources' `linear_*` arguments where they list them):

| model          | hidden | source (public training configs of the Qwen3.5 family)                       |
|----------------|--------|------------------------------------------------------------------------------|
| qwen3.5-397b   | 4096   | THUDM/slime scripts/models/qwen3.5-397B-A17B.sh (`--hidden-size 4096`)      |
| qwen3.5-35b    | 2048   | THUDM/slime scripts/models/qwen3.5-35B-A3B.sh (`--hidden-size 2048`; also  |
|                |        | `--linear-num-key-heads 16 --linear-num-value-heads 32 --linear-conv-kernel-dim 4`) |
| qwen3.5-27b    | 5120   | radixark/miles scripts/models/qwen3.5-27B.sh (`--hidden-size 5120`)         |
| qwen3.5-9b     | 4096   | radixark/miles scripts/models/qwen3.5-9B.sh (`--hidden-size 4096`)          |
| qwen3.5-4b     | 2560   | radixark/miles scripts/models/qwen3.5-4B.sh (`--hidden-size 2560`)          |
| qwen3.5-0.8b   | 1024   | THUDM/slime scripts/models/qwen3.5-0.8B.sh (`--hidden-size 1024`)           |

qwen3.5-122b, qwen3.5-2b and sym-h32 are left out: no stored source gave their hidden size (sym-h32 is
no model), so a layer point of theirs is skipped with that reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from qlabench.core.errors import PointError
from qlabench.core.models import lookup

LAYER_PREFIX = "layer:"
CONV_KERNEL = 4  # linear_conv_kernel_dim of every Qwen3.5 model above

HIDDEN_SIZES: dict[str, int] = {
    "qwen3.5-397b": 4096,
    "qwen3.5-35b": 2048,
    "qwen3.5-27b": 5120,
    "qwen3.5-9b": 4096,
    "qwen3.5-4b": 2560,
    "qwen3.5-0.8b": 1024,
}


def layer_backend_name(core: str) -> str:
    return LAYER_PREFIX + core


def core_backend_name(backend: str) -> str | None:
    """The core of a `layer:<core>` backend name; None for any other backend."""
    return backend[len(LAYER_PREFIX):] if backend.startswith(LAYER_PREFIX) else None


@dataclass(frozen=True)
class LayerShapes:
    """The widths of one GDN layer on one GPU. Column-parallel input projections and a row-parallel
    output projection (as vLLM and SGLang shard the layer): every head-sized width is split by TP,
    `hidden` is not."""

    hidden: int
    h_qk: int
    h_v: int
    K: int
    V: int
    conv_kernel: int = CONV_KERNEL

    @property
    def qkvz_out(self) -> int:
        """in_proj_qkvz output: q and k (h_qk x K each), v and z (h_v x V each)."""
        return 2 * self.h_qk * self.K + 2 * self.h_v * self.V

    @property
    def ba_out(self) -> int:
        """in_proj_ba output: b (beta's logit) and a (the decay's input), one per value head each."""
        return 2 * self.h_v

    @property
    def conv_dim(self) -> int:
        """Channels of the depthwise short convolution: q, k and v (z is not convolved)."""
        return 2 * self.h_qk * self.K + self.h_v * self.V

    @property
    def o_in(self) -> int:
        """out_proj input: the gated-normed core output, h_v x V."""
        return self.h_v * self.V

    def weight_count(self) -> int:
        """Parameters of the shard: projections, conv, A_log, dt_bias and the norm's weight."""
        return (self.hidden * (self.qkvz_out + self.ba_out) + self.conv_dim * self.conv_kernel + 2 * self.h_v
                + self.V + self.o_in * self.hidden)


def layer_shapes(model: str | None, tp: int | None, h_qk: int, h_v: int, K: int, V: int) -> LayerShapes:
    """The layer of `model` at `tp` with these (already TP-split) heads; PointError when the model has no
    known hidden size or the heads are not the catalogue's at that TP."""
    if model is None:
        raise PointError("a layer point needs a model (its hidden size); explicit heads have none")
    try:
        m = lookup(model)
    except KeyError as e:
        raise PointError(str(e).strip("'\"")) from None
    hidden = HIDDEN_SIZES.get(m.name)
    if hidden is None:
        raise PointError(f"no hidden size is recorded for {m.name} (qlabench/core/layer_shapes.py says why)")
    if (h_qk, h_v) != m.at_tp(tp or 1):
        raise PointError(f"heads h{h_qk}/{h_v} are not {m.name}'s at TP{tp or 1} ({m.at_tp(tp or 1)})")
    if (K, V) != (m.head_dim, m.head_dim):
        raise PointError(f"{m.name}'s head dims are {m.head_dim}, not K={K}, V={V}")
    return LayerShapes(hidden=hidden, h_qk=h_qk, h_v=h_v, K=K, V=V)


def kernel_time_share(part_us: float, total_us: float) -> float | None:
    """part / total kernel time, None when there is no total; capped at 1 (the part is traced in a
    separate call, and two calls' kernel times differ by their noise)."""
    if not total_us > 0 or part_us < 0:
        return None
    return min(1.0, part_us / total_us)


def prefix_share(kernels: tuple[str, ...] | list[str], durations_us: tuple[float, ...] | list[float],
                 prefixes: tuple[str, ...]) -> float | None:
    """Share of the kernel time spent in kernels whose name starts with one of `prefixes` (a core
    backend's `expect_kernels`); None without prefixes, kernels or durations."""
    if not prefixes or not kernels or len(kernels) != len(durations_us):
        return None
    total = sum(durations_us)
    part = sum(d for n, d in zip(kernels, durations_us) if n.startswith(prefixes))
    return kernel_time_share(part, total)
