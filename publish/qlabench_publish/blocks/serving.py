"""Every serving variant against one baseline, from one current catalog entry of kind "serving"
(analyze/serving/against.py): docs/SERVING.md's ranking of the engines' own decode/verify kernels.

    <!-- qlabench:block serving-against entry=h200-serving/serving-engines baseline=flashinfer-decode-pt -->
"""

from __future__ import annotations

import math

from qlabench_publish.blocks.context import BlockContext
from qlabench.analyze.serving import serving_from_paths
from qlabench.analyze.serving.against import against_baseline
from qlabench.core.errors import ConfigError
from qlabench.store.files import result_files
from qlabench.core.text import md_code

KIND = "serving"


def _pool(v: float) -> str:
    if isinstance(v, float) and math.isnan(v):
        return "not checked"
    return "0 (bit for bit)" if v == 0 else f"{v:.3g}"


def serving_against_block(ctx: BlockContext, entry: str, baseline: str) -> str:
    e = ctx.catalog.get(entry)
    if not e.is_current or e.kind != KIND:
        raise ConfigError(f"block serving-against: {entry!r} is a {e.status} entry of kind {e.kind!r}; it reads a "
                          f"current entry of kind {KIND!r}")
    files = [f for f in result_files([ctx.catalog.root / e.path]) if ctx.catalog.owner(f) is e]
    s = serving_from_paths(files)
    table = against_baseline(s.rows, baseline)
    if table.empty:
        raise ConfigError(f"block serving-against: no usable {baseline} row in {entry}")
    own = s.rows[s.rows["usable"] & (s.rows["backend"] == baseline)]
    own_pool = _pool(float(own["err_pool"].max()) if own["err_pool"].notna().any() else math.nan)
    runs = ", ".join(md_code(r) for r in sorted(s.rows["run_id"].dropna().unique()))
    devices = ", ".join(sorted(s.rows["device"].dropna().astype(str).unique()))
    lines = [f"From `results/{e.path}` (run {runs}, {devices}; {s.summary_line()}). Each cell: the variant's time "
             f"over `{baseline}`'s at the same batch of the same run (above 1.00x: `{baseline}` is faster), "
             "from HBM and where the run said the states stayed in L2, with the batches; `err_pool`: the largest "
             "change any of the variant's rows made to a pool slot outside its batch "
             f"(`{baseline}`'s own {len(own)} rows: {own_pool}).", "",
             "| variant | group | from HBM | in L2 | rows | err_pool |", "|---|---|---|---|---:|---|"]
    for r in table.itertuples():
        note = f" ({r.pairs_of_two_runs} pairs of two runs left out)" if r.pairs_of_two_runs else ""
        lines.append(f"| {r.variant} | {r.group} | {r.from_hbm}{note} | {r.in_l2} | {r.rows} | {_pool(r.err_pool_max)} |")
    return "\n".join(lines)
