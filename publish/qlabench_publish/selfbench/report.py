"""Rendering: the selfbench tables as markdown, and the report around them."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable

import pandas as pd

from qlabench.core.spec import Suite
from qlabench.core.text import md_text
from qlabench.store.files import portable_path
from qlabench_publish.selfbench.agreement import AGREEMENT_TOL
from qlabench_publish.selfbench.common import (
    FLASHQLA_REP_MS,
    FLASHQLA_REPLAYS,
    FLASHQLA_WARMUP_MS,
    TIMING_PROFILES,
)
from qlabench_publish.selfbench.cost import cost_table, phase_cost_table, point_cost_table, run_cost_table
from qlabench_publish.selfbench.precision import GOAL_SPREAD, STRETCH_SPREAD


def _fmt(v, digits: int = 4) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return md_text(v)


def markdown_table(df: pd.DataFrame, formats: dict[str, Callable] | None = None) -> str:
    """A GitHub markdown table (no tabulate dependency); `formats` maps a column to a formatter."""
    if df.empty:
        return "_(no rows)_\n"
    formats = formats or {}
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for _, r in df.iterrows():
        lines.append("| " + " | ".join(formats.get(c, _fmt)(r[c]) for c in cols) + " |")
    return "\n".join(lines) + "\n"


def pct(v) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * v:.2f}%"


def render_precision(table: pd.DataFrame, runs_wanted: int) -> str:
    if table.empty:  # no run completed yet (a --max-time that ran out before the first)
        return f"No completed run to report on yet (of {runs_wanted} fresh-process runs per timer asked for).\n"
    t = table.rename(columns={"median_of_medians_ms": "median ms", "range_rel": "(max-min)/median",
                              "cv": "stdev/mean"})
    t = t[["timer", "point", "runs_ok", "median ms", "min_ms", "max_ms", "(max-min)/median", "stdev/mean",
           "verdict", "timer_used"]]
    counts = table["verdict"].value_counts().to_dict() if not table.empty else {}
    return (f"Spread of each point's median across {runs_wanted} fresh-process runs. Goal "
            f"(max-min)/median <= {pct(GOAL_SPREAD)}, stretch <= {pct(STRETCH_SPREAD)}; verdicts: "
            f"{', '.join(f'{v} {k}' for k, v in counts.items()) or 'none'}.\n\n"
            + markdown_table(t, {"(max-min)/median": pct, "stdev/mean": pct}))


def render_cost(medians: pd.DataFrame) -> str:
    return ("Seconds per point, compile excluded: (sweep wall time - sum of compile_s) / points, and the "
            "sampling phase alone (`sampling_s`). Profile `suite` is the suite's [timing]; `flashqla` "
            f"samples for a fixed {TIMING_PROFILES['flashqla']['max_time_s']:g} s per point, as tilelang's "
            f"cudagraph do_bench does with FlashQLA's warmup={FLASHQLA_WARMUP_MS:g} ms, rep={FLASHQLA_REP_MS:g} ms "
            f"({FLASHQLA_REPLAYS} replays of a ~rep-ms graph).\n\n"
            + markdown_table(cost_table(medians)) + "\nPer run:\n\n" + markdown_table(run_cost_table(medians))
            + "\nMedian sampling seconds per point:\n\n" + markdown_table(point_cost_table(medians))
            + _phase_section(medians))


def _phase_section(medians: pd.DataFrame) -> str:
    t = phase_cost_table(medians)
    if t.empty:
        return ""
    return ("\nMean seconds per point in each phase (the rows' `phases_s`; the rest of `run wall / point` is "
            "worker start-up and writing):\n\n" + markdown_table(t))


def render_agreement(table: pd.DataFrame | None, skipped: str | None) -> str:
    if skipped:
        return f"Not run: {skipped}.\n"
    n_ok = int(table["agrees"].fillna(False).astype(bool).sum())
    n = int(table["agrees"].notna().sum())
    return (f"GraphTimer median vs `triton.testing.do_bench_cudagraph(rep=..., return_mode=\"median\")`; goal "
            f"|ratio - 1| <= {pct(AGREEMENT_TOL)}: {n_ok} of {n} measured points agree. `tilelang_ms`/`tilelang_s` "
            "are FlashQLA's own call (tilelang do_bench, cudagraph backend, mean) and its wall time.\n\n"
            + markdown_table(table))


def measured_where(medians: pd.DataFrame) -> tuple[str, str, dt.datetime | None]:
    """Host, device and time of the first measurement in the runs, from their rows: a report rebuilt
    elsewhere (`--report-only`, on results fetched from a GPU host) must name where they were measured."""
    if medians.empty:
        return "-", "-", None
    first = medians.sort_values("timestamp").iloc[0]
    return str(first["host"]), str(first["device"]), dt.datetime.fromisoformat(str(first["timestamp"]))


def render_report(sections: dict[str, str], *, host: str, device: str, suite: Suite, command: str,
                  when: dt.datetime | None = None, load: str | None = None) -> str:
    when = when or dt.datetime.now(dt.timezone.utc)
    head = (f"# qlabench selfbench: {suite.name}\n\n"
            f"- host: {host}\n- device: {device}\n- date (UTC): {when.strftime('%Y-%m-%d %H:%M')}\n"
            f"- suite: `{portable_path(suite.path)}` ({len(suite.points)} points)\n- command: `{command}`\n"
            + (f"- host load average (1/5/15 min): {load}\n" if load else ""))
    return head + "".join(f"\n## {title}\n\n{body}" for title, body in sections.items())
