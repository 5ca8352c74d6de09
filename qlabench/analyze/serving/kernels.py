"""Where a serving step's time goes: the kernels of each variant's largest step, their share and grid.

A step's fraction of the bandwidth limit counts the bytes the step must move; when it is far below the
limit, the kernels say why. A backend without a slot-indexed pool gathers the batch's states before its
kernel and scatters them back after it (three launches, twice the state traffic again), a kernel whose grid
leaves SMs idle cannot stream at the card's rate: both show here, from the row's traced call
(`kernels`, `kernel_dur_us`, `kernel_grid`).
"""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.evidence.kernels import short_name as dsl_short_name
from qlabench.analyze.serving.frame import hbm_text
from qlabench.core.kernel_event import DSL_PREFIX

NAME_CHARS = 70  # C++ kernel names run to kilobytes; the head names the kernel


def short_name(name: str) -> str:
    if str(name).startswith(DSL_PREFIX):  # CuTe DSL: no template head to keep, see compare's short_name
        return dsl_short_name(name)
    name = str(name).removeprefix("void ")
    return name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "…"


def kernel_breakdown(rows: pd.DataFrame) -> pd.DataFrame:
    """Per variant, mode and state dtype, its largest usable step (most bytes): each kernel's time, share of
    the traced call and grid, beside the step's share of the bandwidth limit."""
    need = {"kernels", "kernel_dur_us", "bytes_moved", "variant"}
    if rows.empty or not need <= set(rows.columns):
        return pd.DataFrame()
    usable = rows[rows["usable"]] if "usable" in rows.columns else rows
    recs = []
    for (variant, mode, sdt), g in usable.groupby(["variant", "mode", "state_dtype"], sort=True):
        g = g[g["kernels"].map(lambda k: k is not None and len(k) > 0)]
        if g.empty:
            continue
        r = g.loc[g["bytes_moved"].idxmax()]
        durs = [float(x) for x in r["kernel_dur_us"]]
        total = sum(durs) or float("nan")
        grids = list(r["kernel_grid"]) if "kernel_grid" in r and r["kernel_grid"] is not None else [""] * len(durs)
        for name, us, grid in zip(r["kernels"], durs, grids):
            recs.append({"variant": variant, "mode": mode, "state_dtype": sdt, "panel": r.get("panel"),
                         "batch": int(r["batch"]), "pct_hbm": hbm_text(r.get("pct_hbm"), r.get("l2_resident")),
                         "kernel": short_name(name),
                         "us": round(us, 1), "share_pct": round(100 * us / total, 1), "grid": grid})
    return pd.DataFrame(recs)
