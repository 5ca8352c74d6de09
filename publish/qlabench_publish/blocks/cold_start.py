"""The cold-start table of one current catalog entry of kind "cold-start" (its cold-start.json, as
`qlabench cold-start` wrote it or `--report-only` rebuilt it from the rows): docs/SERVING.md's "Cold start".

    <!-- qlabench:block cold-start entry=h200-cold-start -->
"""

from __future__ import annotations

from qlabench.analyze.answer.first_call import KIND
from qlabench_publish.blocks.context import BlockContext
from qlabench.analyze.cold_start.table import cold_start_markdown, read_records
from qlabench.core.errors import ConfigError


def cold_start_block(ctx: BlockContext, entry: str) -> str:
    e = ctx.catalog.get(entry)
    if not e.is_current or e.kind != KIND:
        raise ConfigError(f"block cold-start: {entry!r} is a {e.status} entry of kind {e.kind!r}; it reads a "
                          f"current entry of kind {KIND!r}")
    records = read_records(ctx.catalog.root / e.path)
    runs = sorted({str(r.get("run_id")) for r in records})
    return (f"From `results/{e.path}/cold-start.json` ({len(records)} records, runs `{runs[0]}` to `{runs[-1]}`). "
            + cold_start_markdown(records).rstrip("\n"))
