"""Rows as records (analyze/evidence/records.py): the same values as pandas' records, and grouped once, the
same groups, in the same order, as pandas' groupby."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from qlabench.analyze.evidence.records import grouped_records, records


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


def _same(a, b) -> bool:
    """Equal values of one type (NaN equal to NaN, arrays by content)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    return a == b


def _assert_as_pandas(df: pd.DataFrame, columns=None) -> None:
    theirs = df[list(df.columns) if columns is None else list(columns)].to_dict("records")
    mine = records(df, columns)
    assert len(mine) == len(theirs)
    for m, t in zip(mine, theirs):
        assert list(m) == list(t)
        for c in t:
            assert _same(m[c], t[c]), (c, m[c], t[c], type(m[c]), type(t[c]))


def test_records_are_pandas_records_value_for_value_and_type_for_type():
    df = pd.DataFrame({
        "i": [1, 2, 3], "f": [1.5, math.nan, 2.0], "b": [True, False, True], "u": np.array([1, 2, 3], np.uint8),
        "f32": np.array([1.5, math.nan, 3], np.float32),
        "numpy scalars": [np.float64(1.5), np.int64(3), np.bool_(True)],  # made Python's, as pandas does
        "na": [pd.NA, None, "x"], "arrays": [np.arange(3), np.array([]), None], "lists": [[1], None, [2, 3]],
        "str": pd.Series(["a", None, "c"], dtype="str"), "string": pd.array(["a", None, "c"], dtype="string"),
        "np str": [np.str_("a"), "b", None], "long double": [np.longdouble(1.5), 2.0, None],
        # kinds left to pandas, which boxes them its own way
        "Int64": pd.array([1, None, 3], dtype="Int64"), "datetime": pd.to_datetime(["2026-01-01", None, "2026-01-02"]),
        "category": pd.Categorical(["a", "b", "a"]), "object datetime": [np.datetime64("2026-01-01"), None, 1],
    })
    _assert_as_pandas(df)
    for c in df.columns:
        _assert_as_pandas(df, [c])
    _assert_as_pandas(df, ["f", "i"])  # the columns asked for, in that order
    _assert_as_pandas(df.iloc[:0])
    assert records(df, []) == [{}, {}, {}]


def test_records_of_a_frame_with_a_repeated_column_are_pandas_records():
    df = pd.DataFrame([[1, 2.5], [3, 4.5]], columns=["a", "a"])
    with pytest.warns(UserWarning, match="not unique"):
        theirs = df.to_dict("records")
    with pytest.warns(UserWarning, match="not unique"):
        assert records(df) == theirs


def test_detail_reads_one_key_of_a_rows_details_and_none_where_there_is_nothing_to_read():
    from qlabench.analyze.evidence.records import detail

    raw = '{"eager_launch": {"calls_per_burst": 4, "primed": true}, "call_path": "cp"}'
    assert detail(raw, "eager_launch") == {"calls_per_burst": 4, "primed": True}
    assert detail(raw, "call_path") == "cp"
    assert detail(raw, "check_path") is None  # not in the text: not parsed
    assert detail(None, "call_path") is None and detail(float("nan"), "call_path") is None
    assert detail('{"call_path": ', "call_path") is None  # details that do not parse
    assert detail('["call_path"]', "call_path") is None  # details that are no mapping
