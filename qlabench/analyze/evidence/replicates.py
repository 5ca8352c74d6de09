"""A replicated run's point as one row: what every view that prints one time per point reads.

`run sweep --replicates K` measures each point K times, each in fresh worker processes, and stores K rows of one
run (`replicate` 0..K-1). A view that keeps one row per point (show, plot, the serving and budget pages) would
otherwise print whichever replicate happened to be written last, while `advise` ranks the median of them all
(analyze/answer/ranking.py): two views of one run would disagree. `fold_replicates` makes the K rows one:

- a failed replicate is the point's row (a time next to a failure is not believed, as `advise` holds it), and
  so is one whose stored time is not the median of its own samples (stored_time.py, the rule belief.py holds
  every row to), checked here because the folded row holds no samples of its own to check;
- otherwise each time column is the median over the replicates, and each noise column the larger of the
  replicates' median noise and the spread between their times ((max - min) / median): two processes that read
  5% apart are no 0.3% measurement;
- rates derived from the time (TFLOP/s, GB/s and their fractions of peak) follow the folded time, flags hold if
  any replicate raised them (`noise_target_met` only if all met it), `n_samples` is their sum and `samples_ms`
  is empty: a median of medians is no sample's median;
- everything else is the newest replicate's; `replicate` is null and `replicates` says how many were folded.

Rows of runs without replicates pass through unchanged (and `replicates` is not added). `newest_per_point`, the
one "newest measurement per point" rule of the views, folds the newest run's replicates.
"""

from __future__ import annotations

import statistics

import pandas as pd

from qlabench.analyze.evidence.problem import DEVICE, device_series
from qlabench.analyze.evidence.records import records
from qlabench.analyze.evidence.stored_time import time_problem
from qlabench.store.keys import KEY_COLUMNS, key_series, newest_rows
from qlabench.store.replicates import latest_run_per_point

REPLICATES = "replicates"  # the view-side column: how many replicate rows a folded row stands for

# Each time column with the noise column that carries the spread between replicates (None: none does).
TIMES = {"median_ms": "rel_noise", "eager_ms": "eager_rel_noise", "device_ms": None, "host_ms": None,
         "mean_ms": None, "stdev_ms": None, "min_ms": None, "p20_ms": None, "p80_ms": None, "iqr_ms": None}
RATES = ("tflops", "gbps", "frac_peak_flops", "frac_peak_bw", "hbm_frac")  # inverse to median_ms
ANY = ("below_min_samples", "launch_bound", "calls_sensitive")
ALL = ("noise_target_met",)


def replicated(df: pd.DataFrame) -> bool:
    """Whether any row of `df` is one replicate of several (`replicate` recorded)."""
    return "replicate" in df.columns and bool(df["replicate"].notna().any())


def median_and_noise(times: list[float], noises: list[float]) -> tuple[float, float | None]:
    """The median of one point's `times` (never empty: replicates, or current runs) and its noise: the larger of
    the median of their own `noises` and the spread between them ((max - min) / median); None when neither is
    known. What `advise` ranks (analyze/answer/ranking.py) and what a folded row holds."""
    mid = statistics.median(times)
    spread = (max(times) - min(times)) / mid if len(times) > 1 and mid > 0 else None
    known = [x for x in (statistics.median(noises) if noises else None, spread) if x is not None]
    return mid, (max(known) if known else None)


def newest_per_point(df: pd.DataFrame) -> pd.DataFrame:
    """The newest measurement of each point on each GPU model (a newer row of another model never replaces a
    row): its newest row, or where the newest run measured it as several replicates, their one folded row."""
    if df.empty:
        return df
    by = (DEVICE,) if DEVICE in df.columns else ()
    newest = newest_rows(df, (*KEY_COLUMNS, *by))
    if "run_id" not in df.columns or not replicated(newest):
        return newest
    return fold_replicates(latest_run_per_point(df, by))


