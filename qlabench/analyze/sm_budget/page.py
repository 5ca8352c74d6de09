"""The SM-budget page (sm-budget.md) and its PNGs. Nothing here computes a number: the tables come from the
BudgetStudy (study.py), the figures from figures.py."""

from __future__ import annotations

import os

import pandas as pd

from qlabench.analyze.kit.figures import PageFiles, write_page
from qlabench.analyze.sm_budget.figures import budget_figures
from qlabench.analyze.sm_budget.study import SCALING_SLACK, BudgetStudy
from qlabench.analyze.kit.tables import md_table

PAGE = "sm-budget.md"
FORMATS = {"ms": ".4f", "auto ms": ".4f", "nocp ms": ".4f", "forcecp ms": ".4f", "margin": ".2f", "regret": ".2f",
           "extra MiB": ".1f", "outside MiB": ".1f"}

BANDWIDTH_NOTE = (
    "A green context takes SMs away and nothing else: a partitioned H200 keeps the H200's HBM bandwidth, L2 "
    "and clocks. Its times predict a smaller GPU's SM-bound behaviour (how a kernel that fills few SMs, or an "
    "intra-card CP split made for 132 SMs, fares on fewer), not its memory-bound one: a laptop or desktop GPU "
    "with fewer SMs also has less bandwidth and a smaller L2.")


def _formats(df: pd.DataFrame) -> dict[str, str]:
    return {c: FORMATS.get(c, ".4f") for c in df.columns
            if c in FORMATS or (c.endswith(" SMs") and pd.api.types.is_numeric_dtype(df[c]))}


def _table(df: pd.DataFrame) -> str:
    return md_table(df, _formats(df))


def regret_lines(study: BudgetStudy) -> list[str]:
    """Per library and SM count, the median and worst regret of its auto CP over its problems."""
    r = study.regret
    if r.empty:
        return ["No library's auto and pinned CP settings were both timed at a budget here."]
    out = []
    for (library, sms), g in r.groupby(["library", "SMs"], sort=True):
        worst = g.loc[g["regret"].idxmax()]
        n = f"{len(g)} problem{'s' * (len(g) != 1)}"
        if worst["regret"] > 1:
            tail = f"worst {worst['regret']:.2f}x ({worst['problem']}: {worst['best pinned']} is faster)"
        else:
            tail = "its own choice is never slower than a pinned setting here"
        out.append(f"- {library} at {sms} SMs: median regret {g['regret'].median():.2f}x over {n}; {tail}")
    return out


def render(study: BudgetStudy, figures: dict[str, str], command: str | None = None) -> str:
    lines = ["# Kernels on a share of the GPU: SM budgets", ""]
    if command:
        lines += [f"Written by `{command}` from {', '.join(study.sources) or 'the rows given'}.", ""]
    lines += [study.summary_line() + ".", "",
              "Each row ran on a CUDA green context of the SMs it was granted (`sm_granted`); the whole GPU is the "
              "device's SM count. The libraries do not see the budget (`multi_processor_count` stays the device's), "
              "so their automatic CP plans for the whole GPU. docs/SM-BUDGET.md says how the partition is made and "
              "checked.", "", BANDWIDTH_NOTE, "",
              "## The winner per budget", "",
              "The fastest ok backend of each problem at each SM count; `extra MiB`: the device memory its call "
              "takes beyond its inputs and outputs; `margin`: the runner-up's time over the winner's; `tie: A, B`: every "
              "backend within the rows' measured noise of the fastest (none of them is called faster).", "",
              _table(study.winners),
              "## Each library's auto CP against its pinned settings", "",
              "`regret` = the library's own choice (auto) over the best of its pinned settings (-nocp, -forcecp) "
              "at the same SM count: above 1, the plan it made for the whole GPU loses on this share (a regret within a "
              "few percent of 1 is within the rows' noise).", "",
              *regret_lines(study), "", _table(study.regret),
              "## Time against SMs", "",
              f"`saturates at`: the fewest SMs at which a backend is within {SCALING_SLACK:.0%} of its time on the "
              "most SMs measured; more SMs do not help it, so it is about as many as the kernel can use. `extra "
              "MiB` / `outside MiB`: the most device memory its calls took beyond their inputs and outputs, "
              "through torch's allocator / outside it.", ""]
    for stem, name in figures.items():
        lines += [f"![{stem}]({name})", ""]
    lines += [_table(study.scaling)]
    bad = study.rows[study.rows["status"] != "ok"]
    lines += ["## Rows that are not ok", "",
              "A row whose library escaped its budget (launched kernels off the green context's stream, or "
              "changed the current CUDA context) is an error: its time would be a whole-GPU time.", "",
              _table(bad[["problem", "backend", "sms", "status", "reason"]].rename(columns={"sms": "SMs"}))
              if not bad.empty else "_(none)_\n"]
    return "\n".join(lines)


def write_budget_page(study: BudgetStudy, out_dir: str | os.PathLike, command: str | None = None) -> PageFiles:
    """Write the figures as PNG and the page (sm-budget.md) into out_dir."""
    return write_page(out_dir, PAGE, budget_figures(study), "sm_budget_*.png",
                      lambda written: render(study, written, command))
