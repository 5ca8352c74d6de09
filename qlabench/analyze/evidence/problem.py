"""Which rows are one problem, and which are one point: keys built from core/identity.py's axes.

A problem is what a kernel computes: the axes flagged `problem` (the backend, mode, heads, head dims,
dtypes, gate, initial state, CP split, the serving state pool and the token lengths), whatever the layout,
seed or model label. One dense sequence of 32768 tokens and the same sequence packed as varlen are one
problem; so are a dense batch of 4 x 8192 and its varlen twin (dense `seqlens` hold one length per
sequence already). An fp32 pool and a bf16 pool are two problems. A new axis is a problem axis until it
says otherwise (core/identity.py: Axis.problem), and reaches every key here by itself.
"""

from __future__ import annotations

import pandas as pd

from qlabench.core.identity import problem_axes
from qlabench.store.keys import KEY_COLUMNS, key_series, newest_rows


def problem_keys(df: pd.DataFrame) -> pd.Series:
    """The problem each row measured (its backend included): one key string per row."""
    return key_series(df, problem_axes())


def point_keys(df: pd.DataFrame) -> pd.Series:
    """The point each row measured: the backend and every workload axis (the store's key)."""
    return key_series(df, KEY_COLUMNS)


def newest_per_problem(df: pd.DataFrame, keys: pd.Series | None = None) -> pd.DataFrame:
    """The newest row of each problem (any layout, seed or model label); `keys`: problem_keys(df), if built."""
    return newest_rows(df, problem_axes(), keys)
