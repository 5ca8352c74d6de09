"""The kernels table on disk: `<run_id>.kernels.parquet` beside the run's results file, written atomically.

One row per kernel launch of one timed call (schema: smutil.KERNELS_SCHEMA), linked to its result row
by (run_id, point_key). The `.kernels.parquet` suffix keeps it out of the results readers (store.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .errors import StoreError
from .smutil import KERNELS_SCHEMA
from .store import write_table

KERNELS_SUFFIX = ".kernels.parquet"


def kernels_path(results_path: str | os.PathLike) -> Path:
    """Where the kernels of a results file live: OUT/<suite>/<run_id>.parquet -> <run_id>.kernels.parquet."""
    p = Path(results_path)
    return p.with_name(p.name.removesuffix(".parquet") + KERNELS_SUFFIX)


def write_kernels(path: str | os.PathLike, tables: Iterable[pa.Table]) -> Path:
    """Concatenate kernels tables and write them to `path` atomically (temp file + rename)."""
    tables = list(tables)
    return write_table(path, pa.concat_tables(tables) if tables else KERNELS_SCHEMA.empty_table())


def read_kernels(paths: Iterable[str | os.PathLike]) -> pd.DataFrame:
    """Every kernels file among `paths` (files, or folders searched recursively) as one DataFrame."""
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files.extend(sorted(p.rglob("*" + KERNELS_SUFFIX)))
        elif p.is_file() and p.name.endswith(KERNELS_SUFFIX):
            files.append(p)
        elif p.is_file():
            k = kernels_path(p)  # a results file: its kernels sit beside it, if it has any
            if k.is_file():
                files.append(k)
    tables = []
    for f in files:
        try:
            tables.append(pq.read_table(f))
        except (OSError, pa.ArrowInvalid) as e:
            raise StoreError(f"{f}: cannot read kernels parquet: {e}") from e
    if not tables:
        return KERNELS_SCHEMA.empty_table().to_pandas()
    return pa.concat_tables(tables, promote_options="default").to_pandas()


def kernels_from_results(df: pd.DataFrame) -> list[pa.Table]:
    """The kernels table of every GPU row of a results DataFrame (rows carry their kernel breakdown)."""
    from .profiling import events_from_row
    from .smutil import kernels_table

    tables = []
    for _, row in df.iterrows():
        events = events_from_row(row)
        if events:
            tables.append(kernels_table(row["run_id"], row, events))
    return tables
