"""The serving figures as matplotlib Figures (no pyplot): per (T, state dtype), one figure of time against
batch (log-log) and one of the share of the bandwidth limit against batch, a panel per model and TP degree,
a line per backend variant. Only usable rows are drawn (a gap is a point that is not ok); a hollow marker
is a row whose run said its states stayed in L2 between calls.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, NullFormatter

from qlabench.analyze.kit.figures import finish_figure, panel_grid
from qlabench.analyze.serving.frame import panel_order
from qlabench.analyze.serving.serving import Serving

KINDS = {
    "time": ("time_ms", "median ms per step (log)", "time per step"),
    "hbm": ("pct_hbm", "% of the bandwidth limit", "share of the HBM bandwidth limit"),
}
MARKERS = "osD^v<>ph*"


def variant_styles(variants) -> dict[str, dict]:
    """One colour and marker per variant, the same in every figure of the page."""
    return {v: {"color": f"C{i % 10}", "marker": MARKERS[i % len(MARKERS)]} for i, v in enumerate(sorted(set(variants)))}


def _figure_keys(d: pd.DataFrame) -> list[tuple]:
    keys = d[["mode", "T", "state_dtype", "context"]].drop_duplicates()
    keys = keys.assign(_m=(keys["mode"] != "decode").astype(int)).sort_values(["_m", "T", "state_dtype", "context"])
    return [tuple(k) for k in keys[["mode", "T", "state_dtype", "context"]].itertuples(index=False, name=None)]


def figure_stem(kind: str, mode: str, T: int, state_dtype: str, context: str) -> str:
    """'serving_time_decode_T1_float32' (+ the context): the file stem, made file-safe when written."""
    stem = f"serving_{kind}_{mode}_T{T}_{state_dtype}"
    return f"{stem}_{context}" if context else stem


def serving_figures(s: Serving, kinds: Iterable[str] = tuple(KINDS)) -> list[tuple[str, Figure]]:
    """[(stem, Figure)] for every (kind, mode, T, state dtype, context) with a usable row, of the `kinds` asked
    for (KINDS: time, hbm); the %-of-limit figure only where rows carry hbm_frac (a measured peak)."""
    d = s.rows[s.rows["usable"]]
    styles = variant_styles(s.rows["variant"])
    out = []
    for key in _figure_keys(d):
        sub = d[(d["mode"] == key[0]) & (d["T"] == key[1]) & (d["state_dtype"] == key[2]) & (d["context"] == key[3])]
        for kind, (col, ylabel, what) in KINDS.items():
            if kind in kinds and sub[col].notna().any():
                out.append((figure_stem(kind, *key), _figure(sub, col, ylabel, what, key, styles, kind == "hbm")))
    return out


def _figure(sub: pd.DataFrame, col: str, ylabel: str, what: str, key: tuple, styles: dict, pct: bool) -> Figure:
    panels = panel_order(sub["panel"])
    fig, axes = panel_grid(len(panels), 4, 4.2)
    any_l2 = False
    for ax, panel in zip(axes, panels):
        p = sub[sub["panel"] == panel]
        for variant, v in p.groupby("variant", sort=True):
            v = v.sort_values("batch")
            st = styles[variant]
            l2 = (v["l2_resident"] == True).to_numpy()  # noqa: E712 (None: no hint)
            ax.plot(v["batch"], v[col], "-", color=st["color"], marker=st["marker"], ms=4, lw=1.2,
                    markevery=list(~l2), label=variant)
            if l2.any():
                ax.plot(v["batch"][l2], v[col][l2], st["marker"], color=st["color"], mfc="none", ms=6)
                any_l2 = True
        batches = sorted(p["batch"].unique())
        ax.set_xscale("log", base=2)
        ax.set_xticks(batches, [str(b) for b in batches], fontsize=7)
        ax.minorticks_off()
        if pct:
            ax.axhline(100, color="grey", lw=0.8, ls="--")
            ax.set_ylim(0, max(105, float(p[col].max()) * 1.05))
        else:
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))  # 0.01, not 10^-2
            ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_title(panel, fontsize=9)
        ax.set_xlabel("batch (sequences)", fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
    mode, T, state_dtype, context = key
    title = f"{mode}, T={T} per sequence, state {state_dtype}{' · ' + context if context else ''}: {what}"
    if pct:
        title += " (dashed: 100%)"
    extra = {"hollow: the run said the states stayed in L2": Line2D([], [], ls="", marker="o", color="grey",
                                                                        mfc="none")} if any_l2 else {}
    finish_figure(fig, axes[: len(panels)], title, ylabel, extra)
    return fig


