"""One protocol measures a point on a worker's device and over distributed ranks: `refusal` decides whether a
point can run at all for both paths, with the same words."""

from __future__ import annotations

from qlabench.backends import REGISTRY
from qlabench.core.point import Point
from qlabench.core.result import Status
from qlabench.run.point import refusal


def _p(**kw) -> Point:
    base = dict(backend="naive-chunk", mode="fwd", layout="dense", batch=1, seqlens=(16,), h_qk=1, h_v=1, K=16, V=16,
                dtype="float32")
    return Point(**{**base, **kw})


def test_a_runnable_point_is_not_refused():
    assert refusal(_p(), REGISTRY["naive-chunk"], "cpu") is None


def test_unknown_and_unsupported_points_are_refused_alike_on_both_paths():
    assert refusal(_p(backend="nope"), None, "cpu") == (Status.ERROR, "unknown backend 'nope'")
    status, why = refusal(_p(backend="nope", cp_world_size=2, cp_mode="inter"), None, "cpu", world=2)
    assert status is Status.SKIPPED and why.startswith("no context-parallel backend 'nope'")


def test_a_distributed_point_runs_only_in_a_launch_of_its_size():
    p = _p(cp_world_size=2, cp_mode="inter", seqlens=(32,))
    status, why = refusal(p, REGISTRY["naive-chunk"], "cpu")
    assert status is Status.SKIPPED and "runs only through `qlabench run sweep`" in why
    assert refusal(p, REGISTRY["naive-chunk"], "cpu", world=4) == (Status.ERROR, "point wants 2 ranks, this launch has 4")
