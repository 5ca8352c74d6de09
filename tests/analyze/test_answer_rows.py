"""Which rows of a case an answer ranks (analyze/answer/rows.py): per backend its library's newest version, and
per backend and mode the replicates of its newest run, as the pandas groupings they replace chose them."""

from __future__ import annotations

import math

import pandas as pd

from qlabench.analyze.answer.rows import newest_run, newest_version


def _rows(*rows) -> pd.DataFrame:
    cols = ("backend", "mode", "timestamp", "run_id", "fla_version")
    return pd.DataFrame([dict(zip(cols, r)) for r in rows]).astype({"backend": "str", "run_id": "str"})


def test_newest_run_keeps_every_replicate_of_the_newest_run_of_each_backend_and_mode():
    df = _rows(("fla", "fwd", "2026-12-01T00:00:00", "old", "0.6.0"),
               ("fla", "fwd", "2026-12-02T00:00:00", "new", "0.6.0"),
               ("fla", "fwd", "2026-12-01T12:00:00", "new", "0.6.0"),  # an earlier replicate of the newest run
               ("fla", "fwd_bwd", "2026-12-01T00:00:00", "old", "0.6.0"),
               ("fla", "fwd", "2026-12-02T00:00:00", "tie", "0.6.0"))  # at the newest time too: the first met wins
    assert list(newest_run(df).index) == [1, 2, 3]


def test_newest_run_leaves_out_a_row_without_a_backend_or_a_time():
    df = _rows((None, "fwd", "2026-12-01T00:00:00", "a", "0.6.0"),
               ("fla", "fwd", math.nan, "b", "0.6.0"),
               ("fla", "fwd", "2026-11-01T00:00:00", "c", "0.6.0"))
    assert list(newest_run(df)["run_id"]) == ["c"]


def test_newest_version_keeps_each_backends_newest_version_in_the_one_version_order():
    df = _rows(("fla", "fwd", "t", "a", "0.6.0"), ("fla", "fwd", "t", "b", "0.10.0"),
               ("fla", "fwd", "t", "c", "0.10.0"), ("fla-recurrent", "fwd", "t", "d", None),
               (None, "fwd", "t", "e", "9.9"))
    assert list(newest_version(df)["run_id"]) == ["b", "c", "d"]
