"""A table too wide for the console becomes one block per row; the quick width bound never changes that choice."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from qlabench.cli.records import _wider_than, fitted

# Cells as the views write them: escaped markup, colour, line breaks, an emoji code, wide characters.
CELLS = ["0.123\n(1.00x) ~", "[red]error[/red]", r"flash_qla \[cp2 inter]", ":thumbs_up: ok", "全角の名前",
         "oracle@256 †", "", "qwen3.5-397b TP8 (h2/8)"]


def _table(n_columns: int, n_rows: int) -> Table:
    t = Table(title="t")
    for c in range(n_columns):
        t.add_column(f"col{c}", overflow="fold")
    for r in range(n_rows):
        t.add_row(*(CELLS[(r + c) % len(CELLS)] for c in range(n_columns)))
    return t


def _natural(table: Table) -> int:
    console = Console(width=80, file=io.StringIO())
    return Measurement.get(console, console.options.update_width(100_000), table).maximum


@pytest.mark.parametrize("n_columns", [1, 2, 4, 7, 12])
def test_the_bound_says_too_wide_only_where_rich_measures_the_table_wider(n_columns):
    table = _table(n_columns, 9)
    natural = _natural(table)
    for width in range(1, natural + 40):
        if _wider_than(table, width):
            assert natural > width, (n_columns, width, natural)
    assert not _wider_than(table, natural)  # never claims more than rich measures


@pytest.mark.parametrize("width", [40, 80, 200])
def test_fitted_chooses_as_the_measurement_alone_chooses(width):
    for n_columns in (2, 5, 12):
        table = _table(n_columns, 6)
        console = Console(width=width, file=io.StringIO())
        chosen = fitted(console, table, keys=1)
        assert (chosen is table) == (_natural(table) <= width)


def test_a_column_of_set_width_is_not_counted():
    table = _table(3, 3)
    table.columns[0].max_width = 2
    natural = _natural(table)
    assert not _wider_than(table, natural)
