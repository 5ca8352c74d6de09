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


# -- the traced call under a budget (run/point_row.traced_columns), with the trace stood in for on CPU ----------

def _traced(monkeypatch, events, marker_stream, grant):
    import qlabench.run.point_row as point_row
    from qlabench.measure.probes.kineto import CallTrace

    monkeypatch.setattr(point_row, "capture_call", lambda fn, mark_stream=False: CallTrace(events, marker_stream))
    return point_row.traced_columns(lambda: None, 132, grant)


def _ev(name, stream, blocks=16):
    from qlabench.core.kernel_event import KernelEvent

    return KernelEvent(name, 10.0, (blocks, 1, 1), (128, 1, 1), None, stream=stream)


def _grant(budget=16, partitioned=True):
    from qlabench.measure.sm_budget import Grant

    return Grant(budget, budget, 0, object() if partitioned else None, "rule" if partitioned else "device")


def test_a_call_whose_kernels_all_ran_on_the_budgets_stream_passes(monkeypatch):
    cols, check, escaped = _traced(monkeypatch, [_ev("a", 13), _ev("b", 13)], 13, _grant(16))
    assert escaped is None and check == "all 2 kernels on the budget's stream"
    assert cols["num_sms"] == 132 and cols["sm_coverage"] == 1.0  # 16 blocks fill the 16 SMs granted


def test_a_kernel_off_the_budgets_stream_is_an_escape(monkeypatch):
    _, check, escaped = _traced(monkeypatch, [_ev("a", 13), _ev("side", 21)], 13, _grant(16))
    assert check == "escaped" and "escaped the SM budget of 16" in escaped and "(side)" in escaped


def test_a_trace_without_kernels_under_a_budget_is_no_pass(monkeypatch):
    _, check, problem = _traced(monkeypatch, [], None, _grant(16))
    assert check == "unverified" and "traced no kernel of the call" in problem
    _, check, problem = _traced(monkeypatch, [_ev("a", 13)], None, _grant(16))
    assert check.startswith("unverified") and problem is None  # kernels, but the marker's stream unknown


def test_the_whole_device_and_no_budget_have_nothing_to_check(monkeypatch):
    for grant in (None, _grant(132, partitioned=False)):
        cols, check, escaped = _traced(monkeypatch, [_ev("a", 7, blocks=66)], None, grant)
        assert (check, escaped) == (None, None) and cols["sm_coverage"] == 0.5
