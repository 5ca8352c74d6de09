"""The study's figures as matplotlib Figures (no pyplot, no display: they render anywhere, and
page.py saves them). Each function returns [(file stem, Figure)], empty when there is nothing to draw.
Only ok rows are drawn; a missing point is a gap, never a number.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from qlabench.analyze.kit.figures import finish_figure
from qlabench.analyze.study.heads import head_scaling
from qlabench.core.identity import heads_label
from qlabench.analyze.study.prepare import PROFILE_GATE_DEFAULTS
from qlabench.analyze.study.regret import library_regret
from qlabench.analyze.kit.backends import backend_style
from qlabench.core.backend_decl import AUTO_CHOICES
from qlabench.analyze.study.study import Study



def _color(backend: str) -> str:
    return backend_style(backend)["color"]  # one colour per backend on every figure (analyze/kit)


def _marker(backend: str) -> str:
    return backend_style(backend)["marker"]


def _launched(values) -> np.ndarray:
    """True where FlashQLA's intra-CP warm-up launched (False or unknown otherwise)."""
    return np.array([v is not None and not pd.isna(v) and bool(v) for v in values], dtype=bool)


def _grid(n: int, ncols: int, w: float, h: float) -> tuple[Figure, list]:
    ncols = max(1, min(ncols, n))
    nrows = math.ceil(n / ncols)
    fig = Figure(figsize=(max(7.0, w * ncols), h * nrows + 0.6))  # + room for the title and legend
    axes = fig.subplots(nrows, ncols, squeeze=False).flat
    axes = list(axes)
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:n]


def _panels(d: pd.DataFrame) -> list[tuple]:
    """(h_v, h_qk, heads) of a frame, in head-config order."""
    return sorted({(int(r.h_v), int(r.h_qk), r.heads) for r in d[["h_v", "h_qk", "heads"]].itertuples()})


def _layout_axis(ax, groups: list[tuple[str, int]]) -> dict[str, int]:
    """Categorical x of layouts (label, total tokens) in order; light separators between totals."""
    pos = {x: i for i, (x, _) in enumerate(groups)}
    for i in range(1, len(groups)):
        if groups[i][1] != groups[i - 1][1]:
            ax.axvline(i - 0.5, color="grey", lw=0.4, alpha=0.5)
    ax.set_xticks(range(len(groups)), [x for x, _ in groups], rotation=60, ha="right", fontsize=6)
    ax.set_xlim(-0.5, len(groups) - 0.5)
    return pos


def _segments(ax, pos: dict[str, int], d: pd.DataFrame, y: str, fmt: str, **kw) -> None:
    """Plot y over the layout axis, a line per run of the same total tokens (never across totals)."""
    for _, seg in d.groupby("total_tokens", sort=True):
        ax.plot([pos[x] for x in seg["x_label"]], seg[y], fmt, **kw)
        kw.pop("label", None)


def speedup_figures(study: Study) -> list[tuple[str, Figure]]:
    """Per mode: flash_qla's speedup over FLA and over FlashInfer, a panel per head config we measured, x =
    layout in order of total tokens (lines join the layouts of one total). Solid: ours; dashed, hollow:
    published (all its layouts of that head config)."""
    d = study.speedups
    out = []
    for mode in _mode_order(d["mode"]):
        grp = d[d["mode"] == mode]
        panels = _panels(grp[grp["speedup"].notna()])
        if not panels:
            continue
        fig, axes = _grid(len(panels), 3, 5.6, 3.5)
        for ax, (h_v, h_qk, heads) in zip(axes, panels):
            sub = grp[(grp["h_v"] == h_v) & (grp["h_qk"] == h_qk)]
            pos = _layout_axis(ax, list(dict.fromkeys(zip(sub["x_label"], sub["total_tokens"]))))
            for base, bsub in sub.groupby("baseline", sort=True):
                color = _color(base)
                _segments(ax, pos, bsub, "speedup", "-o", color=color, markersize=4, label=f"vs {base}")
                _segments(ax, pos, bsub, "published_speedup", "--o", color=color, mfc="none", markersize=4,
                          alpha=0.6, label=f"vs {base} (published)")
            ax.axhline(1.0, color="grey", lw=0.6)
            vals = pd.concat([sub["speedup"], sub["published_speedup"]]).dropna()
            if len(vals) and vals.max() / max(vals.min(), 1e-12) > 20:
                ax.set_yscale("log")
            config = sub["model_config"].dropna()
            ax.set_title(heads + (f" · {config.iloc[0]}" if len(config) else ""), fontsize=9)
            ax.set_ylabel("flash_qla speedup", fontsize=8)
            ax.grid(True, axis="y", alpha=0.3)
        finish_figure(fig, axes, f"{mode}: flash_qla speedup = baseline time / flash_qla time (solid: ours, dashed: "
                           "published; higher is faster)")
        out.append((f"speedup_{mode}", fig))
    return out


