"""Rich renderings of library results (kept apart from the computations in report.py)."""

from __future__ import annotations

import pandas as pd
from rich.markup import escape
from rich.table import Table

from qlabench.core.spec import Suite


def points_table(suite: Suite) -> Table:
    t = Table(title=f"{suite.name}: {len(suite.points)} points")
    cp = any(p.distributed for p in suite.points)
    for c in ("#", "backend", "mode", "heads", "sequences", "tokens", "K/V", "dtype", "gate", "h0") + (
            ("cp",) if cp else ()):
        t.add_column(c)
    for i, p in enumerate(suite.points):
        t.add_row(str(i), p.backend, p.mode, p.heads_label, p.layout_label, str(p.total_tokens), f"{p.K}/{p.V}",
                  p.dtype, p.gate, "yes" if p.initial_state else "no", *((p.cp_label or "-",) if cp else ()))
    return t


def speedup_rich_table(table: pd.DataFrame, baseline: str | None) -> Table:
    t = Table(title=f"median ms per call, speedup vs {baseline}")
    if table.empty:
        return t
    backends = [c for c in table.columns if c not in ("mode", "heads", "sequences", "dtype", "gate") and not c.endswith(" x")]
    for c in ("mode", "heads", "sequences", "dtype"):
        t.add_column(c)
    for b in backends:  # escaped: a distributed column is "flash_qla [cp2 inter]", not markup
        t.add_column(escape(b), justify="right")
    for _, r in table.iterrows():
        cells = [str(r["mode"]), str(r["heads"]), str(r["sequences"]), str(r["dtype"])]
        for b in backends:
            v, x = r[b], r[f"{b} x"]
            if v is None or (isinstance(v, float) and pd.isna(v)):
                cells.append("-")
            elif isinstance(v, str):
                cells.append(f"[red]{v}[/red]")
            else:
                cells.append(f"{v:.3f}" + (f" ({x:.2f}x)" if x is not None and not pd.isna(x) else ""))
        t.add_row(*cells)
    return t
