"""Rows as records, grouped once (analyze/evidence/records.py): the same groups, in the same order, as
pandas' groupby."""

from __future__ import annotations

import math

import pandas as pd

from qlabench.analyze.evidence.records import grouped_records


def test_groups_match_pandas_groupby_in_order_and_content():
    df = pd.DataFrame({"a": ["x", "y", "x", "z", "y"], "b": [2, 1, 2, 3, 1], "v": [1.0, 2.0, 3.0, 4.0, 5.0]})
    for by in ("a", ["a", "b"]):
        for sort in (False, True):
            mine = [(k, [r["v"] for r in rs]) for k, rs in grouped_records(df, by, sort=sort)]
            theirs = [(k, list(g["v"])) for k, g in df.groupby(by, sort=sort)]
            assert mine == theirs, (by, sort)


def test_rows_with_a_missing_key_are_left_out_as_groupby_does_and_columns_narrow_records():
    df = pd.DataFrame({"a": ["x", None, "x", math.nan], "v": [1, 2, 3, 4], "w": [0, 0, 0, 0]})
    groups = grouped_records(df, "a", columns=("v",))
    assert groups == [("x", [{"v": 1}, {"v": 3}])]
    assert grouped_records(df.iloc[:0], "a") == []
