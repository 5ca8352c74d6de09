"""Timer logic with a fake clock: the stopping rule, the wall timer's sampling, and the summary statistics."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from qlabench.measure.timing import StopRule, WallTimer, summarize


class FakeClock:
    """Time advances only when the measured function runs, by the next duration of a script (seconds)."""

    def __init__(self, durations):
        self.now = 0.0
        self.durations = iter(durations)
        self.calls = 0

    def __call__(self) -> float:
        return self.now

    def fn(self) -> None:
        self.calls += 1
        self.now += next(self.durations)


# -- summary statistics ---------------------------------------------------------------------------
def test_summary_of_known_samples():
    s = summarize([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0])
    assert s.n == 10 and s.median == 5.5 and s.mean == 5.5 and s.min == 1.0
    # linear interpolation: position p * (n - 1)
    assert s.p20 == pytest.approx(2.8) and s.p80 == pytest.approx(8.2)
    assert s.q25 == pytest.approx(3.25) and s.q75 == pytest.approx(7.75)
    assert s.iqr == pytest.approx(4.5) and s.rel_noise == pytest.approx(4.5 / 5.5)
    assert s.stdev == pytest.approx(np.std(np.arange(1, 11), ddof=1))
    assert s.rel_stdev == pytest.approx(s.stdev / 5.5)


def test_summary_edge_cases():
    one = summarize([2.5])
    assert one.median == one.min == one.p20 == one.p80 == 2.5 and one.stdev == 0.0 and one.rel_noise == 0.0
    assert summarize([0.0, 0.0]).rel_noise == float("inf")  # no relative spread of a zero median
    with pytest.raises(ValueError):
        summarize([])


def test_iqr_noise_ignores_a_single_outlier_that_stdev_does_not():
    s = summarize([1.0] * 19 + [50.0])
    assert s.rel_noise == 0.0
    assert s.rel_stdev > 5


# -- the stopping rule ----------------------------------------------------------------------------
def test_stops_when_noise_met_after_minimum_count_and_time():
    rule = StopRule(min_samples=5, max_samples=100, min_time_s=1.0, max_time_s=10.0, target_rel_noise=0.01)
    flat = [1.0] * 5
    assert rule.done(flat[:4], 5.0) == (False, False)  # too few samples (the noise needs min_samples)
    assert rule.done(flat, 0.5) == (False, True)  # quiet, but below min_time_s
    assert rule.done(flat, 1.0) == (True, True)


def test_noisy_samples_run_to_a_cap_and_say_so():
    rule = StopRule(min_samples=3, max_samples=8, min_time_s=0.0, max_time_s=10.0, target_rel_noise=0.005)
    noisy = [1.0, 1.2, 0.9, 1.1, 1.3, 0.8]
    assert rule.done(noisy, 1.0) == (False, False)
    assert rule.done(noisy + [1.0, 1.1], 1.0) == (True, False)  # max_samples
    assert rule.done(noisy, 10.0) == (True, False)  # max_time_s
    # a cap also reports a target that happens to be met
    assert rule.done([1.0] * 8, 0.0) == (True, True)


def test_noise_metric_choice():
    samples = [1.0] * 19 + [50.0]
    assert StopRule(min_samples=5, noise_metric="iqr").noise_met(samples)
    assert not StopRule(min_samples=5, noise_metric="stdev").noise_met(samples)
    with pytest.raises(ValueError):
        StopRule(noise_metric="range")


def test_a_single_sample_never_meets_a_noise_target():
    assert StopRule(min_samples=1).noise_met([1.0]) is False


def test_from_spec():
    from qlabench.core.spec import TimingSpec

    spec = TimingSpec(min_samples=7, max_samples=9, min_time_s=0.5, max_time_s=3.0, target_rel_noise=0.02)
    assert StopRule.from_spec(spec) == StopRule(7, 9, 0.5, 3.0, 0.02, "iqr")


# -- the wall timer driven by the fake clock ---------------------------------------------------------
def test_wall_timer_warms_up_then_samples_until_quiet():
    clock = FakeClock([5.0] * 3 + [0.002] * 100)  # slow warmups (JIT), then steady 2 ms calls
    syncs = []
    rule = StopRule(min_samples=5, max_samples=50, min_time_s=0.0, max_time_s=10.0, target_rel_noise=0.005)
    m = WallTimer(rule, warmup=3, sync=lambda: syncs.append(clock.now), clock=clock).measure(clock.fn)
    assert m.timer == "wall" and m.noise_target_met
    assert m.samples_ms == pytest.approx((2.0,) * 5)  # warmups are not samples
    assert clock.calls == 3 + 5
    assert len(syncs) == 1 + 5  # after the warmup, then after every sample


def test_wall_timer_stops_at_max_time_with_noise_not_met():
    pattern = itertools.cycle([0.001, 0.003])  # 50% spread, never quiet
    clock = FakeClock(pattern)
    rule = StopRule(min_samples=2, max_samples=10_000, min_time_s=0.0, max_time_s=0.1, target_rel_noise=0.005)
    m = WallTimer(rule, warmup=0, clock=clock).measure(clock.fn)
    assert not m.noise_target_met
    assert sum(m.samples_ms) == pytest.approx(100.0)  # sampled until 0.1 s of calls had elapsed
    assert len(m.samples_ms) == 50


def test_wall_timer_respects_min_time():
    clock = FakeClock(itertools.repeat(0.01))
    rule = StopRule(min_samples=2, max_samples=1000, min_time_s=0.5, max_time_s=10.0, target_rel_noise=0.005)
    m = WallTimer(rule, warmup=1, clock=clock).measure(clock.fn)
    assert m.noise_target_met and len(m.samples_ms) == 50  # 50 x 10 ms reaches min_time_s


def test_stop_rule_names_what_ended_sampling():
    rule = StopRule(min_samples=5, max_samples=10, max_time_s=1.0, target_rel_noise=0.1)
    assert rule.stopped_by(7, True) == "noise_target"
    assert rule.stopped_by(10, False) == "max_samples"
    assert rule.stopped_by(1, False) == "max_time"

