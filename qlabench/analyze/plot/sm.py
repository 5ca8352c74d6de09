"""The SM-utilisation view: sm_coverage (Kineto launch shapes) and sm_active_pct (Nsight Compute) per
backend, against the head configuration or the TP degree.

Both are shown in percent side by side: coverage says how many SMs the launches could occupy at all,
sm_active how many cycles SMs were actually busy. One figure per (mode, dtype, gate, sequences), since
both depend on the number of sequences as much as on the heads.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from qlabench.core.errors import QlabenchError  # noqa: E402
from qlabench.analyze.kit.figures import png_path  # noqa: E402
from qlabench.analyze.kit.labels import gate_label_of, heads_label, layout_label  # noqa: E402

SM_X_AXES = ("heads", "tp")
METRICS = (("sm_coverage_pct", "sm_coverage (% of SMs given a block)"),
           ("sm_active_pct", "sm_active (% of SM cycles busy, ncu)"))
_GROUP = ["mode", "dtype", "gate", "sequences"]


def sm_frame(df: pd.DataFrame, x: str = "heads") -> pd.DataFrame:
    """ok rows with either SM metric, one line per (figure group, x, backend), metrics in percent.

    Columns: mode, dtype, gate, sequences, x, x_order, backend, sm_coverage_pct, sm_active_pct
    (median over repeated rows, e.g. several runs or seeds).
    """
    if x not in SM_X_AXES:
        raise QlabenchError(f"x must be one of {SM_X_AXES}, got {x!r}")
    cols = [c for c in ("sm_coverage", "sm_active_pct") if c in df.columns]
    if not cols:
        raise QlabenchError("these results have no sm_coverage or sm_active_pct columns")
    d = df[df["status"] == "ok"]
    d = d[d[cols].notna().any(axis=1)].copy()
    if d.empty:
        raise QlabenchError("nothing to plot: no ok row has sm_coverage or sm_active_pct")
    d["sm_coverage_pct"] = 100.0 * d["sm_coverage"].astype(float) if "sm_coverage" in d else np.nan
    if "sm_active_pct" not in d:
        d["sm_active_pct"] = np.nan
    d["sequences"] = d.apply(layout_label, axis=1)
    d["gate"] = d.apply(gate_label_of, axis=1)
    if x == "heads":
        d = d.assign(x=d.apply(heads_label, axis=1), x_order=d["h_v"].astype(float) * 1e6 + d["h_qk"].astype(float))
    else:
        tp = pd.to_numeric(d["tp"], errors="coerce")
        d = d[tp.notna()].assign(x=tp.dropna().astype(int).map(lambda t: f"TP{t}"), x_order=tp.dropna())
        if d.empty:
            raise QlabenchError("no row has a TP degree: plot against heads instead")
    agg = (d.groupby(_GROUP + ["x", "x_order", "backend"], sort=True)[["sm_coverage_pct", "sm_active_pct"]]
           .median().reset_index())
    return agg


def plot_sm(df: pd.DataFrame, out_dir: str | Path, x: str = "heads") -> list[Path]:
    """Write one PNG per (mode, dtype, gate, sequences): grouped bars per backend for each SM metric."""
    data = sm_frame(df, x)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for (mode, dtype, gate, seqs), grp in data.groupby(_GROUP, sort=True):
        xs = grp.sort_values("x_order")["x"].drop_duplicates().tolist()
        backends = sorted(grp["backend"].unique())
        width = 0.8 / len(backends)
        fig, axes = plt.subplots(1, 2, figsize=(max(6.0, 1.1 * len(xs) * 2 + 2), 3.8), squeeze=False)
        for ax, (metric, title) in zip(axes.flat, METRICS):
            for j, b in enumerate(backends):
                sub = grp[grp["backend"] == b].set_index("x")[metric]
                vals = [sub.get(v, np.nan) for v in xs]
                pos = np.arange(len(xs)) + (j - (len(backends) - 1) / 2) * width
                bars = ax.bar(pos, vals, width, label=b)
                ax.bar_label(bars, labels=["" if np.isnan(v) else f"{v:.0f}" for v in vals], fontsize=6)
            ax.set_xticks(np.arange(len(xs)), xs, rotation=30, ha="right", fontsize=7)
            ax.set_ylim(0, 112)  # room for the labels of full bars
            ax.axhline(100, color="grey", lw=0.6)
            ax.set_title(title, fontsize=9)
            ax.set_ylabel("percent")
            ax.grid(True, axis="y", alpha=0.3)
            ax.legend(fontsize=7)
        fig.suptitle(f"SM utilisation · {mode} · {dtype} · gate={gate} · {seqs}  (missing bar: not measured)",
                     fontsize=10)
        fig.tight_layout()
        safe = "".join(c if c.isalnum() or c in "-_x" else "_" for c in str(seqs))[:60]
        path = png_path(out_dir, "sm", mode, dtype, gate, safe, x)
        fig.savefig(path, dpi=120)
        plt.close(fig)
        written.append(path)
    return written
