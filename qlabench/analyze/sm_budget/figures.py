"""The time-vs-SMs figures of the SM-budget study (matplotlib Figures, no pyplot): per mode, a panel per
problem, a line per backend, median ms against the SMs granted. Where a line flattens is how many SMs that
kernel can use; where it keeps falling to the whole GPU, it is SM-bound throughout."""

from __future__ import annotations


import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

from qlabench.analyze.kit.figures import finish_figure, panel_grid
from qlabench.analyze.sm_budget.study import BudgetStudy

MARKERS = "osD^v<>ph*"


def budget_figures(study: BudgetStudy) -> list[tuple[str, Figure]]:
    """[(stem, Figure)]: one 'sm_budget_time_<mode>' figure per mode with an ok row at two SM counts or more."""
    ok = study.rows[study.rows["status"] == "ok"]
    styles = {b: {"color": f"C{i % 10}", "marker": MARKERS[i % len(MARKERS)]}
              for i, b in enumerate(sorted(ok["backend"].unique()))}
    out = []
    for mode, d in ok.groupby("mode", sort=True):
        if d["sms"].nunique() > 1:
            out.append((f"sm_budget_time_{mode}", _figure(d, str(mode), styles)))
    return out


def _figure(d: pd.DataFrame, mode: str, styles: dict) -> Figure:
    problems = sorted(d["problem"].unique())
    fig, axes = panel_grid(len(problems), 3, 4.6)
    for ax, problem in zip(axes, problems):
        p = d[d["problem"] == problem]
        for backend, b in p.groupby("backend", sort=True):
            b = b.sort_values("sms")
            st = styles[backend]
            ax.plot(b["sms"], b["median_ms"], "-", color=st["color"], marker=st["marker"], ms=4, lw=1.2, label=backend)
        sms = sorted(int(s) for s in p["sms"].unique())
        ax.set_xticks(sms, [str(s) for s in sms], fontsize=7)
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_title(problem.removeprefix(f"{mode} "), fontsize=8)
        ax.set_xlabel("SMs granted", fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
    finish_figure(fig, axes[: len(problems)], f"{mode}: median ms per call against the SMs it may use",
                  "median ms per call (log)")
    return fig
