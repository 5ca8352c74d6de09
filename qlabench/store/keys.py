"""Point keys that agree whether a point comes from a `Point`, a `ResultRow` or parquet via pandas.

pandas turns lists into arrays, ints into numpy scalars, nulls into NaN, and a nullable int column
with nulls into floats (tp 2 -> 2.0). Every place that matches rows (resume, compare, merge, kernels
table, latest-per-point) keys them through `key_value`, so they all agree.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from qlabench.core.identity import key_axes, workload_axes

# A row's identity: the backend and every workload axis (core/identity.py defines them).
KEY_COLUMNS = key_axes()


# Types that are their own plain value and key (exactly these: a numpy scalar subclassing one is not). Most values
# keyed are of them, and a view keys ~10^4 values: they return before any other test.
_SELF_KEYED = (str, int, bool)


def plain_value(v):
    """Plain Python for a value read through pandas: None for NaN/None, tuples for sequences."""
    if type(v) in _SELF_KEYED:
        return v
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, (list, tuple, np.ndarray)):
        return tuple(plain_value(x) for x in v)
    if isinstance(v, np.generic):
        return plain_value(v.item())
    return v


def key_value(v):
    """`plain_value`, with integral floats read back as ints (tp 2.0 -> 2).

    The two float axes (gate_zero_frac, gate_scale) go through the same rule on every side, so 0.0
    and 64.0 key as 0 and 64 whether they come from a Point or a parquet column; null stays None
    (a version-1 file reads both as null, and a Point stores the profile's defaults as None).
    """
    if type(v) in _SELF_KEYED:
        return v
    if type(v) is float:
        return None if v != v else int(v) if v.is_integer() else v
    v = plain_value(v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, tuple):
        return tuple(key_value(x) for x in v)
    return v


def key_tuple(values: Iterable) -> tuple:
    return tuple(key_value(v) for v in values)


def point_key(values: Iterable) -> str:
    """The key string of one point from its KEY_COLUMNS values (a row's, or `Point.key()`)."""
    return repr(key_tuple(values))


def get_field(obj, name: str):
    """`name` of a Point, ResultRow, dict or pandas Series (whose methods, e.g. .mode, must not win)."""
    if isinstance(obj, (Mapping, pd.Series)):
        return obj.get(name)
    return getattr(obj, name)


def key_of(obj, columns: Iterable[str] = KEY_COLUMNS) -> str:
    return point_key(get_field(obj, c) for c in columns)


def _column_keys(s: pd.Series) -> list:
    """`key_value` of every value of one column, a column at a time: numeric columns without a Python call
    per value (a results tree holds ~10^4 rows and a key is built over ~20 columns)."""
    kind = s.dtype.kind
    if kind in "iub":
        return s.tolist()
    if kind == "f":
        return [None if v != v else int(v) if v.is_integer() else v for v in s.tolist()]
    # A string is its own key (most of a key's columns: no call per value); an integer list (seqlens: up to one
    # length per sequence of a 1024-sequence decode batch) in one call.
    return [v if type(v) is str else tuple(v.tolist()) if isinstance(v, np.ndarray) and v.dtype.kind in "iu"
            else key_value(v) for v in s.tolist()]


def key_series(df: pd.DataFrame, columns) -> pd.Series:
    """`point_key` over `columns` for every row of a DataFrame (the same strings, built a column at a time)."""
    cols = list(columns)
    if df.empty:
        return pd.Series([], dtype=object, index=df.index)
    # A frame without a later-added key column (e.g. cp_world_size, cp_mode, gate_zero_frac, gate_scale)
    # reads it as null, as an old results file does after schema.upgrade.
    per_column = [_column_keys(df[c]) if c in df.columns else [None] * len(df) for c in cols]
    return pd.Series([repr(t) for t in zip(*per_column)], index=df.index, dtype=object)


def newest_rows(df: pd.DataFrame, columns, keys: pd.Series | None = None) -> pd.DataFrame:
    """The newest row (by timestamp; the later one of equals) of each group of rows equal on `columns`:
    the one rule for "the newest row per point" (a point's key columns, a problem's axes, ...). `keys`:
    key_series(df, columns), when the caller has built them already."""
    if df.empty:
        return df
    # Ordered and deduplicated on the timestamp, key and position alone, then the rows taken once: each step over
    # the whole frame copied every column (~110 of them).
    tmp = df[["timestamp"]].assign(_k=key_series(df, columns) if keys is None else keys, _at=range(len(df)))
    kept = tmp.sort_values("timestamp", kind="stable").drop_duplicates("_k", keep="last")["_at"].to_numpy()
    return df.iloc[kept].reset_index(drop=True)


def workload_keys(df: pd.DataFrame, with_backend: bool = False) -> pd.Series:
    return key_series(df, KEY_COLUMNS if with_backend else workload_axes())
