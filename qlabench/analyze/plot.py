"""Speedup curves: each backend's speedup against a baseline, versus tokens, one panel per head config.

Only ok rows are plotted; a backend with no ok row at a point leaves a gap rather than a number.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display needed
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from qlabench.core.errors import QlabenchError  # noqa: E402
from qlabench.store.keys import workload_keys  # noqa: E402
from qlabench.analyze.report import file_safe, gate_label_of, heads_label, layout_label  # noqa: E402
from qlabench.core.names import MAX_NAME_LEN  # noqa: E402
from qlabench.store.files import under_root  # noqa: E402

X_AXES = ("total_tokens", "seqlen")


def png_path(out_dir: Path, *parts: object) -> Path:
    """`out_dir/<parts joined by _>.png`, every part made file-safe: a mode or dtype read from a row can
    hold `../` or `/`, and no row may place a file outside `out_dir` (store.files.under_root checks the
    safe-name rule and where the path resolves). A name over the limit keeps its start and a hash."""
    stem = "_".join(file_safe(p) for p in parts)
    if len(stem) + 4 > MAX_NAME_LEN:
        digest = hashlib.sha1(stem.encode()).hexdigest()[:10]
        stem = f"{stem[:MAX_NAME_LEN - 4 - 11]}-{digest}"
    return under_root(out_dir, stem + ".png")


def speedup_frame(df: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Rows of ok backends joined to the baseline's time on the same workload, with `speedup`."""
    ok = df[df["status"] == "ok"].copy()
    ok["_wk"] = workload_keys(ok)
    base = ok[ok["backend"] == baseline][["_wk", "median_ms"]].rename(columns={"median_ms": "base_ms"})
    if base.empty:
        raise QlabenchError(f"baseline {baseline!r} has no ok rows in these results")
    merged = ok.merge(base, on="_wk")
    merged["speedup"] = merged["base_ms"] / merged["median_ms"]
    merged["heads"] = merged.apply(heads_label, axis=1)
    merged["sequences"] = merged.apply(layout_label, axis=1)
    merged["gate"] = merged.apply(gate_label_of, axis=1)  # one figure per gate profile and parameters
    merged["seqlen"] = merged["seqlens"].map(lambda s: max(s))
    return merged


def plot_speedups(df: pd.DataFrame, out_dir: str | Path, baseline: str, x: str = "total_tokens",
                  panel: str = "heads") -> list[Path]:
    """Write one PNG per (mode, dtype, gate): speedup vs `x`, a panel per `panel` value.

    Every panel shares the figure's y scale. With `panel="tp"` each model keeps its own line.
    Dense layouts are lines; varlen layouts (packed sequences) are hollow squares at their total tokens,
    in the same colour as their backend's line.
    """
    if x not in X_AXES:
        raise QlabenchError(f"x must be one of {X_AXES}, got {x!r}")
    if panel not in ("heads", "tp"):
        raise QlabenchError(f"panel must be heads or tp, got {panel!r}")
    data = speedup_frame(df, baseline)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    backends = sorted(data["backend"].unique())
    colors = {b: f"C{i % 10}" for i, b in enumerate(backends)}
    written = []
    for (mode, dtype, gate), grp in data.groupby(["mode", "dtype", "gate"], sort=True):
        panels = sorted(grp[panel].dropna().unique(), key=str)
        if not panels:
            continue
        ncols = min(4, len(panels))
        nrows = -(-len(panels) // ncols)
        fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.4 * nrows), squeeze=False)
        # One y scale for every panel of the figure: log when the speedups span more than 20x anywhere.
        vals = grp["speedup"]
        log_y = bool(len(vals)) and vals.max() / max(vals.min(), 1e-12) > 20
        for ax, pv in zip(axes.flat, panels):
            sub = grp[grp[panel] == pv]
            # A panel per TP degree holds several models: one line per (backend, model), never merged.
            line_keys = ["backend", "model"] if panel == "tp" and sub["model"].nunique() > 1 else ["backend"]
            for key, bgrp in sub.groupby(line_keys, sort=True, dropna=False):
                backend = key[0] if isinstance(key, tuple) else key
                label = backend if len(line_keys) == 1 else f"{backend} · {key[1]}"
                style = "--" if backend == baseline else "-o"
                dense = bgrp[bgrp["layout"] == "dense"]
                if not dense.empty:
                    curve = dense.groupby(x)["speedup"].median().sort_index()
                    ax.plot(curve.index, curve.values, style, color=colors[backend], label=label, markersize=4)
                varlen = bgrp[bgrp["layout"] == "varlen"]
                if not varlen.empty and backend != baseline:
                    ax.plot(varlen[x], varlen["speedup"], "s", mfc="none", color=colors[backend], markersize=6,
                            label=f"{label} (varlen)")
            ax.set_xscale("log", base=2)
            if log_y:
                ax.set_yscale("log")
            ax.axhline(1.0, color="grey", lw=0.6)
            ax.set_title(f"{panel}={pv}" if panel == "tp" else str(pv), fontsize=9)
            ax.set_xlabel(x.replace("_", " "), fontsize=8)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
        for ax in list(axes.flat)[len(panels):]:
            ax.set_visible(False)
        fig.supylabel(f"speedup vs {baseline}", fontsize=9)  # once per figure: per-panel labels collide
        fig.suptitle(f"{mode} · {dtype} · gate profile {gate}  (speedup = {baseline} time / backend time; "
                     "higher is faster)", fontsize=10)
        fig.tight_layout()
        path = png_path(out_dir, "speedup", mode, dtype, f"gate-{gate}")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    if not written:
        raise QlabenchError("nothing to plot: no ok rows")
    return written


def finish_figure(fig, axes, title: str, ylabel: str | None = None, extra: dict | None = None) -> None:
    """Title on top, one legend at the bottom (every distinct label of the panels, then `extra`'s handles),
    an optional shared y label, and the panels laid out between."""
    seen = {}
    for ax in axes:
        for h, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, h)
    seen.update(extra or {})
    height = fig.get_figheight()
    bottom = 0.0
    if seen:
        fig.legend(list(seen.values()), list(seen), loc="lower center", fontsize=7, ncol=min(4, len(seen)),
                   bbox_to_anchor=(0.5, 0.0), frameon=False)
        bottom = (0.25 + 0.2 * math.ceil(len(seen) / 4)) / height
    if ylabel:
        fig.supylabel(ylabel, fontsize=9)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, bottom, 1, 1 - 0.35 / height))
