"""The layer's shapes per model and TP, the backend-name convention and the kernel-time shares (pure)."""

from __future__ import annotations

import pytest

from qlabench.core.errors import PointError
from qlabench.core.layer_shapes import (HIDDEN_SIZES, core_backend_name, kernel_time_share, layer_backend_name,
                                 layer_shapes, prefix_share)
from qlabench.core.models import lookup


@pytest.mark.parametrize("model", sorted(HIDDEN_SIZES))
def test_every_recorded_model_shards_its_head_widths_by_tp_and_keeps_hidden(model):
    m = lookup(model)
    full = layer_shapes(model, 1, m.h_qk, m.h_v, 128, 128)
    for tp in (1, 2, 4, 8, 16):
        h_qk, h_v = m.at_tp(tp)
        s = layer_shapes(model, tp, h_qk, h_v, 128, 128)
        assert s.hidden == full.hidden == HIDDEN_SIZES[model]
        # Column-parallel projections and a row-parallel output: every head-sized width divides by TP.
        assert s.qkvz_out * tp == full.qkvz_out
        assert s.ba_out * tp == full.ba_out
        assert s.conv_dim * tp == full.conv_dim
        assert s.o_in * tp == full.o_in


def test_the_widths_are_the_sum_of_their_pieces():
    s = layer_shapes("qwen3.5-397b", 8, 2, 8, 128, 128)
    q = k = 2 * 128
    v = z = 8 * 128
    assert s.qkvz_out == q + k + v + z
    assert s.conv_dim == q + k + v  # z is not convolved
    assert s.ba_out == 2 * 8
    assert s.o_in == v
    assert s.weight_count() == (s.hidden * (q + k + v + z) + s.hidden * 16 + (q + k + v) * 4 + 2 * 8 + 128
                                + v * s.hidden)


@pytest.mark.parametrize("model,tp,heads,KV,words", [
    (None, None, (16, 64), (128, 128), "needs a model"),
    ("qwen3.5-122b", 1, (16, 64), (128, 128), "no hidden size"),
    ("qwen3.5-397b", 8, (16, 64), (128, 128), "not qwen3.5-397b's at TP8"),
    ("qwen3.5-397b", 1, (16, 64), (64, 128), "head dims are 128"),
    ("no-such-model", 1, (16, 64), (128, 128), "unknown model"),
])
def test_a_point_the_layer_cannot_shape_says_why(model, tp, heads, KV, words):
    with pytest.raises(PointError, match=words):
        layer_shapes(model, tp, *heads, *KV)


def test_layer_backend_names_round_trip_and_other_names_have_no_core():
    assert core_backend_name(layer_backend_name("fla")) == "fla"
    assert core_backend_name("fla") is None
    assert core_backend_name("flash_qla-nocp") is None


def test_kernel_time_share_is_a_fraction_capped_at_one():
    assert kernel_time_share(25.0, 100.0) == 0.25
    assert kernel_time_share(120.0, 100.0) == 1.0  # two traced calls differ by their noise
    assert kernel_time_share(1.0, 0.0) is None


def test_prefix_share_counts_only_the_cores_kernels():
    names = ("nvjet_gemm", "tilelang_fwd_o", "vectorized_elementwise", "tilelang_fwd_h")
    durs = (40.0, 30.0, 10.0, 20.0)
    assert prefix_share(names, durs, ("tilelang_",)) == pytest.approx(0.5)
    assert prefix_share(names, durs, ()) is None  # a core that declares no kernels: no prefix share
    assert prefix_share(names, durs[:2], ("tilelang_",)) is None  # names and durations must pair up
