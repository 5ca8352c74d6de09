"""The oracle's reduced-check outputs are computed once per reduced problem and shared (oracle_cache.py)."""

from __future__ import annotations

import pytest
import torch

from qlabench.measure.timing import TimerPlan
from qlabench.measure import env as envmod
from qlabench.backends import REGISTRY
from qlabench.run.point import PointRow, MeasureContext, check_correctness
from qlabench.measure.oracle_cache import OracleCache, oracle_key
from qlabench.core.point import Point
from qlabench.core.result import Status
from qlabench.core.spec import CheckSpec, Suite, TimingSpec


def _p(**kw):
    base = dict(backend="naive-chunk", mode="fwd", layout="dense", batch=1, seqlens=(1024,), h_qk=2, h_v=4, K=16,
                V=16, dtype="float32")
    base.update(kw)
    return Point(**base)


def test_the_key_is_the_reduced_problem_not_the_backend_mode_or_full_length():
    k = oracle_key(_p(), (256,), "float32")
    assert oracle_key(_p(backend="fla", mode="fwd_bwd", seqlens=(32768,), dtype="bfloat16"), (256,), "float32") == k
    for other in (dict(h_v=8), dict(h_qk=4, h_v=8), dict(seed=1), dict(gate="strong"), dict(initial_state=False),
                  dict(K=32), dict(V=32), dict(layout="varlen", seqlens=(600, 424))):
        assert oracle_key(_p(**other), (256,), "float32") != k
    assert oracle_key(_p(), (128,), "float32") != k
    assert oracle_key(_p(), (256,), "float64") != k


def test_least_recently_used_goes_first_within_the_byte_budget():
    one = {"o": torch.zeros(256)}  # 1 KiB
    c = OracleCache(budget_bytes=2 * 1024)
    c.get("a", lambda: one)
    c.get("b", lambda: dict(one))
    c.get("a", lambda: pytest.fail("a is cached"))  # a is now the most recent
    c.get("c", lambda: dict(one))  # over budget: b, the least recent, goes
    assert (c.hits, c.misses, len(c)) == (1, 3, 2)
    c.get("a", lambda: pytest.fail("a was kept"))
    c.get("b", lambda: dict(one))
    assert c.misses == 4


def test_an_entry_larger_than_the_budget_is_still_kept_alone():
    c = OracleCache(budget_bytes=10)
    c.get("a", lambda: {"o": torch.zeros(64)})
    c.get("b", lambda: {"o": torch.zeros(64)})
    assert len(c) == 1 and c.get("b", lambda: pytest.fail("kept")) is not None


def test_points_reducing_to_one_problem_check_against_one_oracle_call():
    suite = Suite(name="t", path="<t>", points=(), timing=TimingSpec(), check=CheckSpec(oracle_max_tokens=256))
    ctx = MeasureContext(suite=suite, device="cpu", env=envmod.capture("cpu"), run_id="r", timer=TimerPlan.resolve("wall", "cpu", suite.timing),
                         registry=REGISTRY, check=True)
    backend = REGISTRY["naive-chunk"]
    # The backward point first: its entry, with gradients, then serves the forward points too.
    points = [_p(mode="fwd_bwd", seqlens=(4096,)), _p(), _p(seqlens=(2048,)), _p(h_v=8)]
    results = [_check(p, backend, ctx) for p in points]
    assert [r[0] for r in results] == [Status.OK] * 4
    assert (ctx.oracle_cache.misses, ctx.oracle_cache.hits) == (2, 2)  # h 2/4 once, h 2/8 once
    # the shared outputs give the errors a fresh oracle gives
    fresh = MeasureContext(suite=suite, device="cpu", env=ctx.env, run_id="r", timer=ctx.timer, registry=REGISTRY,
                           check=True)
    assert _check(points[2], backend, fresh)[2] == results[2][2]


def _check(p, backend, ctx):
    """(status, reason, row fields) of the reduced check of `p`, as run_point runs it."""
    row = PointRow(p, ctx)
    failure, _ = check_correctness(p, backend, ctx, row)
    return (Status.OK if failure is None else Status.INCORRECT), failure, row.fields


def test_forward_entries_serve_forward_only_and_are_upgraded_for_gradients():
    c = OracleCache()
    fwd_only = {"o": torch.zeros(4)}
    full = {"o": torch.zeros(4), "dq": torch.zeros(4)}
    assert c.get("k", lambda: fwd_only) is fwd_only
    assert c.get("k", lambda: pytest.fail("a forward entry serves a forward point")) is fwd_only
    assert c.get("k", lambda: full, grads=True) is full  # no gradients cached: computed again
    assert c.get("k", lambda: pytest.fail("the full entry serves forward points too")) is full
    assert c.get("k", lambda: pytest.fail("and backward ones"), grads=True) is full
    assert (c.hits, c.misses, len(c)) == (3, 2, 1)
