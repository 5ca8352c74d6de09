"""Speedup curves: each backend's speedup against a baseline, versus tokens, one panel per head config.

Only ok rows are plotted; a backend with no ok row at a point leaves a gap rather than a number.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display needed
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
import pandas as pd  # noqa: E402

from qlabench.core.errors import QlabenchError  # noqa: E402
from qlabench.core import identity  # noqa: E402
from qlabench.core.identity import SERVING_AXES, workload_axes  # noqa: E402
from qlabench.store.keys import key_value, workload_keys  # noqa: E402
from qlabench.analyze.kit.figures import finish_figure, png_path  # noqa: E402
from qlabench.analyze.kit.labels import gate_label_of, heads_label, layout_label  # noqa: E402

X_AXES = ("total_tokens", "seqlen")


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
    merged["place"] = [place_label(lay, b, s) for lay, b, s in zip(merged["layout"], merged["batch"], merged["seqlens"])]
    merged["gate"] = merged.apply(gate_label_of, axis=1)  # one figure per gate profile and parameters
    merged["seqlen"] = merged["seqlens"].map(lambda s: max(s))
    return merged


# Axes a figure, its panels or its x already show: any other workload axis that takes several values at
# one place (a serving point's state dtype, layout or pool, K, V, the seed...) makes lines of its own,
# never a median over them.
_SHOWN = {"mode", "dtype", "gate", "gate_zero_frac", "gate_scale", "beta_regime", "model", "tp", "h_qk", "h_v",
          "layout", "batch", "seqlens"}


def variant_axes(df: pd.DataFrame, panel: str, x: str) -> list[str]:
    """The workload axes no title, panel or x position names that take several values at one place of one
    panel (a median would merge them): a serving pool that grows with the batch follows x and is no variant."""
    place = [panel, x, "sequences", "backend"]
    out = []
    for a in workload_axes():
        if a in _SHOWN or a not in df:
            continue
        values = df[a].map(lambda v: repr(key_value(v)))
        if values.groupby([df[c] for c in place], dropna=False).nunique().max() > 1:
            out.append(a)
    return out


def _variant(row, axes: list[str]) -> str:
    """'state float32/kv' (and 'pool 512' where the pool varies) for a serving row, 'K=64'-style otherwise."""
    parts = []
    if "state_dtype" in axes or "state_layout" in axes:
        parts.append(f"state {key_value(row.get('state_dtype'))}/{key_value(row.get('state_layout'))}")
    if "pool" in axes:
        parts.append(f"pool {key_value(row.get('pool'))}")
    return " ".join(parts + [f"{a}={key_value(row.get(a))}" for a in axes if a not in SERVING_AXES])


def _title(mode, dtype, gate, grp: pd.DataFrame, baseline: str) -> str:
    """The figure's title: for serving rows the state dtypes too (the input dtype alone misnames them)."""
    states = sorted({str(v) for v in grp["state_dtype"].dropna()}) if "state_dtype" in grp else []
    what = f"inputs {dtype} · " + " / ".join(f"state {s}" for s in states) if states else str(dtype)
    return f"{mode} · {what} · gate profile {gate}\n(speedup = {baseline} time / backend time; higher is faster)"


def _x_places(sub: pd.DataFrame, x: str) -> dict[str, float] | None:
    """A categorical x when several layouts share one x value (packed sequences of one token count):
    each layout its own labelled place, ordered by x, then by number of sequences; None when the numeric x is unambiguous."""
    if sub.groupby(x)["sequences"].nunique().max() <= 1:
        return None
    # '4x2048 dense' only where packed layouts share the panel; a dense batch's plain name otherwise.
    names = sub["place"] if (sub["layout"] != "dense").any() else sub["sequences"]
    order = sorted(set(zip(sub[x], sub["num_seqs"], sub["sequences"], names)))
    return {seq: (float(i), label) for i, (_, _, seq, label) in enumerate(order)}


def place_label(layout: str, batch, seqlens) -> str:
    """A layout's name at a categorical x: '8x1024' for packed equal lengths (as advise names a case),
    '1024+7168' for unequal ones, '4x2048 dense' for a dense batch."""
    lens = [int(n) for n in seqlens]
    if layout == "dense":
        return f"{identity.layout_label(layout, batch, lens)} dense"
    return f"{len(lens)}x{lens[0]}" if len(lens) > 1 and len(set(lens)) == 1 else "+".join(map(str, lens))


MARKERS = "osD^vPXh<>"


