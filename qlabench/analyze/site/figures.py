"""The site's figures: a ranking as one dot per backend and case, and each point's time across library
versions and commits. PNG files beside the pages, drawn with matplotlib (no script, nothing fetched).
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display needed
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from qlabench.analyze.kit.backends import backend_style  # noqa: E402
from qlabench.analyze.site.history import PointHistory  # noqa: E402
from qlabench.analyze.site.rankings import Ranking  # noqa: E402

DPI = 100


def style(backend: str, others: list[str] | None = None) -> dict:
    """The colour and marker a backend has everywhere on the site, as on every figure (analyze/kit/backends.py:
    from the declarations' order)."""
    return backend_style(backend)


def ranking_figure(r: Ranking, path: Path) -> Path:
    """Speedup against FLA per case (rows, fewest tokens at the top) and backend (one colour each):
    right of the grey line is faster than FLA. A backend without a correct time at a case has no dot."""
    cases = [c for c in r.cases if any(e.ok for e in c.entries)]
    backends = list(dict.fromkeys(e.backend for c in cases for e in c.entries if e.ok))
    fig, ax = plt.subplots(figsize=(7.5, 1.2 + 0.32 * len(cases)))
    values = []
    for b in backends:
        ys, xs = [], []
        for y, c in enumerate(cases):
            e = next((e for e in c.entries if e.backend == b and e.ok and e.speedup), None)
            if e is not None:
                ys.append(y)
                xs.append(e.speedup)
        values += xs
        st = style(b, backends)
        ax.plot(xs, ys, linestyle="none", markersize=7, alpha=0.85, label=b, mfc=st["color"], mec="white",
                **st)
    ax.set_yticks(range(len(cases)), [f"{c.case.label}  ({c.case.total_tokens:,} tok)" for c in cases], fontsize=8)
    ax.invert_yaxis()
    ax.axvline(1.0, color="grey", lw=1)
    if values and max(values) / max(min(values), 1e-9) > 8:
        ax.set_xscale("log", base=2)
    ax.grid(True, axis="x", alpha=0.3)
    ax.grid(True, axis="y", alpha=0.15)
    ax.set_xlabel("speedup vs FLA (FLA time / backend time; right is faster)", fontsize=9)
    if backends:  # a ranking whose every entry is unranked (checked on a reduced problem only) has no dot to name
        ax.legend(fontsize=8, ncol=min(5, len(backends)), loc="lower center", bbox_to_anchor=(0.5, 1.0),
                  frameon=False)
    else:
        ax.text(0.5, 0.5, "no ranked time: every entry is unranked or failed here", transform=ax.transAxes,
                ha="center", va="center", fontsize=9, color="grey")
    ax.set_title(f"{r.title}: current ranking per sequence mix", fontsize=10, pad=24)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def history_figure(points: list[PointHistory], title: str, path: Path) -> Path:
    """A panel per backend and mode: each point's time at each (library version, commit), relative to its
    newest run (0% = now); every run is a dot, the line joins the medians of a point's runs at a state."""
    panels: dict[tuple[str, str], list[PointHistory]] = {}
    for h in points:
        panels.setdefault((h.backend, h.mode), []).append(h)
    n = len(panels)
    ncols = min(2, n)
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.2 * ncols, 3.6 * nrows), squeeze=False)
    for ax, ((backend, mode), hs) in zip(axes.flat, sorted(panels.items())):
        states = sorted({(m.version, m.commit): m.date for h in hs for m in h.runs}.items(),
                        key=lambda kv: min(m.date for h in hs for m in h.runs if (m.version, m.commit) == kv[0]))
        xs = {s: i for i, (s, _) in enumerate(states)}
        segments, dots = [], []
        for h in hs:
            now = h.runs[-1].median_ms
            per_state: dict[int, list[float]] = {}
            for m in h.runs:
                per_state.setdefault(xs[(m.version, m.commit)], []).append(100 * (m.median_ms / now - 1))
            line = [(x, sorted(per_state[x])[len(per_state[x]) // 2]) for x in sorted(per_state)]
            segments.append(line)
            dots += [(x, y) for x, ys in per_state.items() for y in ys]
        color = style(backend)["color"]
        # One collection of lines and one of dots per panel: an artist per point and state is slow to draw.
        ax.add_collection(LineCollection(segments, colors=color, alpha=0.35, linewidths=1))
        ax.plot([x for x, _ in dots], [y for _, y in dots], linestyle="none", marker="o", markersize=3, color=color,
                alpha=0.6)
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xticks(range(len(states)), [f"{v or 'version ?'}\n{c or 'commit ?'}" for (v, c), _ in states],
                      fontsize=7, rotation=30, ha="right")
        ax.set_title(f"{backend} · {mode}: {len(hs)} points", fontsize=9)
        ax.set_ylabel("time vs newest run (%)", fontsize=8)
        ax.grid(True, axis="y", alpha=0.3)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    fig.suptitle(title, fontsize=10)
    fig.legend([Line2D([], [], color="grey", marker="o", markersize=3, alpha=0.6)],
               ["one run of one point (x: library version and qlabench commit, oldest left)"],
               loc="lower center", fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0.04, 1, 0.96))
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path