def fold_replicates(df: pd.DataFrame) -> pd.DataFrame:
    """`df` with the replicates of each run's point (and GPU model) folded into one row (the module docstring)."""
    if df.empty or not replicated(df) or "run_id" not in df.columns:  # without run ids no two rows are one run's
        return df
    keys = key_series(df, KEY_COLUMNS) + "|" + device_series(df).astype(str) + "|" + df["run_id"].astype(str)
    df = df.reset_index(drop=True)
    groups: dict[str, list[int]] = {}
    for i, (k, rep) in enumerate(zip(keys, df["replicate"].isna())):
        groups.setdefault(f"#{i}" if rep else k, []).append(i)
    if all(len(g) == 1 for g in groups.values()):
        return df
    # Plain records of the columns the fold reads, then one take of the kept rows and a column at a time:
    # a pandas row per replicate cost ~10 ms each.
    reads = [c for c in ("status", "reason", "timestamp", "samples_ms", "n_samples", *TIMES, *TIMES.values(),
                         *RATES, *ANY, *ALL) if c in df.columns]
    recs = records(df, list(dict.fromkeys(reads)))
    kept, changes = [], []
    for rows in groups.values():
        at, change = (rows[0], {}) if len(rows) == 1 else _fold([(i, recs[i]) for i in rows])
        kept.append(at)
        changes.append(change)
    out = df.take(kept)
    for col in {c for change in changes for c in change} - {REPLICATES}:  # every other one is a column read
        out[col] = _like([change.get(col, v) for change, v in zip(changes, out[col])], out[col])
    out[REPLICATES] = pd.array([change.get(REPLICATES) for change in changes], dtype="Int64")
    return out.sort_index(kind="stable").reset_index(drop=True)


def _like(values: list, column: pd.Series) -> pd.Series | list:
    """`values` in `column`'s type and index where they fit it (an object column, or a null in a bool one, stays
    a list of objects)."""
    if column.dtype == object:
        return values
    try:
        return pd.Series(values, dtype=column.dtype, index=column.index)
    except (TypeError, ValueError):
        return values


def _fold(rows: list[tuple[int, dict]]) -> tuple[int, dict]:
    """Which row stands for the replicates `rows` (position, record) of one run's point, and what changes in it."""
    order = sorted(rows, key=lambda r: str(r[1].get("timestamp")))
    change: dict = {REPLICATES: len(rows), "replicate": None}
    bad = [(i, r) for i, r in order if r["status"] != "ok"]
    if not bad:
        why = [(i, time_problem(r)) for i, r in order]
        bad = [(i, {"reason": w}) for i, w in why if w]
        if bad:
            change.update(status="error", reason=bad[-1][1]["reason"])
    if bad:
        return bad[-1][0], change
    recs = [r for _, r in order]
    for col, noise in TIMES.items():
        values = [float(r[col]) for r in recs if _known(r.get(col))]
        if not values:
            continue
        noises = [float(r[noise]) for r in recs if _known(r.get(noise))] if noise in recs[0] else []
        change[col], noisy = median_and_noise(values, noises)
        if noise is not None and noise in recs[0]:
            change[noise] = noisy
    newest = recs[-1]
    was, now = newest.get("median_ms"), change.get("median_ms")
    for col in RATES:
        if _known(newest.get(col)) and _known(was) and was and now:
            change[col] = float(newest[col]) * float(was) / now
    for col, rule in [(c, any) for c in ANY] + [(c, all) for c in ALL]:
        flags = [bool(r[col]) for r in recs if _known(r.get(col))]
        if flags:
            change[col] = rule(flags)
    if "samples_ms" in newest:
        change["samples_ms"] = ()
    counts = [int(r["n_samples"]) for r in recs if _known(r.get("n_samples"))]
    if counts:
        change["n_samples"] = sum(counts)
    return order[-1][0], change


def _known(v) -> bool:
    return v is not None and not (isinstance(v, float) and v != v)


__all__ = ["REPLICATES", "fold_replicates", "median_and_noise", "newest_per_point", "replicated"]
