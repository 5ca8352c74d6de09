"""A table too wide for the console, printed as one block per row: a piped `show` or `compare` (80 columns)
reads whole instead of folding a word or a syllable per line."""

from __future__ import annotations

from rich.console import Console, Group
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text


def fitted(console: Console, table: Table, keys: int):
    """`table` as it is where it fits the console's width; else one block per row (a heading of its first
    `keys` cells joined by ' · ', then a '  column  value' line per other cell), which reads at any width:
    a wide table folded into 80 columns (a pipe, a narrow terminal) prints a word or a syllable a line."""
    if not table.columns:
        return table
    # Measured unbounded (a table measures itself within the console's width, so it always "fits").
    natural = Measurement.get(console, console.options.update_width(100_000), table).maximum
    if natural <= console.width:
        return table
    names = [_plain(c.header) for c in table.columns]
    cells = [list(c.cells) for c in table.columns]
    width = max((len(n) for n in names[keys:]), default=0)
    out = [Text(str(table.title), style="bold")] if table.title else []
    for i in range(table.row_count):
        out.append(Text(" · ".join(p for p in (_plain(cells[c][i]) for c in range(keys)) if p), style="bold"))
        for c in range(keys, len(names)):
            value = Text.from_markup(cells[c][i]) if isinstance(cells[c][i], str) else Text(_plain(cells[c][i]))
            if value.plain.strip():
                # one line: the cell's own line breaks become spaces, its colour (a failed status) kept
                flat = Text(" ".join(value.plain.split()), style=value.spans[0].style if value.spans else "")
                out.append(Text(f"  {names[c].ljust(width)}  ") + flat)
    return Group(*out)


def _plain(cell) -> str:
    text = Text.from_markup(cell).plain if isinstance(cell, str) else str(cell)
    return " ".join(text.split())
