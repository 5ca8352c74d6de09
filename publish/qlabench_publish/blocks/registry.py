"""The blocks a render knows: a mapping of block name -> the function that renders it from a BlockContext (and the
KEY=VALUE arguments of its marker), and `render_block`, which checks a marker's arguments against the function's
and calls it. A marker naming a block the mapping lacks is an error, never left as it is.

The mapping is the caller's: a block quotes its view's own rendering (the study's tables, the serving ranking, the
cold-start table, advise's answer), and the full mapping of the docs is named once, in the command line
(cli/blocks_registry.py: BLOCKS), so that this module and files.py import no block.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping

from qlabench_publish.blocks.context import BlockContext
from qlabench_publish.blocks.markers import Block, BlockError
from qlabench_publish.blocks.params import as_parameters
from qlabench.core.errors import ConfigError

# block name -> its function: fn(ctx, **marker arguments) -> the block's markdown body
Blocks = Mapping[str, Callable[..., str]]


def render_block(block: Block, ctx: BlockContext, blocks: Blocks, where: str = "") -> str:
    """The block's body from the data, by its function in `blocks`; a BlockError naming the file, the marker's
    line and the parameter when the block is not in `blocks` or its parameters are unknown, missing or cannot
    mean anything."""
    fn = blocks.get(block.name)
    if fn is None:
        raise BlockError(f"{where}:{block.start + 1}: unknown block {block.name!r} (known: {', '.join(blocks)})")
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
