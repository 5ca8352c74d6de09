"""A point's SM budget and device memory in its row (run/point.py): a budget the worker cannot hold is the
point's error row, never a traceback, and a CPU row leaves the GPU-only columns null."""

from __future__ import annotations

from qlabench.backends import REGISTRY
from qlabench.core.point import Point
from qlabench.core.spec import CheckSpec, Suite, TimingSpec
from qlabench.measure import env as envmod
from qlabench.measure.timing import TimerPlan
from qlabench.run.point import MeasureContext, run_point

TIMING = TimingSpec(timer="wall", warmup=1, min_samples=2, max_samples=3, max_time_s=1.0, target_rel_noise=0.0)


def _run(p: Point):
    suite = Suite(name="t", path="<t>", points=(p,), timing=TIMING, check=CheckSpec(oracle_max_tokens=16))
    ctx = MeasureContext(suite=suite, device="cpu", env=envmod.capture("cpu"), run_id="r",
                         timer=TimerPlan.resolve("wall", "cpu", TIMING), registry=REGISTRY, check=True)
    return run_point(p, ctx)


P = Point(backend="naive-chunk", mode="fwd", layout="dense", batch=1, seqlens=(16,), h_qk=1, h_v=1, K=8, V=8,
          dtype="float32")


def test_a_budget_in_a_cpu_worker_is_the_points_error_row():
    row = _run(P.with_(sm_budget=16))
    assert row.status == "error" and row.reason.endswith("SMBudgetError: sm_budget 16 needs a CUDA device, not cpu")
    assert row.sm_budget == 16 and row.sm_granted is None


def test_a_cpu_row_has_no_budget_and_no_device_memory():
    row = _run(P)
    assert row.status == "ok", row.reason
    assert (row.sm_budget, row.sm_granted, row.extra_mem_mib, row.outside_mem_mib) == (None, None, None, None)
