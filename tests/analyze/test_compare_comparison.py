"""compare_frames: a time that is not a number is reported (exit 2), and nothing timed is not a pass."""

from __future__ import annotations

import pandas as pd
import pytest

from qlabench.analyze.compare import Verdict, compare_frames
from qlabench.core.errors import StoreError


def _side(make_row, run_id="r", reps=3, **changes):
    return pd.DataFrame([make_row(run_id=run_id, seed=s, replicate=r, **changes).as_dict()
                         for s in range(2) for r in range(reps)])


def _spoil(df: pd.DataFrame, column: str, value) -> pd.DataFrame:
    """One ok row's time replaced as a damaged or hand-edited file holds it (ResultRow would refuse it)."""
    df = df.copy()
    df[column] = df[column].astype(object)
    df.at[1, column] = value
    return df


BAD_TIMES = {
    "a NaN sample": ("samples_ms", (1.0, float("nan"), 1.2)),
    "a null sample": ("samples_ms", (1.0, None, 1.2)),
    "a NaN median and no samples": ("median_ms", float("nan")),
    "a null median and no samples": ("median_ms", None),
}


@pytest.mark.parametrize("side", ["base", "head"])
@pytest.mark.parametrize("case", sorted(BAD_TIMES))
def test_a_nan_or_null_time_is_reported_not_a_crash(make_row, side, case):
    column, value = BAD_TIMES[case]
    good = _side(make_row)
    bad = _spoil(good, column, value)
    if column == "median_ms":
        bad = _spoil(bad, "samples_ms", ())
    base, head = (bad, good) if side == "base" else (good, bad)
    with pytest.raises(StoreError, match=rf"^{side} row of .* replicate 1\): .*an ok row needs a time"):
        compare_frames(base, head)


def test_a_nan_time_in_the_history_is_reported(make_row):
    good = _side(make_row)
    with pytest.raises(StoreError, match="^history row"):
        compare_frames(good, good, history=_spoil(good, "samples_ms", (float("nan"),)))


def test_nothing_timed_on_both_sides_is_not_a_pass(make_row):
    ok = _side(make_row, "ok")
    error = _side(make_row, "err", status="error", samples_ms=(), median_ms=None)
    skipped = _side(make_row, "sk", status="skipped", samples_ms=(), median_ms=None)
    c = compare_frames(error, ok)  # a baseline whose rows all failed: error -> ok fails nothing
    assert {p.verdict for p in c.pairs} == {Verdict.STATUS_CHANGED} and not c.failures
    assert c.exit_code == 2 and any("nothing was compared" in n for n in c.notes)
    assert compare_frames(skipped, skipped).exit_code == 2
    assert compare_frames(ok, error).exit_code == 1  # a failure stays a failure
    c = compare_frames(ok, ok)
    assert c.exit_code == 0 and not any("nothing was compared" in n for n in c.notes)


def test_a_kernel_that_vanishes_fails_the_gate_by_default(make_row):
    base = pd.concat([_side(make_row, backend="naive-chunk"), _side(make_row, backend="naive-recurrent")])
    head = pd.concat([_side(make_row, run_id="h", backend="naive-chunk"),
                      _side(make_row, run_id="h", backend="naive-recurrent", status="skipped",
                            reason="backend not available")])
    c = compare_frames(base, head)
    assert c.exit_code == 1 and {p.verdict for p in c.failures} == {Verdict.STATUS_CHANGED}
    gone = compare_frames(base, _side(make_row, run_id="h", backend="naive-chunk"))  # not in head at all
    assert gone.exit_code == 1 and {p.verdict for p in gone.failures} == {Verdict.MISSING}


def test_a_baseline_of_another_suite_is_refused(make_row):
    base, head = _side(make_row, suite="study"), _side(make_row, run_id="h", suite="smoke")
    with pytest.raises(StoreError, match="another suite"):
        compare_frames(base, head)
    assert compare_frames(base, head, allow_other_suite=True).timed
