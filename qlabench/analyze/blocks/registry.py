"""Every block the docs may hold: name -> the function that renders it from a BlockContext (and the
KEY=VALUE arguments of its marker). A marker naming another block is an error, never left as it is."""

from __future__ import annotations

import inspect
from collections.abc import Callable

from qlabench.analyze.blocks.advice import advise_block
from qlabench.analyze.blocks.catalog import results_catalog_block
from qlabench.analyze.blocks.cold_start import cold_start_block
from qlabench.analyze.blocks.context import BlockContext
from qlabench.analyze.blocks.flashinfer import flashinfer_cp_block, library_vs_block
from qlabench.analyze.blocks.markers import Block, BlockError
from qlabench.analyze.blocks.params import as_parameters
from qlabench.analyze.blocks.serving import serving_against_block
from qlabench.analyze.blocks.study import auto_cp_regret_block, study_summary_block
from qlabench.core.errors import ConfigError

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
    """The block's body from the data; a BlockError naming the file, the marker's line and the parameter when
    its parameters are unknown, missing or cannot mean anything."""
    fn = BLOCKS.get(block.name)
    if fn is None:
        raise BlockError(f"{where}:{block.start + 1}: unknown block {block.name!r} (known: {', '.join(BLOCKS)})")
    at = f"{where}:{block.start + 1}: block {block.name!r}"
    params = {n: p for n, p in list(inspect.signature(fn).parameters.items())[1:]}  # after the context
    given = dict(block.args)
    takes = ", ".join(n + ("" if p.default is inspect.Parameter.empty else "?") for n, p in params.items()) or "none"
    if unknown := [k for k in given if k not in params]:
        raise BlockError(f"{at}: unknown parameter {', '.join(map(repr, unknown))} (its parameters: {takes}; "
                         "?: optional)")
    if missing := [n for n, p in params.items() if p.default is inspect.Parameter.empty and n not in given]:
        raise BlockError(f"{at}: parameter {', '.join(map(repr, missing))} missing (its parameters: {takes}; "
                         "?: optional)")
    try:
        return fn(ctx, **given)
    except BlockError:
        raise
    except ConfigError as e:
        message = str(e)
        for prefix in (f"block {block.name}: ", f"{block.name}: "):
            message = message.removeprefix(prefix)
        raise BlockError(f"{at}: {as_parameters(message, params)}") from None
