"""Point: validation on construction, derived properties, keys."""

from __future__ import annotations

import pytest

from qlabench.core.identity import workload_axes
from qlabench.core.point import Point


def dense(**kw) -> Point:
    base = dict(backend="naive-chunk", mode="fwd", layout="dense", batch=2, seqlens=(64, 64), h_qk=2, h_v=4,
                K=16, V=32)
    base.update(kw)
    return Point(**base)


def test_dense_derived_values():
    p = dense()
    assert p.total_tokens == 128
    assert p.num_seqs == 2
    assert p.seq_len == 64
    assert p.layout_label == "2x64"
    assert p.heads_label == "h2/4"


def test_varlen_derived_values():
    p = dense(layout="varlen", batch=1, seqlens=[5, 70, 1])
    assert p.seqlens == (5, 70, 1)  # lists are normalised to tuples, so points hash
    assert p.total_tokens == 76
    assert p.seq_len == 76
    assert p.num_seqs == 3
    assert p.layout_label == "5+70+1"


def test_model_heads_label():
    p = dense(model="qwen3.5-27b", tp=2, h_qk=8, h_v=24)
    assert p.heads_label == "qwen3.5-27b TP2 (h8/24)"


@pytest.mark.parametrize(
    "changes, fragment",
    [
        ({"mode": "sideways"}, "mode"),
        ({"dtype": "int8"}, "dtype"),
        ({"gate": "none"}, "gate"),
        ({"layout": "ragged"}, "layout"),
        ({"seqlens": ()}, "seqlens"),
        ({"seqlens": (64, 0)}, "seqlens"),
        ({"seqlens": (64,)}, "one length per batch element"),
        ({"seqlens": (64, 32)}, "all sequences have one length"),
        ({"layout": "varlen", "batch": 2, "seqlens": (3, 4)}, "batch 1"),
        ({"h_v": 3}, "not a multiple"),
        ({"K": 0}, "positive"),
    ],
)
def test_invalid_points_are_rejected(changes, fragment):
    with pytest.raises(ValueError, match=fragment):
        dense(**changes)


def test_workload_key_leaves_out_the_backend():
    a, b = dense(backend="naive-chunk"), dense(backend="naive-recurrent")
    assert a.workload_key() == b.workload_key()
    assert a.key() != b.key()
    assert len(a.workload_key()) == len(workload_axes())
    assert dense(seed=1).workload_key() != a.workload_key()


def test_with_returns_a_validated_copy():
    p = dense()
    q = p.with_(dtype="float32")
    assert q.dtype == "float32" and p.dtype == "bfloat16"
    with pytest.raises(ValueError):
        p.with_(h_v=5)


def test_compile_group_ignores_sequence_lengths():
    assert dense().compile_group == dense(seqlens=(128, 128)).compile_group
    assert dense().compile_group != dense(h_v=8).compile_group
