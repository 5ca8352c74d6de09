"""Drift-aware comparison: a whole run that moved is one finding, not a regression at every point.

These are tests of the per-sample method (`method="samples"`), the one drift correction was built for;
with the between-run method (the default) one run per side is never called slower at all.
"""

import numpy as np
import pandas as pd
import pytest

from qlabench.analyze.compare import CompareOptions
from qlabench.analyze.compare.comparison import compare_frames
from qlabench.analyze.compare.drift import suite_shift
from qlabench.analyze.compare.verdict import Failure, Verdict


def _frame(make_row, medians, rng, spread=0.005, n=20, run_id="r"):
    rows = []
    for i, m in enumerate(medians):
        samples = tuple(m * (1 + spread * rng.standard_normal(n)))
        rows.append(make_row(run_id=run_id, seed=i, samples_ms=samples, median_ms=float(np.median(samples)),
                             n_samples=n).as_dict())
    return pd.DataFrame(rows)


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def test_suite_shift_is_the_median_ratio_and_needs_a_few_points():
    s = suite_shift([1.2, 1.21, 1.19, 1.2, 3.0], alpha=0.01)
    assert s.ratio == pytest.approx(1.2, rel=1e-9) and s.ci_low <= 1.2 <= s.ci_high and s.n == 5
    assert suite_shift([1.2, 1.3], alpha=0.01) is None


def test_a_drifting_aa_run_flags_every_point_without_correction_and_none_with_it(make_row, rng):
    medians = rng.uniform(1.0, 5.0, 40)
    base = _frame(make_row, medians, rng, run_id="b")
    head = _frame(make_row, medians * 1.15, rng, run_id="h")  # the machine got 15% slower, the code did not
    plain = compare_frames(base, head, CompareOptions(method="samples"))
    assert plain.counts["slower"] >= 35 and plain.exit_code == 1
    drift = compare_frames(base, head, CompareOptions(drift=True, method="samples"))
    assert drift.counts["slower"] == 0 and drift.exit_code == 0
    assert drift.shift.ratio == pytest.approx(1.15, rel=0.01)
    # The shift is still a finding: it fails when the policy asks for it.
    strict = compare_frames(base, head, CompareOptions(drift=True, method="samples"),
                            fail_on={Failure.REGRESSION, Failure.STATUS, Failure.SHIFT})
    assert strict.shift_fails and strict.exit_code == 1


def test_a_real_regression_stands_out_of_the_drift(make_row, rng):
    medians = rng.uniform(1.0, 5.0, 40)
    base = _frame(make_row, medians, rng, run_id="b")
    factor = np.full(40, 0.85)  # the machine got faster ...
    factor[3] = 0.85 * 1.10  # ... and one point got 10% slower than the rest
    head = _frame(make_row, medians * factor, rng, run_id="h")
    c = compare_frames(base, head, CompareOptions(drift=True, method="samples"))
    slower = [p for p in c.pairs if p.verdict is Verdict.SLOWER]
    assert len(slower) == 1 and "seed=3" in slower[0].label
    assert "relative to the suite-wide shift" in slower[0].reason and c.exit_code == 1
    assert compare_frames(base, head, CompareOptions(method="samples")).counts["slower"] == 0  # hidden by the drift otherwise
