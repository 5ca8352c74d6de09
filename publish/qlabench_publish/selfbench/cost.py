"""Cost: seconds per point, compile excluded, per run, per setting, per point and per phase."""

from __future__ import annotations

import json
import math

import pandas as pd


def run_cost_table(medians: pd.DataFrame) -> pd.DataFrame:
    """Per run: wall time, compile time, and seconds per point with compile excluded.

    A point's compile_s is set only for the first point of its compile group in a process (JIT,
    autotune and the first calls); everything else in the sweep (start-up, checks, sampling,
    writing) counts as cost.
    """
    out = []
    for (profile, timer, i), g in medians.groupby(["profile", "timer_requested", "run_index"], sort=False):
        wall = float(g["run_wall_s"].iloc[0])
        comp = float(g["compile_s"].fillna(0).sum())
        n = len(g)
        out.append({"profile": profile, "timer": timer, "run": int(i), "points": n, "wall_s": wall,
                    "compile_s": comp, "s_per_point": (wall - comp) / n if n else math.nan,
                    "sampling_s_per_point": float(g["sampling_s"].mean())})
    return pd.DataFrame(out)


def cost_table(medians: pd.DataFrame) -> pd.DataFrame:
    """Per (profile, timer): mean over runs of seconds per point (compile excluded) and of sampling."""
    runs = run_cost_table(medians)
    if runs.empty:
        return runs
    g = runs.groupby(["profile", "timer"], sort=False)
    return g.agg(runs=("run", "count"), points=("points", "max"), s_per_point=("s_per_point", "mean"),
                 sampling_s_per_point=("sampling_s_per_point", "mean")).reset_index()


def point_cost_table(medians: pd.DataFrame) -> pd.DataFrame:
    """Per point: median sampling seconds under each (profile, timer), side by side."""
    if medians.empty:
        return pd.DataFrame()
    df = medians.assign(setting=medians["profile"] + " " + medians["timer_requested"])
    t = df.pivot_table(index="point", columns="setting", values="sampling_s", aggfunc="median", sort=False)
    return t.reset_index()


def phase_cost_table(medians: pd.DataFrame) -> pd.DataFrame:
    """Per (profile, timer): mean seconds per point in each phase of run_point (qlabench/run/point.py),
    sampling included.

    The phases add up to the time spent inside the point; what the run's wall time adds beyond them is
    worker start-up and writing rows.
    """
    if medians.empty or "phases_s" not in medians:
        return pd.DataFrame()
    rows = []
    for (profile, timer), g in medians.groupby(["profile", "timer_requested"], sort=False):
        ph = pd.DataFrame([json.loads(x) if isinstance(x, str) else {} for x in g["phases_s"]]).fillna(0.0)
        if ph.empty:
            continue
        ph["sampling"] = g["sampling_s"].fillna(0.0).to_numpy()
        wall = g.groupby("run_index")["run_wall_s"].first().sum()
        mean = ph.mean()
        rows.append({"profile": profile, "timer": timer, **{k: float(v) for k, v in mean.items()},
                     "in points": float(mean.sum()), "run wall / point": float(wall / len(g))})
    return pd.DataFrame(rows)
