"""Statistics and verdicts of `qlabench compare`, on sample sets built directly (no runs, no torch)."""

from __future__ import annotations

import numpy as np
import pytest

from qlabench.analyze.compare import CompareOptions, Verdict, pair_stats
from qlabench.analyze.compare.stats import _resampled_medians, geometric_mean
from qlabench.analyze.compare.verdict import Failure, parse_fail_on, status_verdict, timing_verdict
from qlabench.core.errors import QlabenchError

OPT = CompareOptions()


def noisy(rng, median_ms: float, n: int, rel_noise: float = 0.03) -> np.ndarray:
    """Timing-like samples: lognormal spread around `median_ms` plus a few slow outliers."""
    s = median_ms * np.exp(rng.normal(0.0, rel_noise, n))
    outliers = rng.random(n) < 0.05
    s[outliers] *= 1.0 + rng.exponential(0.3, outliers.sum())
    return s


def verdict(base, head, opt=OPT) -> Verdict:
    return timing_verdict(pair_stats(base, head, opt.alpha), opt)[0]


@pytest.mark.parametrize("n", [1, 2, 3, 10, 11, 100])
@pytest.mark.parametrize("decimals", [2, 12])  # 2: many tied samples, as timers with a coarse clock give
def test_resampled_medians_are_np_medians_of_the_same_draws_bit_for_bit(n, decimals):
    x = np.round(np.random.default_rng(n).lognormal(0.0, 0.2, n), decimals)
    slow = np.median(np.random.default_rng(7).choice(x, size=(500, n), replace=True), axis=1)
    fast = _resampled_medians(x, np.random.default_rng(7), 500)
    assert np.array_equal(slow, fast)


def test_bootstrap_is_reproducible_and_brackets_the_ratio():
    rng = np.random.default_rng(1)
    b, h = noisy(rng, 1.0, 30), noisy(rng, 1.2, 30)
    s1, s2 = pair_stats(b, h, 0.01), pair_stats(b, h, 0.01)
    assert (s1.ci_low, s1.ci_high) == (s2.ci_low, s2.ci_high)
    assert s1.ci_low < s1.ratio < s1.ci_high
    assert s1.ci_low > 1.1 and s1.p_value < 1e-6


def test_aa_flags_no_regression():
    # 300 A/A pairs drawn from one distribution, as two runs of an unchanged kernel.
    rng = np.random.default_rng(2)
    verdicts = [verdict(noisy(rng, 1.0, 25), noisy(rng, 1.0, 25)) for _ in range(300)]
    assert verdicts.count(Verdict.SLOWER) == 0
    assert verdicts.count(Verdict.FASTER) == 0
    # 3% per-call noise and 25 samples: "same" needs a threshold wider than the interval, as 5% is
    wide = CompareOptions(threshold=0.05)
    verdicts = [verdict(noisy(rng, 1.0, 25), noisy(rng, 1.0, 25), wide) for _ in range(300)]
    assert verdicts.count(Verdict.SAME) > 250  # and not by calling everything ambiguous


def test_ten_percent_slowdown_is_detected():
    rng = np.random.default_rng(3)
    verdicts = [verdict(noisy(rng, 1.0, 30), noisy(rng, 1.10, 30)) for _ in range(200)]
    assert verdicts.count(Verdict.SLOWER) >= 0.95 * 200


def test_two_percent_slowdown_is_not_a_regression():
    # Real but below the 5% threshold: never a regression, however significant.
    rng = np.random.default_rng(4)
    verdicts = [verdict(noisy(rng, 1.0, 200, 0.01), noisy(rng, 1.02, 200, 0.01)) for _ in range(50)]
    assert Verdict.SLOWER not in verdicts


def test_ci_straddling_the_threshold_is_ambiguous():
    rng = np.random.default_rng(5)
    v, why = timing_verdict(pair_stats(noisy(rng, 1.0, 12, 0.08), noisy(rng, 1.06, 12, 0.08), 0.01), OPT)
    assert v is Verdict.AMBIGUOUS and "straddles" in why


def test_too_few_samples_is_ambiguous_even_when_far_slower():
    v, why = timing_verdict(pair_stats([1.0, 1.01, 0.99], [2.0, 2.01, 1.99], 0.01), OPT)
    assert v is Verdict.AMBIGUOUS and "too few samples" in why


def test_faster_is_symmetric():
    rng = np.random.default_rng(6)
    assert verdict(noisy(rng, 1.2, 30), noisy(rng, 1.0, 30)) is Verdict.FASTER


def test_status_verdicts():
    assert status_verdict("ok", "incorrect")[2] is Failure.STATUS
    assert status_verdict("ok", "error")[2] is Failure.STATUS
    assert status_verdict("ok", "skipped")[2] is Failure.MISSING
    assert status_verdict("error", "ok")[2] is None
    assert status_verdict("skipped", "skipped")[0] is Verdict.NOT_TIMED


def test_geometric_mean():
    assert geometric_mean([2.0, 0.5]) == pytest.approx(1.0)
    assert geometric_mean([]) is None


def test_options_and_policy_validation():
    with pytest.raises(QlabenchError):
        CompareOptions(threshold=5)
    with pytest.raises(QlabenchError):
        parse_fail_on("regression,bogus")
    assert parse_fail_on("") == frozenset()
    assert parse_fail_on("missing, status") == {Failure.MISSING, Failure.STATUS}
