"""Resume: which points of a suite are already recorded `ok` in a results folder, for this environment.

A row counts as done when its suite name, its env fingerprint (env.FINGERPRINT_FIELDS: device and
library versions) and its (backend, workload) key match, and its status is ok. Rows of any status
other than ok are measured again, so a timeout or crash gets another chance.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from qlabench.core.errors import StoreError
from qlabench.store.keys import KEY_COLUMNS, key_tuple
from qlabench.core.point import Point
from qlabench.core.result import Status
from qlabench.store.files import read_results, result_files

def point_key(p: Point) -> tuple:
    return key_tuple(getattr(p, c) for c in KEY_COLUMNS)


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
    return {key_tuple(row) for row in df[list(KEY_COLUMNS)].itertuples(index=False, name=None)}


def remaining(points: Iterable[Point], done: set[tuple]) -> list[Point]:
    return [p for p in points if point_key(p) not in done]
