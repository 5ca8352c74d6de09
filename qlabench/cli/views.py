"""Rich renderings of library results: the speedup tables and the sweep summary (kept apart from the
computations in analyze/kit/speedups.py). The listings of suites, backends and points are in listings.py."""

from __future__ import annotations

import pandas as pd
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from qlabench.analyze.evidence.records import records
from qlabench.core.text import md_text
from qlabench.core.dtypes import SHORT_DTYPE

_LABELS = ("mode", "heads", "sequences", "dtype", "gate")
_NOT_BACKENDS = _LABELS + ("gate_short", "device", "runs")  # the table's other columns (analyze/kit/speedups.py)

def _backends(table: pd.DataFrame) -> list[str]:
    return [c for c in table.columns if c not in _NOT_BACKENDS and not c.endswith((" x", " noise", " err", " e", " over", " mem"))]

def _devices(table: pd.DataFrame) -> int:
    """The GPU models of the table's rows: its device column is shown where there are several."""
    return table["device"].nunique() if "device" in table.columns else 0


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and pd.isna(v))

def _cell(r, b: str, sep: str = " ", short: bool = False) -> str:
    """'15.156 (216.67x) ~ 0.22 oracle@256 † +48 MiB': the median, the speedup, the row's noise mark, its error
    mark (analyze/evidence/accuracy.py; over tolerance: the mark instead of the speedup; `short`: 'e0.22†', the
    reference said under the table), the call's extra device memory where measured; a status word; '-' where the backend has no row. `sep` goes between
    the median and the rest (a newline keeps terminal columns narrow)."""
    v, x, mark = r[b], r[f"{b} x"], r.get(f"{b} noise") or ""
    err = r.get(f"{b} e" if short else f"{b} err") or ""
    if _missing(v):
        return "-"
    if isinstance(v, str):
        return v + (sep + err if err and r.get(f"{b} over") else "")
    rest = " ".join(filter(None, [f"({x:.2f}x)" if not _missing(x) else "", mark]))
    mem = r.get(f"{b} mem") or ""  # the extra device memory of the call, where measured
    return f"{v:.3f}" + "".join(sep + part for part in (rest, err, mem) if part)

def speedup_title(baseline: str | None) -> str:
    return f"median ms per call, speedup vs {baseline}"

def speedup_rich_table(table: pd.DataFrame, baseline: str | None) -> Table:
    t = Table(title=escape(speedup_title(baseline)))
    if table.empty:
        return t
    backends = _backends(table)
    # Folded, never cut with '…': at 80 columns 'qwen3.5-397b' and 'naive-recurrent' stay readable.
    labels = ["mode", "heads", "sequences", "dtype", "gate"] + (["device"] if _devices(table) > 1 else [])
    for c in labels:
        t.add_column(c, overflow="fold")
    for b in backends:  # escaped: a distributed column is "flash_qla [cp2 inter]", not markup
        t.add_column(escape(b), justify="right", overflow="fold")
    for r in records(table):  # (a pandas Series per row cost twice the rest of the table)
        dtype = str(r["dtype"])
        cells = [str(r["mode"]), str(r["heads"]), str(r["sequences"]), SHORT_DTYPE.get(dtype, dtype),
                 escape(str(r.get("gate_short", r["gate"])))]
        cells += [escape(str(r["device"]))] if "device" in labels else []
        for b in backends:
            c = _cell(r, b, sep="\n", short=True)
            bad = isinstance(r[b], str) or bool(r.get(f"{b} over"))
            cells.append(f"[red]{escape(c)}[/red]" if bad else escape(c))
        t.add_row(*cells)
    return t

