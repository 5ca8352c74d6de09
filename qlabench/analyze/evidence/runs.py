"""Runs read from more than one file: one run id in one results folder is one measurement of each point
(and replicate), so two files of that folder holding the same run id must agree on every row they share.
(Run ids repeat across folders: two gate experiments may each name their runs `ab-a`; those are two runs.)

A copy of a run's file beside the original (identical rows) is counted once, and a view says so. Two
files with one run id and different rows of a point contradict each other: `show` would take one of them
and `advise` average them into a noise figure, so the layer refuses them (EvidenceError) and names the
files and a conflicting point.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from qlabench.analyze.evidence.problem import point_keys
from qlabench.core.errors import EvidenceError
from qlabench.core.identity import backend_label, layout_label
from qlabench.store.files import PART_PREFIX
from qlabench.store.keys import plain_value

# What two copies of one row of one run must agree on (the measurement and its verdict).
MEASURED = ("status", "median_ms")


def run_home(source_file: str) -> str:
    """The results folder a file belongs to: its folder, or for a part file of a run in progress
    (<suite>/<run_id>/part-*.parquet) the suite folder above it."""
    p = Path(source_file)
    return str(p.parent.parent if p.name.startswith(PART_PREFIX) else p.parent)


def _one_run_key(df: pd.DataFrame) -> pd.Series:
    rep = df["replicate"].astype("Float64").fillna(-1).astype(str) if "replicate" in df else "-1"
    return df["_run"] + "|" + point_keys(df) + "|" + rep


def check_runs(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """`df` (read with a `source_file` column) with each row of a run counted once, and a note per run read
    from several files with identical rows; EvidenceError for a run whose files disagree on a row."""
    if df.empty or "source_file" not in df:
        return df, []
    homes = {f: run_home(f) for f in set(df["source_file"])}
    run = df["source_file"].map(homes) + "|" + df["run_id"].astype(str)
    n_files = df["source_file"].groupby(run).transform("nunique")
    multi = df[n_files > 1].assign(_run=run[n_files > 1])
    if multi.empty:
        return df, []
    key = _one_run_key(multi)
    measured = [c for c in MEASURED if c in multi]
    copies = multi.assign(_k=key)
    spread = copies.groupby("_k")[measured].nunique(dropna=False).max(axis=1)
    files = copies.groupby("_k")["source_file"].nunique()
    clash = spread[(spread > 1) & (files > 1)]
    if len(clash):
        _refuse(copies[copies["_k"].isin(clash.index)], len(clash))
    notes = []
    dup = copies[copies["_k"].isin(files[files > 1].index)]
    for run, grp in dup.groupby("run_id", sort=True):
        names = sorted(set(grp["source_file"]))
        notes.append(f"run {run} is in {len(names)} files with identical rows ({', '.join(names[:3])}"
                     f"{', ...' if len(names) > 3 else ''}): each row counted once")
    if not notes:
        return df, []
    all_keys = pd.Series(None, index=df.index, dtype=object)
    all_keys[multi.index] = key
    first = ~(all_keys.notna() & all_keys.duplicated())
    return df[first], notes


def _refuse(rows: pd.DataFrame, n: int) -> None:
    r = rows.sort_values(["_k", "source_file"]).iloc[0]
    same = rows[rows["_k"] == r["_k"]]
    what = "; ".join(f"{f}: {s} {plain_value(m)} ms" for f, s, m in
                     zip(same["source_file"], same["status"], same["median_ms"]))
    point = (f"{backend_label(r['backend'], plain_value(r.get('cp_world_size')), plain_value(r.get('cp_mode')))} "
             f"{r['mode']} h{r['h_qk']}/{r['h_v']} {layout_label(r['layout'], r['batch'], plain_value(r['seqlens']))}")
    raise EvidenceError(f"run {r['run_id']} is in {same['source_file'].nunique()} files that disagree on {n} "
                        f"row(s), e.g. {point} ({what}); one run measures a point once: read one of the files, "
                        "or give the copy its own run id")
