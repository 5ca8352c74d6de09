"""A point timed again at other calls per sample, for `[timing] sensitivity` (the verdict: core/timing_sensitivity.py)."""

from __future__ import annotations

from collections.abc import Callable

from qlabench.core.timing_sensitivity import CallsSensitivity, calls_sensitivity, sensitivity_counts
from qlabench.measure.timing.base import Measurement
from qlabench.measure.timing.plan import TimerPlan
from qlabench.measure.timing.stats import summarize


def measure_calls_sensitivity(plan: TimerPlan, device, fn: Callable[[], object], m: Measurement,
                              compare_with: int) -> tuple[CallsSensitivity | None, str | None]:
    """(verdict, None), or (None, why not): `fn` timed with `plan` at 1 and `compare_with` calls per sample
    beside the row's own measurement `m` (not repeated at its own count).

    Not measured where a count cannot be chosen: a measurement that fell back to another timer (a graph
    capture that failed is timed with eager events, one call per sample, whatever was asked)."""
    chosen = m.details.get("calls_per_sample")
    if m.timer != plan.name or chosen is None:
        return None, f"the row was timed with {m.timer}, not {plan.name}: no calls-per-sample count to vary"
    medians = {int(chosen): summarize(m.samples_ms).median}
    noise = {int(chosen): plan.rule.noise(m.samples_ms)}
    for n in sensitivity_counts(int(chosen), compare_with):
        other = plan.make(device, calls_per_sample=n).measure(fn)
        if other.timer != plan.name:
            return None, f"at {n} calls per sample the call was timed with {other.timer}, not {plan.name}"
        medians[n], noise[n] = summarize(other.samples_ms).median, plan.rule.noise(other.samples_ms)
    return calls_sensitivity(medians, noise), None
