"""Baselines: stored runs that gates compare against, at results/baselines/<gpu>/<suite>.parquet.

`<gpu>` is the device name slugified ("NVIDIA H200" -> "nvidia-h200"), so each machine model keeps
its own baseline and a gate on an H100 runner never finds an H200's times. Saving merges: rows of
the new run replace the baseline's rows for the same points (backend + every workload axis), and
points the run did not measure keep their old rows. A run with `--replicates K` keeps all K rows of
each point: the gate learns each point's run-to-run noise from them (docs/GATING.md).

A point whose baseline has an ok row is never replaced by rows none of which is ok (a run whose rows
are all `error`) unless `force`: the gate would then have nothing to time it against, and a broken
run would quietly become the reference. The read-modify-write holds the file's lock (store/locks.py),
so two saves at once both land.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path

import pandas as pd
import pyarrow as pa

from qlabench.core.errors import StoreError
from qlabench.store.keys import workload_keys
from qlabench.core.result import ResultRow
from qlabench.store.schema import COLUMNS, arrow_schema
from qlabench.core.names import name_problem
from qlabench.store.files import read_results, under_root, write_rows
from qlabench.store.locks import DEFAULT_WAIT_S, locked
from qlabench.store.replicates import latest_run_per_point

DEFAULT_ROOT = Path("results") / "baselines"


def slugify(name: str) -> str:
    """'NVIDIA H200' -> 'nvidia-h200'; 'Intel(R) Xeon(R) CPU @ 2.20GHz' -> 'intel-r-xeon-r-cpu-2-20ghz'."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return slug or "unknown-device"


def baseline_path(root: str | os.PathLike, device: str, suite: str) -> Path:
    """<root>/<gpu>/<suite>.parquet; StoreError for a suite name that is no safe slug or leaves `root`."""
    if problem := name_problem(suite):
        raise StoreError(f"suite name: {problem}")
    return under_root(root, slugify(device), f"{suite}.parquet")


def save_baseline(results: Iterable[str | os.PathLike], suite: str, root: str | os.PathLike = DEFAULT_ROOT,
                  force: bool = False, lock_wait_s: float = DEFAULT_WAIT_S,
                  on_wait: Callable[[str], None] | None = None) -> tuple[Path, int, int]:
    """Merge the rows of `suite` in `results` into its baseline file; (path, rows written, rows replaced).

    StoreError, writing nothing, when a point with an ok baseline row would keep no ok row (unless `force`),
    or when another process holds the file's lock for longer than `lock_wait_s` (`on_wait` is told who)."""
    results = list(results)
    baseline_path(root, "any", suite)  # a suite name that would leave `root` is refused before reading
    df = read_results(results)
    df = df[df["suite"] == suite]
    if df.empty:
        raise StoreError(f"no rows of suite {suite!r} in {', '.join(map(str, results))}")
    devices = sorted(set(df["device"].dropna()))
    if len(devices) != 1:
        raise StoreError(f"suite {suite!r} rows come from {len(devices)} devices ({', '.join(devices) or 'none'}); "
                         "a baseline holds one device: pass the results of one machine")
    path = baseline_path(root, devices[0], suite)
    new = latest_run_per_point(df)  # every replicate: the gate's noise floor is learned from them
    with locked(path, lock_wait_s, on_wait):
        replaced = 0
        if path.exists():
            old = latest_run_per_point(read_results([path]))
            new_keys = set(workload_keys(new, with_backend=True))
            old_keys = workload_keys(old, with_backend=True)
            if not force:
                _refuse_losing_ok_rows(old, old_keys, new, path)
            replaced = int(old_keys.isin(new_keys).sum())
            new = pd.concat([old[~old_keys.isin(new_keys)], new], ignore_index=True)
        rows = [ResultRow(**r) for r in _records(new)]
        write_rows(path, rows, metadata={"baseline_of": suite})
    return path, len(rows), replaced


def _refuse_losing_ok_rows(old: pd.DataFrame, old_keys: pd.Series, new: pd.DataFrame, path: Path) -> None:
    """StoreError when a point that is ok in the baseline has no ok row among the new ones."""
    new_keys = workload_keys(new, with_backend=True)
    ok_old = set(old_keys[(old["status"] == "ok").to_numpy()])
    ok_new = set(new_keys[(new["status"] == "ok").to_numpy()])
    lost = [i for i, k in enumerate(new_keys) if k in ok_old and k not in ok_new]
    if not lost:
        return
    n = len(set(new_keys.iloc[lost]))
    r = new.iloc[lost[0]]
    example = f"{r['backend']} {r['mode']} seqlens={list(r['seqlens'])}: {r['status']}" + \
        (f" ({r['reason']})" if isinstance(r.get("reason"), str) and r.get("reason") else "")
    raise StoreError(f"{path}: {n} point(s) with an ok baseline row would be replaced by rows none of which is ok "
                     f"(e.g. {example}); nothing was written. Save a run that measured them, or pass --force "
                     "to replace them anyway")


def _records(df) -> list[dict]:
    # Through arrow so every value gets its schema type back (pandas made nullable ints floats).
    table = pa.Table.from_pandas(df[list(COLUMNS)], schema=arrow_schema(), preserve_index=False)
    return table.to_pylist()
