"""Rich renderings of library results (kept apart from the computations in report.py)."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from qlabench.core.spec import Suite


def points_table(suite: Suite, limit: int | None = None, width: int | None = None):
    """The suite's first `limit` points: a table, or below 120 columns (`width`) one line per point, never cut."""
    cp = any(p.distributed for p in suite.points)
    if width is not None and width < 120:
        from rich.console import Group
        from rich.text import Text

        w = len(str(len(suite.points) - 1))
        lines = [Text(f"{i:>{w}}  {p.label()} K/V {p.K}/{p.V} tok {p.total_tokens}"
                      + (" h0" if p.initial_state else "")) for i, p in enumerate(suite.points[:limit])]
        return Group(Text(f"{suite.name}: {len(suite.points)} points", style="italic"), *lines)
    t = Table(title=f"{suite.name}: {len(suite.points)} points")
    for c in ("#", "backend", "mode", "heads", "sequences", "tokens", "K/V", "dtype", "gate", "h0") + (
            ("cp",) if cp else ()):
        t.add_column(c, overflow="fold")  # never '…': cut labels made different points look identical
    for i, p in enumerate(suite.points[:limit]):
        t.add_row(str(i), p.backend, p.mode, p.heads_label, p.layout_label, str(p.total_tokens), f"{p.K}/{p.V}",
                  p.dtype, p.gate_label, "yes" if p.initial_state else "no", *((p.cp_label or "-",) if cp else ()))
    return t


_LABELS = ("mode", "heads", "sequences", "dtype", "gate")


def _backends(table: pd.DataFrame) -> list[str]:
    return [c for c in table.columns if c not in _LABELS + ("gate_short",) and not c.endswith((" x", " noise"))]


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and pd.isna(v))


def _cell(r, b: str, sep: str = " ") -> str:
    """'15.156 (216.67x) ~': the median, the speedup and the row's noise mark; a status word; '-' where the
    backend has no row. `sep` goes between the median and the rest (a newline keeps terminal columns narrow)."""
    v, x, mark = r[b], r[f"{b} x"], r.get(f"{b} noise") or ""
    if _missing(v):
        return "-"
    if isinstance(v, str):
        return v
    rest = " ".join(filter(None, [f"({x:.2f}x)" if not _missing(x) else "", mark]))
    return f"{v:.3f}" + (sep + rest if rest else "")


def speedup_title(baseline: str | None) -> str:
    return f"median ms per call, speedup vs {baseline}"


def speedup_rich_table(table: pd.DataFrame, baseline: str | None) -> Table:
    t = Table(title=speedup_title(baseline))
    if table.empty:
        return t
    backends = _backends(table)
    # Folded, never cut with '…': at 80 columns 'qwen3.5-397b' and 'naive-recurrent' stay readable.
    for c in ("mode", "heads", "sequences", "dtype", "gate"):
        t.add_column(c, overflow="fold")
    for b in backends:  # escaped: a distributed column is "flash_qla [cp2 inter]", not markup
        t.add_column(escape(b), justify="right", overflow="fold")
    for _, r in table.iterrows():
        dtype = str(r["dtype"])
        cells = [str(r["mode"]), str(r["heads"]), str(r["sequences"]), _SHORT_DTYPE.get(dtype, dtype),
                 escape(str(r.get("gate_short", r["gate"])))]
        for b in backends:
            c = _cell(r, b, sep="\n")
            cells.append(f"[red]{c}[/red]" if isinstance(r[b], str) else escape(c))
        t.add_row(*cells)
    return t


def speedup_markdown(table: pd.DataFrame, baseline: str | None) -> str:
    """The speedup table as a GitHub markdown table (no extra packages)."""
    if table.empty:
        return ""
    backends = _backends(table)
    head = ["mode", "heads", "sequences", "dtype", "gate"] + backends
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for _, r in table.iterrows():
        cells = [str(r[c]) for c in _LABELS] + [_cell(r, b) for b in backends]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return f"{speedup_title(baseline)}\n\n" + "\n".join(lines)


def print_marks(console: Console, df: pd.DataFrame) -> None:
    """The noise line under a speedup table: how many points met their target, what ~ and ! mean."""
    from qlabench.analyze.report import noise_summary

    line = noise_summary(df)
    if line:
        console.print(escape(line))


def print_sweep_summary(console: Console, res, baseline: str | None, out) -> None:
    """What `run sweep` prints after a sweep: skipped and unrun points, the speedup table, the row counts."""
    from qlabench.analyze.report import pick_baseline, speedup_table

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
    console.print(speedup_rich_table(speedup_table(df, base), base))
    print_marks(console, df)
    counts = df["status"].value_counts().to_dict()
    console.print(f"{len(df)} rows ({', '.join(f'{v} {k}' for k, v in counts.items())}) on {res.device} "
                  f"in {res.wall_s:.1f}s -> {res.path}")


_SHORT_DTYPE = {"float64": "fp64", "float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}


def backends_table(backends: Iterable, width: int | None = None):
    """Every backend, available or not, with the reason (or its description).

    Below 120 columns (`width`) the notes leave the table for a list under it, one line per backend at
    the full width, instead of a column squeezed to a word per line.
    """
    from rich.console import Group
    from rich.text import Text

    notes: list[Text] = []
    wide = width is None or width >= 120
    t = Table(title="qlabench backends")
    t.add_column("backend", no_wrap=True)
    t.add_column("available", no_wrap=True)
    t.add_column("modes")
    t.add_column("dtypes")
    t.add_column("devices")
    t.add_column("cp")
    if wide:
        t.add_column("notes", overflow="fold")
    for b in backends:
        ok, why = b.available()
        note = why if not ok else b.description
        if b.first_use_note():
            note += "; " + b.first_use_note()
        if b.testing:
            note = "(test backend) " + note
        # A family's `family:member` name (the layer backends) breaks after its colon: the column stays
        # as narrow as the longest member.
        cells = [b.name.replace(":", ":\n", 1), "[green]yes[/green]" if ok else "[red]no[/red]",
                 " ".join(sorted(b.modes)), " ".join(_SHORT_DTYPE[d] for d in sorted(b.dtypes)),
                 " ".join(sorted(b.devices)), " ".join(b.cp_modes)]
        if wide:
            t.add_row(*cells, escape(note))
        else:
            t.add_row(*cells)
            notes.append(Text.assemble((b.name, "bold"), ": ", note))
    return t if wide else Group(t, *notes)


def suites_table(entries: Iterable[tuple[str, int | None, str]]) -> Table:
    """(name, point count or None when invalid, description or the reason it is invalid) per suite."""
    t = Table(title="qlabench suites")
    for c in ("suite", "points", "description"):
        t.add_column(c)
    for name, count, text in entries:
        t.add_row(name, "[red]invalid[/red]" if count is None else str(count), text)
    return t
