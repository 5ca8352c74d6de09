"""`show`'s view: stored rows as a speedup table, with everything a reader needs to trust it.

`show_rows(results, ...)` is the library entry point (`qlabench show` prints what it returns): the rows
through the evidence layer (the current evidence when none are given), the newest per point and GPU model (a
replicated run's replicates folded into one row: their median time, their spread as noise), believed, narrowed
by a RowFilter; the speedup table against one baseline (and where that baseline came from); per run its date,
GPU, host, git sha, versions and regime (evidence.run_lines); and the notes the evidence layer attached.
Rows of two GPU models never share a table row.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from qlabench.analyze.evidence.current import rows_or_current
from qlabench.analyze.evidence.accuracy import evidence_of
from qlabench.analyze.evidence import (believed, devices_of, evidence_notes, fold_replicates, newest_per_point,
                                       read_evidence, run_lines)
from qlabench.analyze.kit.speedups import baseline_note, pick_baseline, speedup_table, suite_baselines
from qlabench.analyze.show.row_filter import RowFilter
from qlabench.core.errors import ConfigError


@dataclass
class Shown:
    table: pd.DataFrame  # analyze/kit/speedups.py: speedup_table
    baseline: str
    rows: pd.DataFrame  # the rows the table was made from (filtered, believed)
    sources: list[Path]  # the paths read (the catalog's current ones where none were given)
    numerics: pd.DataFrame | None = None  # the --numerics rows, read as error evidence
    baseline_note: str = ""  # where the baseline came from
    runs: list[str] = field(default_factory=list)  # evidence.run_lines: per run, what its numbers stand on
    notes: list[str] = field(default_factory=list)  # what the evidence layer said about the files read
    devices: list[str] = field(default_factory=list)  # the GPU models of the rows, most rows first
    checks: list = field(default_factory=list)  # evidence.accuracy.evidence_of(rows, numerics), one per row
    time: str = "timer"  # which of a row's times the table prints (TIMES)
    launch_line: str | None = None  # how many rows are launch-bound (core/launch.py), where any recorded it

    @property
    def device_note(self) -> str | None:
        if len(self.devices) < 2:
            return None
        return (f"devices: these rows hold {len(self.devices)} GPU models ({', '.join(self.devices)}): each has its "
                "own table rows (the device column), and no speedup divides times of two models")


# The times a row records (core/launch.py): the timer's own, the device's (a CUDA graph), the eager launch's, the
# launching thread's; each with the noise column that goes with it.
TIMES = {"timer": ("median_ms", "rel_noise"), "device": ("device_ms", "rel_noise"),
         "eager": ("eager_ms", "eager_rel_noise"), "host": ("host_ms", "eager_rel_noise")}


def _in_time(df: pd.DataFrame, time: str) -> pd.DataFrame:
    """The rows with `time`'s column as the time the table prints; rows that did not record it are left out."""
    if time not in TIMES:
        raise ConfigError(f"--time must be one of {', '.join(TIMES)}, got {time!r}")
    col, noise = TIMES[time]
    if col == "median_ms":
        return df
    timed = df[df[col].notna() | (df["status"] != "ok")] if col in df else df.iloc[0:0]
    if timed.empty:
        raise ConfigError(f"no row here recorded a {time} time ({col}; rows before schema 7 did not)")
    return timed.assign(median_ms=timed[col], rel_noise=timed[noise] if noise in timed else None,
                        samples_ms=[() for _ in range(len(timed))])


def _launch_line(df: pd.DataFrame) -> str | None:
    if "launch_bound" not in df or df["launch_bound"].isna().all():
        return None
    bound = df["launch_bound"].dropna().astype(bool)
    names = sorted(set(df.loc[bound[bound].index, "backend"]))
    return (f"launch-bound: {int(bound.sum())} of {len(bound)} rows that recorded both times (eager beyond device by "
            f"more than noise{': ' + ', '.join(names) if names else ''}); --time eager prints what they cost launched "
            "from Python")


def show_rows(results: Iterable[str | os.PathLike] = (), *, baseline: str | None = None, mode: str | None = None,
              all_runs: bool = False, where: RowFilter | None = None,
              numerics: Iterable[str | os.PathLike] = (), time: str = "timer") -> Shown:
    """The speedup table of stored rows; ConfigError where a filter or the baseline leaves nothing to show. `time`:
    which of a row's times it prints (TIMES; the timer's own by default)."""
    df, paths, _ = rows_or_current(results)
    notes = evidence_notes(df)
    df = fold_replicates(df) if all_runs else newest_per_point(df)  # a run's replicates: one row, their median
    df = _in_time(believed(df), time)
    if mode:
        df = df[df["mode"] == mode]
        if df.empty:
            raise ConfigError(f"no rows of mode {mode!r} in these results")
    named = suite_baselines(paths)
    base = pick_baseline(df, baseline, named)
    df = (where or RowFilter()).with_keep((base,)).apply(df)
    if base not in set(df["backend"]):
        raise ConfigError(f"baseline {base!r} has no rows here (backends: {', '.join(sorted(set(df['backend'])))})")
    numerics = list(numerics or ())
    num_rows = read_evidence(numerics, all_runs=True).rows if numerics else None
    checks = evidence_of(df, num_rows)  # read once: the table's marks and the lines under it
    return Shown(speedup_table(df, base, num_rows, checks), base, df, list(paths), num_rows,
                 baseline_note(df, base, baseline, named), run_lines(df), notes, devices_of(df), checks, time,
                 _launch_line(df))
