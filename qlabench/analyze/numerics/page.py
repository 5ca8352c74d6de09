"""The numerics page (`qlabench report` on a numerics folder, or `report --numerics DIR`): error against T
and against the gate regime per backend and tensor (log-log figures), the worst cases, and every point
outside tolerance. The numbers come from analyze/numerics.py; this module draws and writes them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from qlabench.analyze.numerics import table as nm  # noqa: E402
from qlabench.analyze.kit.figures import finish_figure, png_path  # noqa: E402
from qlabench.analyze.kit.tables import md_table  # noqa: E402
from qlabench.core.text import visible  # noqa: E402

PAGE = "numerics.md"
ERR_FORMAT = ".3g"


def _tensors(d: pd.DataFrame) -> list[str]:
    present = set(d["tensor"])
    return [t for t in nm.CHECKED_TENSORS if t in present]


def _panels(n: int):
    ncols = min(4, n)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.6 * ncols, 3.0 * nrows), squeeze=False)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat)[:n]


def _colors(backends) -> dict[str, str]:
    return {b: f"C{i % 10}" for i, b in enumerate(sorted(backends))}


def error_vs_t_figures(errs: pd.DataFrame) -> list[tuple[str, plt.Figure]]:
    """Per mode: a panel per tensor, error against total tokens (log-log), a line per backend (one
    sequence), hollow squares for packed varlen calls, the tolerance dashed."""
    base = nm.base_regime(errs)
    d = nm._select(errs, base)
    out = []
    colors = _colors(errs["backend"].unique())
    for mode, grp in d.groupby("mode", sort=True):
        if grp["total_tokens"].nunique() < 2:
            continue
        tensors = _tensors(grp)
        fig, axes = _panels(len(tensors))
        for ax, t in zip(axes, tensors):
            sub = grp[grp["tensor"] == t]
            for b, bs in sub.groupby("backend", sort=True):
                dense = bs[bs["layout"] == "dense"].groupby("total_tokens")["error"].max().sort_index()
                if not dense.empty:
                    ax.plot(dense.index, dense.values, "-o", color=colors[b], markersize=3, label=b)
                var = bs[bs["layout"] == "varlen"]
                if not var.empty:
                    ax.plot(var["total_tokens"], var["error"], "s", mfc="none", color=colors[b], markersize=6,
                            label=f"{b} (varlen)")
            ax.axhline(sub["tolerance"].iloc[0], color="red", ls="--", lw=0.8, label="tolerance")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(t, fontsize=9)
            ax.set_xlabel("tokens", fontsize=8)
            ax.grid(True, which="both", alpha=0.3)
        finish_figure(fig, axes, f"{mode}: relative L2 error vs float64 against T\n({base['dtype']}, {base['heads']}, "
                      f"K = {base['K']}, gate {base['gate']})")
        out.append((f"error_vs_T_{mode}", fig))
    return out


def error_vs_gate_figures(errs: pd.DataFrame) -> list[tuple[str, plt.Figure]]:
    """Per mode: a panel per tensor, error per gate regime (categorical x, log y), a marker per backend."""
    table = nm.error_vs_gate(errs)
    if table.empty:
        return []
    gates = [c for c in table.columns if c not in ("mode", "tensor", "backend", "T")]
    colors = _colors(errs["backend"].unique())
    out = []
    for mode, grp in table.groupby("mode", sort=True):
        tensors = [t for t in nm.CHECKED_TENSORS if t in set(grp["tensor"])]
        fig, axes = _panels(len(tensors))
        for ax, t in zip(axes, tensors):
            sub = grp[grp["tensor"] == t]
            for i, r in enumerate(sub.to_dict("records")):
                ys = [r[g] for g in gates]
                ax.plot(range(len(gates)), ys, "o", color=colors[r["backend"]], markersize=4, alpha=0.8,
                        label=r["backend"])
            ax.axhline(nm.tolerance(errs["dtype"].iloc[0], t), color="red", ls="--", lw=0.8, label="tolerance")
            ax.set_yscale("log")
            ax.set_xticks(range(len(gates)), gates, rotation=45, ha="right", fontsize=6)
            ax.set_title(t, fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
        finish_figure(fig, axes, f"{mode}: error per gate regime at T = {int(grp['T'].iloc[0])}")
        out.append((f"error_vs_gate_{mode}", fig))
    return out


def _fmt_errors(t: pd.DataFrame) -> dict[str, str]:
    return {c: ERR_FORMAT for c in t.columns if c.startswith("T=") or c in ("error",)} | {
        c: ERR_FORMAT for c in t.columns if c not in ("mode", "tensor", "backend", "T") and t[c].dtype == float}


def render(rows: pd.DataFrame, figures: dict[str, str], sources=()) -> str:
    """The page's markdown; `figures` maps a figure's stem to its file beside the page."""
    errs = nm.long_errors(rows)
    counts = ", ".join(f"{n} {s}" for s, n in rows["status"].value_counts().items())
    refs = ", ".join(sorted(set(errs["reference"].dropna()))) or "none"
    out = ["# Numerics: error against the reference, per backend", "",
           f"Results: {', '.join(f'`{s}`' for s in sources) or '(a DataFrame)'}; {len(rows)} rows ({counts}); "
           f"reference: {refs}. Error = relative L2 error of each tensor; tolerance = core/tolerances.py "
           "(per dtype and tensor); margin = tolerance / error.", "", f"**{nm.verdict(errs)}**", ""]

    def img(prefix: str) -> None:
        for stem, name in figures.items():
            if stem.startswith(prefix):
                out.extend([f"![{stem}]({name})", ""])

    base = nm.base_regime(errs)
    out += ["## Error against T", "",
            f"One sequence per call (lines) and packed varlen calls (squares), at {base.get('dtype')}, "
            f"{base.get('heads')}, K = {base.get('K')}, gate {base.get('gate')}.", ""]
    img("error_vs_T")
    t = nm.error_vs_t(errs)
    out += [md_table(t, _fmt_errors(t)) if not t.empty else "_No token sweep in these rows._\n"]
    out += ["## Error against the gate regime", ""]
    g = nm.error_vs_gate(errs)
    if g.empty:
        out += ["_No gate sweep in these rows._", ""]
    else:
        out += [f"At T = {int(g['T'].iloc[0])}, one sequence. `flashqla(zero=F,/S)`: zero-gate fraction F, "
                "g = logsigmoid(x) / S (S = 0.16: strong decay, g ~ -5); `zero=1`: no decay at all.", ""]
        img("error_vs_gate")
        out += [md_table(g.drop(columns="T"), _fmt_errors(g))]
    out += ["## Worst cases", "", "Per tensor, the point closest to its tolerance:", "",
            md_table(nm.worst_per_tensor(errs), {"error": ERR_FORMAT, "margin": ".1f"}),
            "The ten points whose worst tensor is closest to its tolerance:", "",
            md_table(nm.worst_points(errs), {"error": ERR_FORMAT, "margin": ".1f"})]
    over = nm.over_tolerance(errs)
    out += ["## Outside tolerance", ""]
    out += [md_table(over, {"error": ERR_FORMAT, "ratio": ".2f"},
                     ["backend", "mode", "dtype", "heads", "K", "sequences", "gate", "tensor", "error", "tolerance",
                      "ratio", "status"]) if not over.empty else f"None. {nm.verdict(errs)}\n"]
    ref = nm.refused(rows)
    if not ref.empty:
        out += ["## Points a backend refused or could not run", "", md_table(ref)]
    return "\n".join(out)


@dataclass(frozen=True)
class NumericsFiles:
    page: Path
    figures: tuple[Path, ...]


def write_numerics(rows: pd.DataFrame, out_dir: str | os.PathLike, sources=()) -> NumericsFiles:
    """Write the figures (PNG) and the page (numerics.md) into out_dir."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    errs = nm.long_errors(rows)
    written = {}
    for stem, fig in error_vs_t_figures(errs) + error_vs_gate_figures(errs):
        path = png_path(out_dir, stem)
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written[stem] = path.name
    page = out_dir / PAGE
    page.write_text(visible(render(rows, written, sources)))  # no control character reaches a page
    return NumericsFiles(page, tuple(out_dir / n for n in written.values()))


def is_numerics(rows: pd.DataFrame) -> bool:
    """Rows checked against float64 at full size, every checked one (a numerics folder)."""
    checked = rows["oracle"].dropna() if "oracle" in rows else pd.Series(dtype=object)
    return not checked.empty and checked.astype(str).str.startswith("fp64-full").all()
