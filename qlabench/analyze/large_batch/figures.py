"""The large-batch figures (matplotlib Figures, no pyplot), a panel per heads and token count, the number of
sequences the tokens come in on the x axis: every ok backend's time, and the kernels of the split backend (its
extra passes, its fused forward, their sum) beside the fused backend's. One colour per backend, the same on every
page (kit/backends.py). A row that is not ok leaves a gap: it is never drawn as a time."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from qlabench.analyze.kit.backends import backend_style, in_view_order
from qlabench.analyze.kit.figures import finish_figure, panel_grid
from qlabench.analyze.large_batch.study import LargeBatch


def _panels(d: pd.DataFrame) -> list[tuple]:
    keys = d[["device", "family", "tokens"]].drop_duplicates()
    return [tuple(k) for k in keys.itertuples(index=False, name=None)]


def _title(key: tuple, several_devices: bool) -> str:
    device, family, tokens = key
    return f"{device}: {family}, {tokens} tokens" if several_devices else f"{family}, {tokens} tokens"


def _x_axis(ax, seqs) -> None:
    seqs = sorted(int(s) for s in set(seqs))
    ax.set_xscale("log", base=2)
    ax.set_xticks(seqs, [str(s) for s in seqs], fontsize=7)
    ax.minorticks_off()
    ax.set_xlabel("sequences in the batch (equal tokens)", fontsize=8)
    ax.grid(True, which="both", alpha=0.3)


def time_figure(s: LargeBatch) -> Figure | None:
    """Median ms against the sequences in the batch, a line per backend; None where nothing is ok."""
    ok = s.rows[s.rows["status"] == "ok"]
    if ok.empty:
        return None
    panels = _panels(ok)
    several = ok["device"].nunique() > 1
    fig, axes = panel_grid(len(panels), 3, 4.4)
    for ax, key in zip(axes, panels):
        p = ok[(ok["device"] == key[0]) & (ok["family"] == key[1]) & (ok["tokens"] == key[2])]
        for backend in in_view_order(p["backend"]):
            b = p[p["backend"] == backend].sort_values("num_seqs")
            st = backend_style(backend)
            ax.plot(b["num_seqs"], b["median_ms"], "-", color=st["color"], marker=st["marker"], ms=4, lw=1.2,
                    label=backend)
        _x_axis(ax, p["num_seqs"])
        ax.set_ylim(bottom=0)
        ax.set_title(_title(key, several), fontsize=8)
    finish_figure(fig, axes, "Median ms per call at equal tokens, against the sequences they come in",
                  "median ms per call")
    return fig


def kernel_figure(s: LargeBatch) -> Figure | None:
    """The split backend's kernel time (its extra passes, its fused forward, their sum) and the fused backend's,
    in us, against the sequences in the batch; None where no split row was traced."""
    k = s.kernels
    if k.empty or "split us" not in k or not k["split us"].notna().any():
        return None
    k = k[k["split us"].notna()]
    panels = _panels(k)
    several = k["device"].nunique() > 1
    split, fused = backend_style(str(s.split)), backend_style(str(s.fused))
    lines = (("kernel sum us", "-", split, f"{s.split}: all its kernels"),
             ("fused fwd us", "--", split, f"{s.split}: its fused forward"),
             ("split us", ":", split, f"{s.split}: its extra passes"),
             ("fused kernel us", "-", fused, f"{s.fused}: its kernels"))
    fig, axes = panel_grid(len(panels), 3, 4.4)
    for ax, key in zip(axes, panels):
        p = k[(k["device"] == key[0]) & (k["family"] == key[1]) & (k["tokens"] == key[2])].sort_values("num_seqs")
        for col, ls, st, label in lines:
            v = p[p[col].notna()]
            if not v.empty:
                ax.plot(v["num_seqs"], v[col], ls, color=st["color"], marker=st["marker"], ms=4, lw=1.2, label=label)
        _x_axis(ax, p["num_seqs"])
        ax.set_ylim(bottom=0)
        ax.set_title(_title(key, several), fontsize=8)
    finish_figure(fig, axes, "Kernel time of one traced call at equal tokens: the split's passes beside the fused "
                  "kernels", "us per call (traced)")
    return fig


def large_batch_figures(s: LargeBatch) -> list[tuple[str, Figure]]:
    """[(stem, Figure)]: 'large_batch_time' and 'large_batch_kernels', each where it has something to draw."""
    out = []
    for stem, make in (("large_batch_time", time_figure), ("large_batch_kernels", kernel_figure)):
        fig = make(s)
        if fig is not None:
            out.append((stem, fig))
    return out
