"""Resume: which points of a suite are already recorded `ok` in a results folder, for this environment.

A row counts as done when its suite name, its env fingerprint (env.FINGERPRINT_FIELDS: device and
library versions) and its (backend, workload) key match, and its status is ok. Rows of any status
other than ok are measured again, so a timeout or crash gets another chance.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from .errors import StoreError
from .point import WORKLOAD_AXES, Point
from .result import Status
from .store import read_results, result_files

KEY_COLUMNS = ("backend",) + WORKLOAD_AXES


def _canon(v):
    """One spelling per value, whether it came from a Point or from parquet via pandas.

    pandas turns a nullable int column with nulls into floats (tp 2 -> 2.0), lists into arrays and
    ints into numpy scalars; all of them map back to plain Python here.
    """
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, (list, tuple, np.ndarray)):
        return tuple(_canon(x) for x in v)
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def point_key(p: Point) -> tuple:
    return tuple(_canon(getattr(p, c)) for c in KEY_COLUMNS)


def done_keys(out_root: str | os.PathLike, suite: str, env_fingerprint: str) -> set[tuple]:
    """Keys of the points of `suite` recorded ok under `env_fingerprint` in <out_root>/<suite>/."""
    folder = Path(out_root) / suite
    if not folder.is_dir():
        return set()
    try:
        result_files([folder])
    except StoreError:  # a folder with no result files yet
        return set()
    df = read_results([folder])
    df = df[(df["status"] == Status.OK.value) & (df["env_fingerprint"] == env_fingerprint) & (df["suite"] == suite)]
    return {tuple(_canon(v) for v in row) for row in df[list(KEY_COLUMNS)].itertuples(index=False, name=None)}


def remaining(points: Iterable[Point], done: set[tuple]) -> list[Point]:
    return [p for p in points if point_key(p) not in done]
