"""The timing regime of a row and the rows a ranking reads (qlabench/analyze/evidence/regimes.py)."""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.evidence.regimes import prefer_recommended, regime_note, regime_series


def _rows(*specs):
    return pd.DataFrame([{"backend": b, "point": p, "status": s, "timing_regime": r} for b, p, s, r in specs])


def test_a_row_without_a_recorded_regime_was_a_burst():
    df = _rows(("a", 1, "ok", None), ("a", 2, "ok", "sustained"))
    assert regime_series(df).tolist() == ["burst", "sustained"]
    assert regime_series(df.drop(columns="timing_regime")).tolist() == ["burst", "burst"]


def test_per_group_the_recommended_regime_wins_where_it_has_an_ok_row():
    df = _rows(("a", 1, "ok", "burst"), ("a", 1, "ok", "sustained"),  # both: the sustained row only
               ("a", 2, "ok", "burst"),  # burst alone: kept
               ("b", 1, "ok", None), ("b", 1, "error", "sustained"))  # the sustained row failed: the burst stays
    kept = prefer_recommended(df, ["backend", "point"])
    assert sorted(map(tuple, kept[["backend", "point", "status", "timing_regime"]].fillna("-").values.tolist())) == [
        ("a", 1, "ok", "sustained"), ("a", 2, "ok", "burst"), ("b", 1, "error", "sustained"), ("b", 1, "ok", "-")]


def test_the_note_names_only_the_times_read_in_another_regime():
    assert regime_note({"a": {"sustained"}}) is None
    note = regime_note({"a": {"sustained"}, "b": {"burst"}, "c": {"burst", "sustained"}})
    assert note.startswith("regime: b (burst), c (burst) timed in short bursts") and "a (" not in note
