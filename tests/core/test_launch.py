"""The launch regimes and the launch-bound rule (core/launch.py)."""

from __future__ import annotations

import pytest

from qlabench.core.errors import ConfigError
from qlabench.core.launch import (DEFAULT_LAUNCH, LAUNCH_BOUND_MIN, PRIMED_MIN_CALLS, TIME_COLUMN, check_launch,
                                  launch_bound, unprimed_eager)


def test_each_workload_has_the_default_its_users_run():
    assert DEFAULT_LAUNCH == {"train": "eager", "prefill": "eager", "decode": "graph"}
    assert TIME_COLUMN == {"graph": "device_ms", "eager": "eager_ms"}


def test_launch_bound_needs_a_gap_beyond_the_noise_and_the_floor():
    assert launch_bound(0.061, 0.209, 0.003, 0.155) is True
    assert launch_bound(1.0, 1.0 + LAUNCH_BOUND_MIN / 2, 0.001, 0.001) is False  # under the 5% floor
    assert launch_bound(1.0, 1.2, 0.001, 0.30) is False  # under the eager samplings' own noise
    assert launch_bound(None, 0.2) is None and launch_bound(0.1, float("nan")) is None


def test_an_unknown_regime_is_refused_with_the_option_named():
    assert check_launch("eager") == "eager"
    with pytest.raises(ConfigError, match="--launch must be one of graph, eager"):
        check_launch("bogus")


def test_an_unprimed_eager_time_is_one_of_few_calls_a_burst_without_the_primed_mark():
    assert unprimed_eager({"calls_per_burst": 1, "bursts": 15, "timer": "events"})
    assert unprimed_eager({"calls_per_burst": PRIMED_MIN_CALLS - 1, "timer": "events"})
    assert not unprimed_eager({"calls_per_burst": PRIMED_MIN_CALLS, "timer": "events"})
    assert not unprimed_eager({"calls_per_burst": 1, "timer": "events", "primed": True})
    assert not unprimed_eager({"calls_per_burst": 1, "timer": "wall"})  # a CPU call is its own launch
    assert not unprimed_eager(None) and not unprimed_eager({})
