"""The calls-per-sample sensitivity verdict (core/timing_sensitivity.py): a spread beyond the noise, never below 1%."""

from __future__ import annotations

import pytest

from qlabench.core.timing_sensitivity import FLOOR_REL, calls_sensitivity, sensitivity_counts


def test_a_spread_beyond_twice_the_noise_is_sensitive():
    v = calls_sensitivity({2: 0.716, 1: 0.760, 64: 0.790}, {2: 0.004, 1: 0.005, 64: 0.003})
    assert v.sensitive
    assert v.spread == pytest.approx(0.790 / 0.716 - 1)
    assert v.threshold == FLOOR_REL  # 2 x 0.5% noise is the floor itself
    assert v.note().startswith("0.76 ms at 1, 0.716 at 2, 0.79 at 64 calls per sample (+10.3%")


def test_a_spread_within_the_noise_is_not():
    v = calls_sensitivity({1: 1.00, 64: 1.05}, {1: 0.04, 64: 0.01})  # 5% apart, 4% IQR: limit 8%
    assert not v.sensitive and v.threshold == pytest.approx(0.08)


def test_quiet_samples_never_make_a_sub_percent_spread_sensitive():
    assert not calls_sensitivity({1: 1.000, 8: 1.008}, {1: 0.0, 8: 0.0}).sensitive
    assert calls_sensitivity({1: 1.000, 8: 1.02}, {1: 0.0, 8: float("nan")}).sensitive


@pytest.mark.parametrize("medians", [{1: 1.0}, {1: 1.0, 8: 0.0}])
def test_one_count_or_a_zero_median_is_refused(medians):
    with pytest.raises(ValueError):
        calls_sensitivity(medians, {})


@pytest.mark.parametrize("chosen, other, want", [(2, 64, (1, 64)), (1, 64, (64,)), (64, 64, (1,)), (5, 8, (1, 8))])
def test_the_counts_measured_beside_the_rows_own(chosen, other, want):
    assert sensitivity_counts(chosen, other) == want
