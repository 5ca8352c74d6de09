"""Every serving variant's time against one baseline backend's, batch by batch: the table behind "should an
engine switch its decode to FlashInfer's?".

A pair is one variant's usable row (ok, timed, within the limit: analyze/serving/winners.py) and the baseline's
at the same group (model, TP, T, state dtype) and batch, from the same run, so no ratio divides times of two
runs or two devices; pairs of two runs are counted, never divided. The ratio is the variant's time over the
baseline's (above 1: the baseline is faster). Batches whose states the run said stayed in L2 are apart from
those read from HBM: an L2-resident time says nothing of the step an engine runs at scale. Each variant's
pool check is carried along: `err_pool`, the largest change any of its rows made to a slot outside its batch
(0: every untouched slot bit for bit).
"""

from __future__ import annotations

import math

import pandas as pd


def _span(values: list[float], batches: list[int]) -> str:
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    ratio = f"{lo:.2f}x" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f}-{hi:.2f}x"
    b = sorted(set(batches))
    where = f"batch {b[0]}" if len(b) == 1 else f"batch {b[0]}-{b[-1]}"
    return f"{ratio} ({where})"


def against_baseline(rows: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """One row per (variant, group) of `rows` (serving_frame's) other than `baseline`'s: the time ratio over the
    baseline's from HBM and in L2 (ranges, with their batches), the pairs of two runs left out, the usable rows
    and their largest err_pool. Empty where the baseline has no usable row."""
    use = rows[rows["usable"]]
    base = use[use["backend"] == baseline]
    if base.empty:
        return pd.DataFrame()
    fastest = base.sort_values("time_ms", kind="stable").groupby(["group", "batch"], sort=False).first()
    out = []
    for (variant, group), g in use[use["backend"] != baseline].groupby(["variant", "group"], sort=True):
        hbm, l2, other_run = ([], []), ([], []), 0
        for r in g.itertuples():
            if (group, r.batch) not in fastest.index:
                continue
            b = fastest.loc[(group, r.batch)]
            if b["run_id"] != r.run_id:
                other_run += 1
                continue
            side = l2 if (r.l2_resident == True or b["l2_resident"] == True) else hbm  # noqa: E712 (None, NaN: no)
            side[0].append(r.time_ms / b["time_ms"])
            side[1].append(int(r.batch))
        pool = pd.to_numeric(g["err_pool"], errors="coerce") if "err_pool" in g else pd.Series(dtype=float)
        out.append({"variant": variant, "group": group, "from_hbm": _span(*hbm), "in_l2": _span(*l2),
                    "pairs_of_two_runs": other_run, "rows": len(g),
                    "err_pool_max": float(pool.max()) if pool.notna().any() else math.nan})
    return pd.DataFrame(out)
