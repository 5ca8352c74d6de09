"""Every block the docs may hold: name -> the function that renders it from a BlockContext (and the
KEY=VALUE arguments of its marker). A marker naming another block is an error, never left as it is."""

from __future__ import annotations

from collections.abc import Callable

from qlabench.analyze.blocks.advice import advise_block
from qlabench.analyze.blocks.catalog import results_catalog_block
from qlabench.analyze.blocks.cold_start import cold_start_block
from qlabench.analyze.blocks.context import BlockContext
from qlabench.analyze.blocks.flashinfer import flashinfer_cp_block, library_vs_block
from qlabench.analyze.blocks.markers import Block, BlockError
from qlabench.analyze.blocks.serving import serving_against_block
from qlabench.analyze.blocks.study import auto_cp_regret_block, study_summary_block

BLOCKS: dict[str, Callable[..., str]] = {
    "advise": advise_block,
    "auto-cp-regret": auto_cp_regret_block,
    "cold-start": cold_start_block,
    "flashinfer-cp": flashinfer_cp_block,
    "library-vs": library_vs_block,
    "study-summary": study_summary_block,
    "results-catalog": results_catalog_block,
    "serving-against": serving_against_block,
}


def render_block(block: Block, ctx: BlockContext, where: str = "") -> str:
    fn = BLOCKS.get(block.name)
    if fn is None:
        raise BlockError(f"{where}:{block.start + 1}: unknown block {block.name!r} (known: {', '.join(BLOCKS)})")
    try:
        return fn(ctx, **dict(block.args))
    except TypeError as e:
        raise BlockError(f"{where}:{block.start + 1}: block {block.name!r}: {e}") from None
