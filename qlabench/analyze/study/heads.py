"""Time and SM coverage against head count, one sequence at a time: why FlashInfer's curve is flat.

FlashInfer's GDN prefill launches one block per value head (and sequence) for its main kernel, so at
2/8 heads it keeps 8 of the H200's 132 SMs busy and at 16/64 heads 64 of them: the work per SM
stays the same as heads grow, and so does the time. FlashQLA and FLA split a sequence into more
blocks than that and scale with heads instead. This table puts each backend's time beside its
`sm_coverage` (time-weighted share of SMs given a block, from the kernels the row recorded) and its
longest kernel's block count, on the published method's single-sequence points.
"""

from __future__ import annotations

import math

import pandas as pd

from qlabench.core.identity import heads_label
from qlabench.analyze.study.published import BACKEND_COLUMNS, PUBLISHED_METHOD, method_differences

COLUMNS = ["backend", "total_tokens", "heads", "h_qk", "h_v", "median_ms", "sm_coverage", "main_kernel",
           "main_blocks", "main_share"]


def _blocks(grid: str) -> int | None:
    try:
        return math.prod(int(x) for x in str(grid).split(","))
    except ValueError:
        return None


def main_kernel(row) -> tuple[str | None, int | None, float | None]:
    """(name, blocks, share of the call's kernel time) of the kernel a row spent longest in."""
    names, durs, grids = row.get("kernels"), row.get("kernel_dur_us"), row.get("kernel_grid")
    if names is None or durs is None or len(names) == 0 or len(durs) != len(names):
        return None, None, None
    totals: dict[str, float] = {}
    grid_of: dict[str, str] = {}
    for i, (n, d) in enumerate(zip(names, durs)):
        totals[n] = totals.get(n, 0.0) + float(d)
        if grids is not None and i < len(grids):
            grid_of.setdefault(n, grids[i])
    name = max(totals, key=totals.get)
    whole = sum(totals.values())
    short = name.split("<", 1)[0].replace("void ", "")
    if short.endswith("device_kernel") and "<" in name:  # CUTLASS: the kernel is the template argument
        short = name.split("<", 2)[1].split("<", 1)[0]
    return short, _blocks(grid_of.get(name)), (totals[name] / whole if whole else None)


def head_scaling(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (backend, single-sequence length, head config) of ok forward rows made the published way;
    `rows` as the study prepares them (`Study.primary_rows`)."""
    if rows.empty:
        return pd.DataFrame(columns=COLUMNS)
    d = rows[(rows["status"] == "ok") & (rows["mode"] == "fwd") & rows["backend"].isin(list(BACKEND_COLUMNS))
             & (rows["num_seqs"] == 1)]
    for axis, value in PUBLISHED_METHOD.items():
        d = d[d[axis] == value]
    recs = []
    for r in d.to_dict("records"):
        if method_differences(r):
            continue
        name, blocks, share = main_kernel(r)
        recs.append({"backend": r["backend"], "total_tokens": int(r["total_tokens"]),
                     "heads": heads_label(r["h_qk"], r["h_v"]), "h_qk": int(r["h_qk"]), "h_v": int(r["h_v"]),
                     "median_ms": float(r["median_ms"]), "sm_coverage": r.get("sm_coverage"),
                     "main_kernel": name, "main_blocks": blocks, "main_share": share, "_t": r["timestamp"]})
    if not recs:
        return pd.DataFrame(columns=COLUMNS)
    out = (pd.DataFrame(recs).sort_values("_t", kind="stable")
           .drop_duplicates(["backend", "total_tokens", "h_qk", "h_v"], keep="last"))
    return out.sort_values(["total_tokens", "backend", "h_v", "h_qk"]).reset_index(drop=True)[COLUMNS]
