"""Timing a call again at other calls per sample (measure/timing/sensitivity.py) with the wall timer on CPU,
and the wall timer's calls_per_sample itself."""

from __future__ import annotations

import time

from qlabench.backends.synthetic import cold_after_idle
from qlabench.core.spec import TimingSpec
from qlabench.measure.timing import TimerPlan, summarize
from qlabench.measure.timing.base import Measurement
from qlabench.measure.timing.sensitivity import measure_calls_sensitivity

# A noise target of 0 is never met: the stop rule computes the samples' statistics after every sample from
# the second on (tens of microseconds of numpy), the idle gap the synthetic cold call detects.
SPEC = TimingSpec(timer="wall", warmup=1, min_samples=2, max_samples=9, max_time_s=5.0, target_rel_noise=0.0)


def _spin(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def _cold_call():
    """0.1 ms a call, plus 2 ms for the first call after the host idled: a per-sample cost."""
    return cold_after_idle(lambda: _spin(1e-4), 2e-3)


def test_the_wall_timer_times_n_calls_per_sample_and_reports_per_call():
    plan = TimerPlan.resolve("wall", "cpu", SPEC)
    calls = []
    m = plan.make("cpu", calls_per_sample=4).measure(lambda: calls.append(1))
    assert m.details["calls_per_sample"] == 4 and len(calls) == 1 + 4 * len(m.samples_ms)
    assert plan.make("cpu").measure(lambda: None).details["calls_per_sample"] == 1


def test_the_plan_carries_the_suites_calls_per_sample():
    plan = TimerPlan.resolve("wall", "cpu", TimingSpec(timer="wall", calls_per_sample=3))
    assert plan.calls_per_sample == 3 and plan.make("cpu").n == 3
    assert plan.make("cpu", calls_per_sample=5).n == 5  # an explicit count wins


def test_a_per_sample_cost_makes_the_time_depend_on_the_calls_per_sample():
    plan = TimerPlan.resolve("wall", "cpu", SPEC)
    # On a loaded shared host the scheduler can preempt a few one-call samples by tens of ms; their measured
    # noise then exceeds the 2 ms cost and the rule rightly declines to call it (CI's box seldom, a box running
    # several test suites at once did). The rule is what is tested, so a try whose noise swamped it is repeated.
    for _ in range(3):
        fn = _cold_call()
        m = plan.make("cpu").measure(fn)
        assert summarize(m.samples_ms).median > 1.5  # every one-call sample pays the 2 ms
        verdict, why = measure_calls_sensitivity(plan, "cpu", fn, m, compare_with=64)
        if why is None and verdict.sensitive:
            break
    assert why is None and verdict.sensitive
    assert set(verdict.medians_ms) == {1, 64}
    assert verdict.medians_ms[64] < 0.5 * verdict.medians_ms[1]


def test_a_measurement_that_fell_back_to_another_timer_is_not_compared():
    plan = TimerPlan.resolve("wall", "cpu", SPEC)
    fell_back = Measurement("events", (1.0, 1.0), True, {"calls_per_sample": 1})
    verdict, why = measure_calls_sensitivity(plan, "cpu", lambda: None, fell_back, compare_with=64)
    assert verdict is None and "timed with events, not wall" in why
