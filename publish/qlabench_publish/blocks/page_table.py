"""A table quoted from a committed page, as a docs block: the page a study wrote (a results folder's page, a
report) keeps every column, and the docs show some of them.

    <!-- qlabench:block page-table file=results/h200-timing-regimes/regimes.md table=1 columns=1,2,3,6 -->

`file`: a markdown file of this checkout, as its path from the checkout's root; `table`: which of its tables,
1-based in the order they stand (a fenced code block's lines are no table); `columns`: which of its columns,
1-based and in the order shown (every one if left out). The body is that table's rows with those cells as the
page has them, its alignment row included.

A generated block rather than a table pasted by hand: `docs check` holds the copy to the page cell for cell,
where the prose check could only say each number was held somewhere in the files its section cites.
"""

from __future__ import annotations

import re

from qlabench.core.errors import ConfigError
from qlabench_publish.blocks.context import BlockContext
from qlabench_publish.blocks.prose_page import table_cells

_FENCE = re.compile(r"\s*(`{3,}|~{3,})")
_ALIGN = re.compile(r":?-+:?")


def tables(text: str) -> list[list[str]]:
    """The markdown tables of `text`, each its lines (header, alignment row, rows) in order: a run of lines
    starting with `|` whose second line is an alignment row; a fenced code block's lines are skipped."""
    runs: list[list[str]] = [[]]
    fence = None
    for line in text.splitlines():
        m = _FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
        elif fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
        elif line.lstrip().startswith("|"):
            runs[-1].append(line)
            continue
        if runs[-1]:
            runs.append([])
    return [t for t in runs if len(t) >= 2 and all(_ALIGN.fullmatch(c) for c in table_cells(t[1]))]


def _indices(text: str | None, count: int, what: str) -> list[int]:
    if text is None:
        return list(range(count))
    try:
        picked = [int(x) for x in text.split(",")]
    except ValueError:
        raise ConfigError(f"page-table: {what} must be 1-based numbers separated by commas, got {text!r}") from None
    if bad := [i for i in picked if not 1 <= i <= count]:
        raise ConfigError(f"page-table: {what} {bad[0]} is not one of 1..{count}")
    return [i - 1 for i in picked]


def page_table_block(ctx: BlockContext, file: str, table: str = "1", columns: str | None = None) -> str:
    """Table `table` of `file` with `columns`, as the file has them; a ConfigError naming what is missing."""
    root = ctx.catalog.root.parent.resolve()
    path = (root / file).resolve()
    if not path.is_relative_to(root):
        raise ConfigError(f"page-table: file {file!r} is outside the checkout")
    if not path.is_file():
        raise ConfigError(f"page-table: file {file!r} does not exist")
    found = tables(path.read_text(encoding="utf-8"))
    if not found:
        raise ConfigError(f"page-table: {file} holds no markdown table")
    which = _indices(table, len(found), "table")
    if len(which) != 1:
        raise ConfigError(f"page-table: table must be one number, got {table!r}")
    lines = [table_cells(line) for line in found[which[0]]]
    width = len(lines[0])
    if ragged := [i for i, row in enumerate(lines) if len(row) != width]:
        raise ConfigError(f"page-table: table {table} of {file}: line {ragged[0] + 1} has {len(lines[ragged[0]])} "
                          f"cells, its header {width}")
    keep = _indices(columns, width, "column")
    return "\n".join("| " + " | ".join(row[i] for i in keep) + " |" if n != 1 else
                     "|" + "|".join(row[i] for i in keep) + "|" for n, row in enumerate(lines))


__all__ = ["page_table_block", "tables"]
