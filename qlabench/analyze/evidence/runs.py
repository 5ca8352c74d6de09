"""Runs read from more than one file: one run id is one measurement of each point (and replicate), so two
files holding the same run id must agree on every row they share.

- Identical rows (a copy of a run's file): each counted once, and a view says so.
- Different rows in two files of one results folder: the files contradict each other. `show` would take
  one and `advise` average them into a noise figure, so the layer refuses them (EvidenceError), naming
  the files and a conflicting point.
- Different rows in two folders: two runs that happen to share a name (two gate experiments may each
  call their runs `ab-a`): their run ids are told apart by folder ('ab-a@results/x'), and a view says so.
- One file holding a row of a run twice at one timestamp (qlabench writes each point of a run once per file and
  round): identical copies count once, and a view says so; copies that differ are refused (EvidenceError) as
  files of one folder that disagree are, naming the file: `show` would take one and `advise` average them.
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
    return df["run_id"].astype(str) + "|" + point_keys(df) + "|" + rep


def check_runs(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """`df` (read with a `source_file` column) with each row of a run counted once and run ids that name two
    runs told apart, and a note for each; EvidenceError for one folder's files that disagree on a row."""
    if df.empty or "source_file" not in df:
        return df, []
    df, notes = _within_files(df)
    n_files = df.groupby("run_id")["source_file"].transform("nunique")
    if not (n_files > 1).any():
        return df, notes
    homes = {f: run_home(f) for f in set(df["source_file"])}
    multi = df[n_files > 1]
    copies = multi.assign(_k=_one_run_key(multi), _home=multi["source_file"].map(homes))
    measured = [c for c in MEASURED if c in copies]
    by_key = copies.groupby("_k")
    clash = by_key[measured].nunique(dropna=False).max(axis=1) > 1
    clash &= by_key["source_file"].nunique() > 1
    if clash.any():
        bad = copies[copies["_k"].isin(clash[clash].index)]
        df, bad, again = _within_folders(df, bad, measured)
        notes += again
        # What still differs spans folders: two runs that share a name.
        spans = bad.groupby("_k")["_home"].transform("nunique") > 1
        runs = sorted(set(bad.loc[spans, "run_id"]))
        df = df.assign(run_id=[f"{r}@{homes[f]}" if r in runs else r for r, f in zip(df["run_id"], df["source_file"])])
        notes += [f"run id {r} names {bad.loc[bad['run_id'] == r, '_home'].nunique()} different runs "
                  f"({', '.join(sorted(set(bad.loc[bad['run_id'] == r, '_home'])))}): told apart by folder"
                  for r in runs]
        copies = copies[~copies["run_id"].isin(runs) & ~copies["_k"].isin(bad["_k"])]
    dup = copies[copies.groupby("_k")["source_file"].transform("nunique") > 1]
    for run, grp in dup.groupby("run_id", sort=True):
        names = sorted(set(grp["source_file"]))
        notes.append(f"run {run} is in {len(names)} files with identical rows ({', '.join(names[:3])}"
                     f"{', ...' if len(names) > 3 else ''}): each row counted once")
    if not dup.empty:
        df = df.drop(index=dup.index[dup["_k"].duplicated(keep="first")])
    return df, notes


def _within_files(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """A row of one run (point, replicate and timestamp) twice in one file: identical copies count once; copies
    that differ are refused. Rows of one point at different timestamps are different measurements: the rounds of
    a run written before rows recorded their replicate (schema 3 and older, an `ab` of several rounds) share a
    run id and a null replicate, and each is a round of its own."""
    stamp = df["timestamp"].astype(str) if "timestamp" in df else ""
    k = _one_run_key(df) + "|" + df["source_file"].astype(str) + "|" + stamp
    twice = k.duplicated(keep=False)
    if not twice.any():
        return df, []
    measured = [c for c in MEASURED if c in df]
    dup = df[twice].assign(_k=k[twice])
    differ = dup.groupby("_k")[measured].nunique(dropna=False).max(axis=1) > 1
    if differ.any():
        _refuse(dup[dup["_k"] == differ[differ].index[0]], int(differ.sum()), within_file=True)
    notes = [f"{f} holds {grp['_k'].nunique()} row(s) of run {run} twice, identical: each counted once"
             for (f, run), grp in dup.groupby(["source_file", "run_id"], sort=True)]
    return df.drop(index=dup.index[dup["_k"].duplicated(keep="first")]), notes


def _within_folders(df: pd.DataFrame, bad: pd.DataFrame, measured: list[str]
                    ) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """Rows of one run and point that differ between files of one folder: at one timestamp they contradict
    each other (EvidenceError); at several, the point was measured again under the same run id, and the
    newest row counts (as `show` keeps the newest row per point, so `advise` never averages the two)."""
    n_files = bad.groupby(["_k", "_home"])["source_file"].transform("nunique")
    same = bad[n_files > 1]
    if same.empty:
        return df, bad, []
    at_once = same.groupby(["_k", "_home", "timestamp"])
    contra = (at_once[measured].nunique(dropna=False).max(axis=1) > 1) & (at_once["source_file"].nunique() > 1)
    if contra.any():
        k, home, stamp = contra[contra].index[0]
        _refuse(same[(same["_k"] == k) & (same["_home"] == home) & (same["timestamp"] == stamp)], int(contra.sum()))
    older = same.sort_values("timestamp", kind="stable").duplicated(["_k", "_home"], keep="last")
    gone = older[older].index
    notes = [f"run {run} measured {grp['_k'].nunique()} point(s) again in another file of {home} "
             f"({', '.join(sorted(set(grp['source_file'])))}): the newest row of each counts"
             for (run, home), grp in same.groupby(["run_id", "_home"], sort=True)]
    return df.drop(index=gone), bad.drop(index=gone), notes


def _refuse(rows: pd.DataFrame, n: int, within_file: bool = False) -> None:
    r = rows.sort_values(["_k", "source_file"]).iloc[0]
    same = rows[rows["_k"] == r["_k"]]
    what = "; ".join(f"{f}: {s} {plain_value(m)} ms" for f, s, m in
                     zip(same["source_file"], same["status"], same["median_ms"]))
    point = (f"{backend_label(r['backend'], plain_value(r.get('cp_world_size')), plain_value(r.get('cp_mode')))} "
             f"{r['mode']} h{r['h_qk']}/{r['h_v']} {layout_label(r['layout'], r['batch'], plain_value(r['seqlens']))}")
    if within_file:
        raise EvidenceError(f"{r['source_file']} holds {n} row(s) of run {r['run_id']} twice with different "
                            f"measurements, e.g. {point} ({what}); one run measures a point once: the file was "
                            "edited or mis-written")
    raise EvidenceError(f"run {r['run_id']} is in {same['source_file'].nunique()} files that disagree on {n} "
                        f"row(s), e.g. {point} ({what}); one run measures a point once: read one of the files, "
                        "or give the copy its own run id")
