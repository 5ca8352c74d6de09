"""Reading and writing result files: one parquet file per run, written atomically.

A file is first written under a temporary name in the same folder and then renamed into place, so a
crash mid-write never leaves a partial `.parquet` file behind.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .errors import StoreError
from .result import ResultRow
from .schema import arrow_schema, upgrade


def run_path(out_root: str | os.PathLike, suite: str, run_id: str) -> Path:
    """Conventional location of a run's file: <out_root>/<suite>/<run_id>.parquet."""
    return Path(out_root) / suite / f"{run_id}.parquet"


def rows_to_table(rows: Iterable[ResultRow], metadata: dict[str, str] | None = None) -> pa.Table:
    schema = arrow_schema(metadata)
    dicts = [r.as_dict() for r in rows]
    return pa.Table.from_pylist(dicts, schema=schema)


def write_rows(path: str | os.PathLike, rows: Iterable[ResultRow], metadata: dict[str, str] | None = None) -> Path:
    """Write rows to `path` atomically (temp file + rename); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = rows_to_table(rows, metadata)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def result_files(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """Expand files and folders (searched recursively) into the parquet files they hold."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*.parquet") if not f.name.startswith(".")))
        elif p.is_file():
            out.append(p)
        else:
            raise StoreError(f"{p}: no such file or folder")
    if not out:
        raise StoreError("no result files found in " + ", ".join(map(str, paths)))
    return out


def read_table(path: str | os.PathLike) -> pa.Table:
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowInvalid) as e:
        raise StoreError(f"{path}: cannot read parquet: {e}") from e
    try:
        return upgrade(table, str(path))
    except ValueError as e:
        raise StoreError(str(e)) from e


def read_results(paths: Iterable[str | os.PathLike]) -> pd.DataFrame:
    """All rows of the given files/folders as one DataFrame, in the current schema."""
    tables = [read_table(f) for f in result_files(paths)]
    return pa.concat_tables(tables).to_pandas()


def read_rows(path: str | os.PathLike) -> list[ResultRow]:
    """Rows of one file as validated ResultRow records."""
    return [ResultRow(**{k: v for k, v in d.items()}) for d in read_table(path).to_pylist()]


def latest_per_point(df: pd.DataFrame) -> pd.DataFrame:
    """Keep only the newest row for each (backend, workload) key: re-runs supersede older runs."""
    if df.empty:
        return df
    from .frames import workload_keys

    tmp = df.assign(_k=workload_keys(df, with_backend=True))
    tmp = tmp.sort_values("timestamp").drop_duplicates("_k", keep="last")
    return tmp.drop(columns="_k").reset_index(drop=True)
