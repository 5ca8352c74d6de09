"""Key values (store/keys.py): one plain value and one key per value, whichever way it was read."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from qlabench.store.keys import key_value, newest_rows, plain_value


def test_plain_values_are_python_none_for_missing_and_tuples_for_sequences():
    assert plain_value("fla") == "fla" and plain_value(3) == 3 and plain_value(True) is True
    assert plain_value(None) is None and plain_value(math.nan) is None and plain_value(np.float64("nan")) is None
    assert plain_value(2.0) == 2.0 and type(plain_value(2.0)) is float  # a plain value keeps its float
    assert type(plain_value(np.int64(3))) is int and type(plain_value(np.bool_(True))) is bool
    assert type(plain_value(np.str_("fla"))) is str  # numpy's str, a subclass of str, is made Python's
    assert plain_value(np.array([1, 2])) == (1, 2) and plain_value([1.5, None, math.nan]) == (1.5, None, None)


def test_keys_read_integral_floats_as_ints_wherever_they_come_from():
    for v, key in ((2.0, 2), (np.float64(2.0), 2), (-0.0, 0), (2.5, 2.5), (math.inf, math.inf), ("2.0", "2.0"),
                   (np.array([8192.0, 1024.0]), (8192, 1024)), ((1.0, np.nan), (1, None))):
        assert key_value(v) == key and type(key_value(v)) is type(key), v
    assert key_value(math.nan) is None and key_value(None) is None
    assert key_value(True) is True and type(key_value(np.bool_(False))) is bool  # a bool is no int here
    assert type(key_value(np.str_("bf16"))) is str


def test_newest_rows_keep_each_keys_newest_row_the_later_of_equals_in_time_order_with_the_frames_columns():
    df = pd.DataFrame({"timestamp": ["2026-01-02", "2026-01-01", "2026-01-02", "2026-01-01", None],
                       "k": ["a", "a", "a", "b", "b"], "v": [1, 2, 3, 4, 5], "x": [0.5, 1.5, 2.5, 3.5, 4.5]},
                      index=[0, 0, 1, 1, 2])  # repeated labels, as a frame concatenated from files has
    df.attrs["note"] = "kept"
    got = newest_rows(df, ["k"])
    # a: the two rows of 2026-01-02 tie and the later one (v=3) counts; b: a row without a time sorts last
    assert got["v"].tolist() == [3, 5] and got.index.tolist() == [0, 1]
    assert list(got.columns) == list(df.columns) and (got.dtypes == df.dtypes).all()
    assert got.attrs == {"note": "kept"}
    assert newest_rows(df.iloc[:0], ["k"]).empty
