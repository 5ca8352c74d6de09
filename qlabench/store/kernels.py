"""The kernels table on disk: `<run_id>.kernels.parquet` beside the run's results file, written atomically.

One row per kernel launch of one timed call (schema: KERNELS_SCHEMA below), linked to its result row
by (run_id, point_key). The `.kernels.parquet` suffix keeps it out of the results readers (files.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from qlabench.core.errors import StoreError
from qlabench.core.kernel_event import KernelEvent, events_from_row
from qlabench.store.keys import KEY_COLUMNS, get_field, key_of, key_series
from qlabench.store.files import write_table

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

    tables = []
    for _, row in df.iterrows():
        events = events_from_row(row)
        if events:
            tables.append(kernels_table(row["run_id"], row, events))
    return tables


# -- one table per call ------------------------------------------------------------------------------
def row_keys(df: pd.DataFrame) -> pd.Series:
    """`point_key` of every row of a results DataFrame: join with a kernels table on (run_id, point_key)."""
    if df.empty:
        return pd.Series([], dtype=object, index=df.index)
    return key_series(df, KEY_COLUMNS)


KERNELS_SCHEMA = pa.schema([
    pa.field("run_id", pa.string()),
    pa.field("backend", pa.string()),
    pa.field("mode", pa.string()),
    pa.field("point_key", pa.string()),
    pa.field("kernel_index", pa.int64()),
    pa.field("name", pa.string()),
    pa.field("dur_us", pa.float64()),
    pa.field("grid_x", pa.int64()), pa.field("grid_y", pa.int64()), pa.field("grid_z", pa.int64()),
    pa.field("block_x", pa.int64()), pa.field("block_y", pa.int64()), pa.field("block_z", pa.int64()),
    pa.field("blocks", pa.int64()),
    pa.field("blocks_per_sm", pa.float64()),
], metadata={b"qlabench.kernels_version": b"1"})


def kernels_table(run_id: str, row, events: Sequence[KernelEvent]) -> pa.Table:
    """One row per kernel launch of `row` (a Point, ResultRow or mapping with the key columns)."""
    key, backend, mode = key_of(row), get_field(row, "backend"), get_field(row, "mode")
    recs = []
    for i, e in enumerate(events):
        g = e.grid or (None, None, None)
        b = e.block or (None, None, None)
        recs.append({
            "run_id": run_id, "backend": backend, "mode": mode, "point_key": key, "kernel_index": i,
            "name": e.name, "dur_us": e.dur_us, "grid_x": g[0], "grid_y": g[1], "grid_z": g[2],
            "block_x": b[0], "block_y": b[1], "block_z": b[2], "blocks": e.blocks,
            "blocks_per_sm": e.blocks_per_sm,
        })
    return pa.Table.from_pylist(recs, schema=KERNELS_SCHEMA)


def events_from_table(df: pd.DataFrame) -> list[KernelEvent]:
    """KernelEvents back from kernels-table rows (of one call), in kernel_index order."""

    def triple(r, p):
        vals = [r[f"{p}_{a}"] for a in "xyz"]
        return None if any(v is None or pd.isna(v) for v in vals) else tuple(int(v) for v in vals)

    out = []
    for _, r in df.sort_values("kernel_index").iterrows():
        bps = r["blocks_per_sm"]
        out.append(KernelEvent(name=r["name"], dur_us=float(r["dur_us"]), grid=triple(r, "grid"),
                               block=triple(r, "block"), blocks_per_sm=None if pd.isna(bps) else float(bps)))
    return out