def line_styles(keys: pd.DataFrame, baseline: str) -> tuple[dict[tuple, dict], dict]:
    """The style of each line (a row of `keys`: the backend, then any model and variant) and the legend.

    A line per backend alone: a colour per backend. Where a backend has several lines (a model each in a
    TP panel, a state pool each in a serving figure), the colour says the model or variant and the marker
    the backend, so no two lines share both; the baseline is dashed without markers.
    """
    rows = sorted(set(keys.itertuples(index=False, name=None)))
    backends = sorted({r[0] for r in rows})
    others = sorted({r[1:] for r in rows})
    by_other = len(others) > 1
    colour_of = others if by_other else backends
    cmap = plt.get_cmap("tab20" if len(colour_of) > 10 else "tab10")
    colours = {c: cmap(i % cmap.N) for i, c in enumerate(colour_of)}
    marker = {b: MARKERS[i % len(MARKERS)] for i, b in enumerate(backends)}
    styles = {}
    for r in rows:
        c = colours[r[1:]] if by_other else colours[r[0]]
        base = r[0] == baseline
        styles[r] = dict(color=c, linestyle="--" if base else "-", marker="" if base else marker[r[0]])
    legend = {}
    if by_other:
        for b in backends:
            legend[b] = Line2D([], [], color="black", linestyle="--" if b == baseline else "-",
                               marker="" if b == baseline else marker[b], markersize=4)
        for o in others:
            legend[" · ".join(v for v in o if v)] = Line2D([], [], color=colours[o], lw=3)
    else:
        for b in backends:
            legend[b] = Line2D([], [], markersize=4, **styles[(b, *others[0])])
    return styles, legend


def plot_speedups(df: pd.DataFrame, out_dir: str | Path, baseline: str, x: str = "total_tokens",
                  panel: str = "heads") -> list[Path]:
    """Write one PNG per (mode, dtype, gate): speedup vs `x`, a panel per `panel` value.

    Every panel shares the figure's y scale. A line per backend, and per model in a TP panel and per variant
    (e.g. a serving point's state pool) where a figure holds several, each in its own colour. Where several
    layouts share one x value (packed sequences of one token count), x becomes one labelled place per layout,
    ordered by tokens, and a line joins only the layouts of one token count.
    """
    if x not in X_AXES:
        raise QlabenchError(f"x must be one of {X_AXES}, got {x!r}")
    if panel not in ("heads", "tp"):
        raise QlabenchError(f"panel must be heads or tp, got {panel!r}")
    data = speedup_frame(df, baseline)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for (mode, dtype, gate), grp in data.groupby(["mode", "dtype", "gate"], sort=True):
        panels = sorted(grp[panel].dropna().unique(), key=str)
        if not panels:
            continue
        variants = variant_axes(grp, panel, x)
        grp = grp.assign(_variant=grp.apply(_variant, axis=1, axes=variants) if variants else "")
        models = panel == "tp" and grp.groupby("tp")["model"].nunique().max() > 1
        line_keys = ["backend"] + (["model"] if models else []) + (["_variant"] if variants else [])
        styles, legend = line_styles(grp[line_keys].astype(str), baseline)
        ncols = min(4, len(panels))
        nrows = -(-len(panels) // ncols)
        fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.8 * nrows), squeeze=False)
        vals = grp["speedup"]  # one y scale for every panel: log when the speedups span more than 20x
        log_y = bool(len(vals)) and vals.max() / max(vals.min(), 1e-12) > 20
        for ax, pv in zip(axes.flat, panels):
            sub = grp[grp[panel] == pv]
            places = _x_places(sub, x)
            for key, bgrp in sub.groupby(line_keys, sort=True, dropna=False):
                key = tuple(map(str, key if isinstance(key, tuple) else (key,)))
                backend = key[0]
                label = " · ".join(k for k in key if k)
                for _, seg in bgrp.groupby(x if places else (lambda _: 0), sort=True):
                    seg = seg.groupby("sequences", sort=False).agg(pos=(x, "first"), speedup=("speedup", "median"))
                    if places:
                        seg["pos"] = [places[s][0] for s in seg.index]
                    seg = seg.sort_values("pos")
                    ax.plot(seg["pos"], seg["speedup"], markersize=4, gid=label, **styles[key])
            if places:
                ax.set_xticks([p for p, _ in places.values()], [lab for _, lab in places.values()], rotation=60,
                              ha="right", fontsize=6)
            else:
                ax.set_xscale("log", base=2)
                ax.set_xlabel(x.replace("_", " "), fontsize=8)
            if log_y:
                ax.set_yscale("log")
            ax.axhline(1.0, color="grey", lw=0.6)
            ax.set_title(f"TP {key_value(pv)}" if panel == "tp" else str(pv), fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
        for ax in list(axes.flat)[len(panels):]:
            ax.set_visible(False)
        # One legend under the panels (a per-panel legend hides the lines of a small panel).
        finish_figure(fig, [], _title(mode, dtype, gate, grp, baseline), f"speedup vs {baseline}", legend)
        path = png_path(out_dir, "speedup", mode, dtype, f"gate-{gate}")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    if not written:
        raise QlabenchError("nothing to plot: no ok rows")
    return written