def _mode_order(modes) -> list[str]:
    """fwd, bwd, then any other mode by name."""
    present = set(modes)
    return [m for m in ("fwd", "bwd") if m in present] + sorted(present - {"fwd", "bwd"})




def _ms_ticks(axis) -> None:
    """Plain millisecond labels at 1, 2 and 5 of each decade, and none on the other minor ticks: on a span
    under a decade matplotlib labels every minor tick as 'a x 10^b', and they run into each other."""
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def published_figure(study: Study) -> list[tuple[str, Figure]]:
    """Ours against published, every ok value, log-log, a panel per mode; the band is the tolerance."""
    d = study.comparison[study.comparison["status"] == "ok"]
    if d.empty:
        return []
    modes = sorted(d["mode"].unique())
    fig, axes = _grid(len(modes), 2, 5.0, 4.6)
    for ax, mode in zip(axes, modes):
        sub = d[d["mode"] == mode]
        for backend, bsub in sub.groupby("backend", sort=True):
            ax.scatter(bsub["published_ms"], bsub["ours_ms"], s=14, color=_color(backend),
                       marker=_marker(backend), label=f"{backend} ({len(bsub)})")
        lo = min(sub["published_ms"].min(), sub["ours_ms"].min()) * 0.8
        hi = max(sub["published_ms"].max(), sub["ours_ms"].max()) * 1.25
        line = np.array([lo, hi])
        ax.plot(line, line, color="grey", lw=0.8)
        t = study.tolerance
        ax.fill_between(line, line * (1 - t), line * (1 + t), color="grey", alpha=0.15, label=f"±{t:.0%}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        for axis in (ax.xaxis, ax.yaxis):
            _ms_ticks(axis)
        ax.set_xlabel("published ms")
        ax.set_ylabel("ours ms")
        ax.set_title(f"{mode}: ours vs published (above the band: ours slower)", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return [("published_vs_ours", fig)]


def gate_figures(study: Study) -> list[tuple[str, Figure]]:
    """Time against gate_zero_frac and against gate_scale: a panel per (mode, heads, layout), a line per
    backend; filled markers where FlashQLA's intra-CP warm-up launched, hollow where it did not."""
    out = []
    for axis, frame in (("gate_zero_frac", study.gate_zero_frac), ("gate_scale", study.gate_scale)):
        if frame.empty:
            continue
        keys = list(dict.fromkeys(zip(frame["mode"], frame["heads"], frame["sequences"])))
        fig, axes = _grid(len(keys), 3, 4.6, 3.5)
        default = PROFILE_GATE_DEFAULTS["flashqla"][axis]
        for ax, (mode, heads, seqs) in zip(axes, keys):
            sub = frame[(frame["mode"] == mode) & (frame["heads"] == heads) & (frame["sequences"] == seqs)]
            for backend, bsub in sub.groupby("backend", sort=True):
                bsub = bsub.sort_values("value")
                color = _color(backend)
                ax.plot(bsub["value"], bsub["median_ms"], "-", color=color, label=backend)
                cp = _launched(bsub["cp_launched"])
                xs, ys = bsub["value"].to_numpy(), bsub["median_ms"].to_numpy()
                ax.plot(xs[cp], ys[cp], _marker(backend), color=color)
                ax.plot(xs[~cp], ys[~cp], _marker(backend), color=color, mfc="none")
            ax.axvline(default, color="grey", lw=0.8, ls=":")
            if axis == "gate_scale":
                ax.set_xscale("log", base=2)
            # gate_scale divides g (g = logsigmoid(randn) / gate_scale): larger is a weaker decay.
            ax.set_xlabel(f"{axis} (dotted: published {default:g})", fontsize=8)
            ax.set_ylabel("ms")
            ax.set_title(f"{mode} · {heads} · {seqs}", fontsize=9)
            ax.grid(True, alpha=0.3)
        finish_figure(fig, axes, f"time vs {axis} (filled marker: FlashQLA's intra-CP warm-up launched)")
        out.append((f"gate_{axis}", fig))
    return out


def regret_stem(library: str) -> str:
    """A library's regret figure: the first library of core's AUTO_CHOICES keeps the name pages link to."""
    return "cp_regret" if library == AUTO_CHOICES[0].library else f"cp_regret_{library.replace('-', '_')}"


def regret_figure(study: Study) -> list[tuple[str, Figure]]:
    """Per library of AUTO_CHOICES, the auto-CP regret of its auto backend's primary stack: a panel per
    (mode, head config), x = layout in order of total tokens, a colour per gate setting; filled where the
    auto call split. Above 1: auto lost."""
    out = []
    for choice in AUTO_CHOICES:
        d = library_regret(study.regret, choice.library)
        stack = study.primary.get(choice.auto)
        if stack is not None and not d.empty:
            d = d[d["stack"] == stack]
        if not d.empty:
            out.append((regret_stem(choice.library), _regret_panels(d, choice.library)))
    return out


def _regret_panels(d: pd.DataFrame, library: str) -> Figure:
    from qlabench.analyze.study.speedup import x_label

    d = d.assign(x_label=[x_label(k, t, n, False) for k, t, n in zip(d["seqkey"], d["total_tokens"], d["num_seqs"])],
                 _first=d["seqkey"].map(lambda k: int(k.split("+", 1)[0])))
    d = d.sort_values(["total_tokens", "num_seqs", "_first"], kind="stable")
    keys = [(m, h_v, h_qk, heads) for m in _mode_order(d["mode"]) for h_v, h_qk, heads in _panels(d[d["mode"] == m])]
    gates = list(dict.fromkeys(d["gate_label"]))
    colors = {g: f"C{i % 10}" for i, g in enumerate(gates)}
    fig, axes = _grid(len(keys), 3, 5.0, 3.4)
    for ax, (mode, h_v, h_qk, heads) in zip(axes, keys):
        sub = d[(d["mode"] == mode) & (d["h_v"] == h_v) & (d["h_qk"] == h_qk)]
        pos = _layout_axis(ax, list(dict.fromkeys(zip(sub["x_label"], sub["total_tokens"]))))
        for gate, gsub in sub.groupby("gate_label", sort=False):
            cp = _launched(gsub["auto_cp"])
            lower = gsub["unmeasured"].notna().to_numpy()  # a pinned setting missing: a lower bound
            xs = np.array([pos[x] for x in gsub["x_label"]])
            ys = gsub["regret"].to_numpy()
            for sel, marker in ((~lower, "o"), (lower, "^")):
                ax.scatter(xs[cp & sel], ys[cp & sel], color=colors[gate], s=22, marker=marker,
                           label=gate if marker == "o" else None)
                ax.scatter(xs[~cp & sel], ys[~cp & sel], facecolors="none", edgecolors=colors[gate], s=22,
                           marker=marker, label=gate if marker == "o" and not cp.any() else None)
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_ylabel("auto / fastest pinned", fontsize=8)
        ax.set_title(f"{mode} · {heads}", fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
    finish_figure(fig, axes, f"{library} auto-CP regret (> 1: its automatic CP decision lost; filled: the auto call split; "
                             "triangle: a pinned setting not measured, a lower bound)")
    return fig


def heads_figure(study: Study) -> list[tuple[str, Figure]]:
    """Time and SM coverage against head config, one sequence (solid: the longest, dashed: the shortest
    length measured): FlashInfer's flat time next to its coverage, which only heads raise."""
    h = head_scaling(study.primary_rows)
    if h.empty or h["backend"].nunique() < 2:
        return []
    configs = sorted({(r.h_v, r.h_qk) for r in h.itertuples()})
    pos = {c: i for i, c in enumerate(configs)}
    lengths = sorted(h["total_tokens"].unique())
    shown = [lengths[-1]] + ([lengths[0]] if len(lengths) > 1 else [])
    fig, (ax_t, ax_c) = _grid(2, 2, 5.6, 4.2)
    for (backend, T), sub in h[h["total_tokens"].isin(shown)].groupby(["backend", "total_tokens"], sort=True):
        sub = sub.sort_values(["h_v", "h_qk"])
        x = [pos[(r.h_v, r.h_qk)] for r in sub.itertuples()]
        style = dict(color=_color(backend), marker=_marker(backend), ms=4,
                     ls="-" if T == shown[0] else "--")
        ax_t.plot(x, sub["median_ms"], label=f"{backend} 1x{T}", **style)
        ax_c.plot(x, sub["sm_coverage"].astype(float), label=f"{backend} 1x{T}", **style)
    for ax in (ax_t, ax_c):
        ax.set_xticks(range(len(configs)), [heads_label(q, v) for v, q in configs], rotation=45, ha="right", fontsize=7)
        ax.set_xlabel("heads (q,k / v)", fontsize=8)
        ax.grid(True, alpha=0.3)
    ax_t.set_yscale("log")
    ax_t.set_ylabel("median ms (log)")
    ax_t.set_title("time per call", fontsize=9)
    ax_c.set_ylabel("sm_coverage (share of SMs given blocks)")
    ax_c.set_ylim(0, 1.05)
    ax_c.set_title("SM coverage", fontsize=9)
    ax_c.legend(fontsize=6, ncol=2)
    fig.suptitle("forward, one sequence: time and SM coverage against head count", fontsize=10)
    fig.tight_layout()
    return [("heads_coverage", fig)]


def all_figures(study: Study) -> list[tuple[str, Figure]]:
    return (speedup_figures(study) + published_figure(study) + heads_figure(study) + gate_figures(study)
            + regret_figure(study))
