"""results/README.md's folder table, from results/catalog.toml: one row per entry.

    <!-- qlabench:block results-catalog -->
"""

from __future__ import annotations

from qlabench.analyze.blocks.context import BlockContext


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def results_catalog_block(ctx: BlockContext) -> str:
    lines = ["| folder | part | status | date | what it answers | stack | written up in |",
             "|---|---|---|---|---|---|---|"]
    for e in sorted(ctx.catalog.entries, key=lambda e: (e.path.split("/")[0], e.path)):
        top, _, rest = e.path.partition("/")
        status = e.status
        if e.backends:
            status += f" for {', '.join(e.backends)}"
        if e.superseded_by:
            now = ctx.catalog.successor(ctx.catalog.get(e.superseded_by)).path
            status += f" (other backends now: `{now}`)" if e.is_current else f" (now: `{now}`)"
        lines.append(f"| `{top}/` | {f'`{rest}`' if rest else '(all)'} | {status} | {e.date} | {_cell(e.question)} | "
                     f"{e.stack_label or '-'} | {f'`{e.doc}`' if e.doc else '-'} |")
    return "\n".join(lines)
