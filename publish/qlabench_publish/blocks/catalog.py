"""results/README.md's folder table, from results/catalog.toml: one row per entry.

    <!-- qlabench:block results-catalog -->
"""

from __future__ import annotations

from qlabench_publish.blocks.context import BlockContext
from qlabench.core.text import md_code, md_text


def _cell(text: str) -> str:
    """`text` as one table cell: on one line (a newline would end the row, and a line of its own could read as a
    block marker), literal (core/text.py: `md_text`: `|` escaped, `<` as an entity so that no field opens an HTML
    comment or tag)."""
    return md_text(text)


def _code(text: str) -> str:
    """`text` as a code span in a cell (its text is no HTML there); plain, escaped, where a backtick would end the
    span early."""
    return md_code(text)


def results_catalog_block(ctx: BlockContext) -> str:
    lines = ["| folder | part | status | date | what it answers | stack | written up in |",
             "|---|---|---|---|---|---|---|"]
    for e in sorted(ctx.catalog.entries, key=lambda e: (e.path.split("/")[0], e.path)):
        top, _, rest = e.path.partition("/")
        status = _cell(e.status)
        if e.backends:
            status += f" for {_cell(', '.join(e.backends))}"
        if e.superseded_by:
            now = _code(ctx.catalog.successor(ctx.catalog.get(e.superseded_by)).path)
            status += f" (other backends now: {now})" if e.is_current else f" (now: {now})"
        lines.append(f"| {_code(top + '/')} | {_code(rest) if rest else '(all)'} | {status} | {e.date} | "
                     f"{_cell(e.question)} | {_cell(e.stack_label) or '-'} | {_code(e.doc) if e.doc else '-'} |")
    return "\n".join(lines)
