"""Helpers for result DataFrames: stable row keys that survive NaN/None and list-valued columns."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .point import WORKLOAD_AXES


def _norm(v):
    """Plain-Python value: None for NaN/None, tuples for lists and arrays."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, (list, tuple, np.ndarray)):
        return tuple(_norm(x) for x in v)
    if isinstance(v, np.generic):
        return v.item()
    return v


def key_series(df: pd.DataFrame, columns) -> pd.Series:
    """One hashable string per row from `columns` (None and NaN compare equal)."""
    cols = list(columns)
    if df.empty:
        return pd.Series([], dtype=object, index=df.index)
    return pd.Series([repr(tuple(_norm(v) for v in row)) for row in df[cols].itertuples(index=False, name=None)],
                     index=df.index)


def workload_keys(df: pd.DataFrame, with_backend: bool = False) -> pd.Series:
    return key_series(df, (["backend"] if with_backend else []) + list(WORKLOAD_AXES))
