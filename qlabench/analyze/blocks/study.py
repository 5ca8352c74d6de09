"""The study's headline, as the top of `qlabench report`'s page has it: the summary line and the table per
backend of our values against FlashQLA's published ones, on the current evidence.

    <!-- qlabench:block study-summary -->
"""

from __future__ import annotations

from qlabench.analyze.blocks.context import BlockContext
from qlabench.analyze.study.page import backend_summary, md_table


def study_summary_block(ctx: BlockContext) -> str:
    s = ctx.study
    return "\n".join([f"On {', '.join(f'`{x}`' for x in s.sources)} (`qlabench report`, the current evidence):", "",
                      md_table(backend_summary(s), {"median ratio (ok)": ".2f"}).rstrip(), "",
                      f"{s.summary.n_rows_within} of {s.summary.n_rows} published rows within {s.tolerance:.0%} in "
                      "every column; a value outside it names a cause only where a recorded comparison supports "
                      f"one ({s.summary.n_verified} values), else it is `unverified` ({s.summary.n_unverified})."])