def speedup_markdown(table: pd.DataFrame, baseline: str | None) -> str:
    """The speedup table as a GitHub markdown table (no extra packages)."""
    if table.empty:
        return ""
    backends = _backends(table)
    labels = list(_LABELS) + (["device"] if _devices(table) > 1 else [])
    head = labels + backends
    lines = ["| " + " | ".join(map(md_text, head)) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in records(table):  # (a pandas Series per row cost twice the rest of the table)
        cells = [str(r[c]) for c in labels] + [_cell(r, b) for b in backends]
        lines.append("| " + " | ".join(map(md_text, cells)) + " |")
    return f"{md_text(speedup_title(baseline))}\n\n" + "\n".join(lines)

def print_marks(console: Console, df: pd.DataFrame, numerics: pd.DataFrame | None = None,
                checks: list | None = None) -> None:
    """The lines under a speedup table: how many points met their noise target (what ~ and ! mean), and
    how they were checked (what the err marks mean: analyze/evidence/accuracy.py)."""
    from qlabench.analyze.kit.speedups import noise_summary

    line = noise_summary(df)
    if line:
        console.print(escape(line))
    for line in check_lines(df, numerics, checks):
        console.print(escape(line), highlight=False)

def check_lines(df: pd.DataFrame, numerics: pd.DataFrame | None = None, checks: list | None = None) -> list[str]:
    """How the ok rows were checked (full size, reduced only, over tolerance) and what the err marks mean;
    `checks`: evidence_of(df, numerics), one per row of `df`, where the caller has it already."""
    from qlabench.analyze.evidence.accuracy import LEGEND, evidence_of, evidence_summary

    ok = (df["status"] == "ok").to_numpy()
    mine = [c for c, keep in zip(checks, ok) if keep] if checks is not None else evidence_of(df[ok], numerics)
    line = evidence_summary(mine)
    return [line, LEGEND] if line else []

def print_sweep_summary(console: Console, res, baseline: str | None, out, warmup_s: float = 0.0) -> None:
    """What `run sweep` prints after a sweep: skipped and unrun points, the speedup table, the row counts, and
    last, where the time went (`time_line`)."""
    from qlabench.analyze.kit.speedups import pick_baseline, speedup_table

    if res.resumed:
        console.print(f"{res.resumed} points already recorded ok in {out}: skipped")
    if not res.complete:
        console.print(f"[yellow]time budget reached:[/yellow] {res.not_run} points not run; "
                      "run again with --resume to continue")
    if not res.rows:
        console.print("no points run")
        return
    df = pd.DataFrame([r.as_dict() for r in res.rows])
    base = pick_baseline(df, baseline)
    from qlabench.cli.records import fitted

    console.print(fitted(console, speedup_rich_table(speedup_table(df, base), base), keys=5))  # no header cut
    print_marks(console, df)
    counts = df["status"].value_counts().to_dict()
    console.print(f"{len(df)} rows ({', '.join(f'{v} {k}' for k, v in counts.items())}) on {res.device} "
                  f"in {res.wall_s:.1f}s -> {res.path}")
    from qlabench.cli.run_time import time_line

    console.print(time_line(res.time_breakdown(warmup_s)), highlight=False)

def serving_rich_table(ranges: pd.DataFrame) -> Table:
    """The serving page at a glance: per group, the winners by batch range and the winner's share of the
    HBM limit at the largest batch (analyze/serving/winners.py: winner_ranges)."""
    from qlabench.analyze.serving.frame import hbm_text

    t = Table(title="serving: fastest correct variant by batch; % of the HBM limit at the largest batch")
    for c, kw in (("group", {}), ("winners by batch", {}), ("largest", {"justify": "right"}),
                  ("ms", {"justify": "right"}), ("% HBM", {"justify": "right"})):
        t.add_column(c, overflow="fold", **kw)
    for r in ranges.itertuples():
        pct = hbm_text(r.pct_hbm_at_largest, getattr(r, "l2_at_largest", None))
        ms = "-" if pd.isna(r.ms_at_largest) else f"{r.ms_at_largest:.4f}"
        winners = escape(str(r.winners)).replace("; ", "\n")  # one batch range a line
        t.add_row(escape(str(r.group)), winners, str(r.largest_batch or "-"), ms, pct)
    return t
