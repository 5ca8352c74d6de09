"""`python -m qlabench_publish docs render|check`: the generated blocks of README.md, docs/*.md and results/README.md
(qlabench_publish/blocks/; the blocks themselves: cli/blocks_registry.py), rendered from the current evidence that
results/catalog.toml names."""

from __future__ import annotations

from pathlib import Path

import typer

from qlabench.cli.app import console

_files = typer.Argument(None, help="Markdown files (default: README.md, docs/*.md and results/README.md of the "
                        "checkout the catalog is in)")


def _context_and_files(files: list[Path] | None):
    from qlabench_publish.blocks import BlockContext
    from qlabench_publish.blocks.files import doc_files

    ctx = BlockContext()
    return ctx, list(files) if files else doc_files(ctx.catalog.root.parent)


def render_cmd(files: list[Path] = _files):
    """Rewrite every generated block from the data."""
    from qlabench_publish.blocks import render_files
    from qlabench_publish.cli.blocks_registry import BLOCKS

    ctx, paths = _context_and_files(files)
    changed = render_files(paths, ctx, BLOCKS)
    console.print(f"rendered the blocks of {len(paths)} files; changed: {', '.join(map(str, changed)) or 'none'}",
                  highlight=False, soft_wrap=True)


def check_cmd(files: list[Path] = _files):
    """Exit 1 when a committed block differs from what the data gives, or the prose states a decimal that no
    block prints and no cited run or file holds (qlabench_publish/blocks/prose.py); CI runs it. Nothing is written.
    The numbers left unchecked on purpose are counted per page, with their reasons."""
    from qlabench_publish.blocks import check_files
    from qlabench_publish.blocks.prose import check_prose, unchecked_lines
    from qlabench_publish.cli.blocks_registry import BLOCKS

    ctx, paths = _context_and_files(files)
    stale = check_files(paths, ctx, BLOCKS)
    prose = check_prose(ctx.catalog.root.parent, paths)
    # markup and emoji off: a line quotes prose ('CI [+18.9%, ...]') and names 'FILE:100:' (an emoji code)
    for line in [*(s.text for s in [*stale, *prose.drift]), *unchecked_lines(prose)]:
        console.print(line, highlight=False, soft_wrap=True, markup=False, emoji=False)
    if stale or prose.drift:
        console.print("run `python -m qlabench_publish docs render` and commit the result" if stale else "put the number in a block, "
                      "or in a dated section citing the run or file it comes from (README.md: 'Numbers in the "
                      "docs')", highlight=False)
        raise typer.Exit(1)
    console.print(f"every block of {len(paths)} files matches the current evidence, and every decimal of their "
                  "prose is a block's or what the runs and files its section cites hold, but the unchecked lines "
                  "counted above (the blurred ones pass with a neighbouring value too)", highlight=False,
                  soft_wrap=True)
