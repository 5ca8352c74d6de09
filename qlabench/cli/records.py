"""A table too wide for the console, printed as one block per row: a piped `show` or `compare` (80 columns)
reads whole instead of folding a word or a syllable per line."""

from __future__ import annotations

from rich.console import Console, Group
from rich.cells import cell_len
from rich.measure import Measurement
from rich.table import Table
from rich.text import Span, Text


def fitted(console: Console, table: Table, keys: int):
    """`table` as it is where it fits the console's width; else one block per row (a heading of its first
    `keys` cells joined by ' · ', then a '  column  value' line per other cell), which reads at any width:
    a wide table folded into 80 columns (a pipe, a narrow terminal) prints a word or a syllable a line."""
    if not table.columns:
        return table
    if not _wider_than(table, console.width):
        # Measured unbounded (a table measures itself within the console's width, so it always "fits").
        natural = Measurement.get(console, console.options.update_width(100_000), table).maximum
        if natural <= console.width:
            return table
    names = [_plain(c.header) for c in table.columns]
    cells = [list(c.cells) for c in table.columns]
    width = max((len(n) for n in names[keys:]), default=0)
    heads = [f"  {n.ljust(width)}  " for n in names]
    out = [Text(str(table.title), style="bold")] if table.title else []
    for i in range(table.row_count):
        out.append(Text(" · ".join(p for p in (_plain(cells[c][i]) for c in range(keys)) if p), style="bold"))
        for c in range(keys, len(names)):
            value = Text.from_markup(cells[c][i]) if isinstance(cells[c][i], str) else Text(_plain(cells[c][i]))
            if value.plain.strip():
                # one line: the cell's own line breaks become spaces, its colour (a failed status) kept
                flat, style = " ".join(value.plain.split()), value.spans[0].style if value.spans else ""
                at = len(heads[c])
                out.append(Text(heads[c] + flat, spans=[Span(at, at + len(flat), style)] if style else None))
    # One text of many lines prints as the lines would, one by one (each wrapped to the console), for less CPU.
    return Text("\n").join(out) if out else Group()


def _wider_than(table: Table, width: int) -> bool:
    """Whether the table's natural width surely exceeds `width`: its columns' widest lines alone (a table adds
    padding and borders to them) already do. Rich measuring a long table cell by cell took a quarter of a
    second of `show`, only to learn that it does not fit 80 columns; this stops at the first columns that
    say so, and the measurement decides every other case."""
    if table.width is not None:
        return False  # a table of a set width measures as that width
    total = 0
    for column in table.columns:
        if column.width is not None or column.max_width is not None:
            continue  # measured as its set width: counted as nothing, so the sum stays a lower bound
        heading = (column.header,) if table.show_header else ()
        total += max((_line_width(cell) for cell in (*heading, *column.cells)), default=0)
        if total > width:
            return True
    return False


def _line_width(cell) -> int:
    """The cells its widest line takes, as rich measures a cell: its markup rendered (emoji codes too)."""
    text = Text.from_markup(cell) if isinstance(cell, str) else cell if isinstance(cell, Text) else None
    if text is None:
        return 0  # a renderable of another kind: counted as nothing, so the bound stays a lower bound
    return max((cell_len(line) for line in text.plain.splitlines()), default=0)  # as rich's Text measures


def _plain(cell) -> str:
    text = Text.from_markup(cell).plain if isinstance(cell, str) else str(cell)
    return " ".join(text.split())
