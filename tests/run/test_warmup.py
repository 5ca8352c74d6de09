"""Warm-up groups (run/warmup.py): one per backend, mode and head config; backward groups start first."""

from __future__ import annotations

from qlabench.core.point import Point
from qlabench.run.warmup import head_groups


def _p(mode: str, h_v: int, backend: str = "naive-chunk", T: int = 8) -> Point:
    return Point(backend=backend, mode=mode, layout="dense", batch=1, seqlens=(T,), h_qk=1, h_v=h_v, K=16, V=16,
                 dtype="float32")


def test_groups_split_by_mode_and_heads_with_backward_groups_first():
    points = (_p("fwd", 2), _p("fwd", 2, T=16), _p("fwd", 4), _p("fwd_bwd", 2), _p("bwd", 4), _p("fwd", 2, "synthetic"))
    groups = head_groups(points)
    assert [[points[i].mode for i in g] for g in groups] == [["fwd_bwd"], ["bwd"], ["fwd", "fwd"], ["fwd"], ["fwd"]]
    assert groups[2] == [0, 1]  # the 8- and 16-token forward points share one process
    assert sorted(i for g in groups for i in g) == list(range(len(points)))
