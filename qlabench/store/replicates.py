"""Replicates: the rows of a point that together are one measurement of it.

A run with `--replicates K` holds K rows per point (column `replicate`, 0..K-1), each from fresh worker
processes. Readers that want "the point's measurement" must keep all of them, not the newest row:
`latest_run_per_point` keeps every row of the newest run of each point (for a run without replicates
that is the one row `files.latest_per_point` keeps).
"""

from __future__ import annotations

import pandas as pd


def latest_run_per_point(df: pd.DataFrame, by: tuple[str, ...] = ()) -> pd.DataFrame:
    """Every row of each point's newest run (by its newest row's timestamp): all its replicates. `by`: columns
    that split a point further (the evidence layer's `device`: each GPU model's newest run)."""
    if df.empty:
        return df
    from qlabench.store.keys import KEY_COLUMNS, key_series

    tmp = df.assign(_k=key_series(df, (*KEY_COLUMNS, *by))).reset_index(drop=True)
    newest = tmp.sort_values("timestamp", kind="stable").drop_duplicates("_k", keep="last")
    keep = set(zip(newest["_k"], newest["run_id"]))
    mask = [(k, r) in keep for k, r in zip(tmp["_k"], tmp["run_id"])]
    out = tmp[mask]
    # One row per replicate: a replicate recorded twice under one run id (copies, re-writes) keeps its newest.
    rep = out["replicate"].fillna(-1) if "replicate" in out.columns else pd.Series(-1, index=out.index)
    out = out.assign(_r=rep).sort_values("timestamp", kind="stable").drop_duplicates(["_k", "_r"], keep="last")
    return out.drop(columns=["_k", "_r"]).reset_index(drop=True)

