"""Precision: how far a point's medians spread across fresh-process runs, and the verdict."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

GOAL_SPREAD = 0.01  # issue 4: medians of 5 fresh runs within 1% ...
STRETCH_SPREAD = 0.005  # ... stretch 0.5%


def spread_of_medians(medians: Sequence[float]) -> dict:
    """Range and coefficient of variation of one point's medians across runs (NaN below 2 runs)."""
    m = [float(x) for x in medians if x is not None and not math.isnan(float(x))]
    n = len(m)
    if n < 2:
        return {"runs_ok": n, "median_of_medians_ms": m[0] if m else math.nan, "min_ms": m[0] if m else math.nan,
                "max_ms": m[0] if m else math.nan, "range_rel": math.nan, "cv": math.nan}
    s = pd.Series(m)
    mid = float(s.median())
    return {"runs_ok": n, "median_of_medians_ms": mid, "min_ms": float(s.min()), "max_ms": float(s.max()),
            "range_rel": (float(s.max()) - float(s.min())) / mid, "cv": float(s.std(ddof=1)) / float(s.mean())}


def verdict(range_rel: float) -> str:
    """Judged on the range (max - min) / median, the stricter of the two spreads."""
    if math.isnan(range_rel):
        return "n/a"
    if range_rel <= STRETCH_SPREAD:
        return "stretch"
    return "goal" if range_rel <= GOAL_SPREAD else "MISSED"


def precision_table(medians: pd.DataFrame, profile: str = "suite") -> pd.DataFrame:
    """Per (timer, point): how far its medians across fresh runs spread, and the verdict."""
    df = medians[medians["profile"] == profile]
    out = []
    for (timer, point), g in df.groupby(["timer_requested", "point"], sort=False):
        ok = g[g["status"] == "ok"]
        row = {"timer": timer, "point": point, "runs": len(g), **spread_of_medians(ok["median_ms"].tolist())}
        used = sorted(set(ok["timer"].dropna()))
        row["timer_used"] = ",".join(used) if used else ""
        row["verdict"] = verdict(row["range_rel"])
        out.append(row)
    return pd.DataFrame(out)
