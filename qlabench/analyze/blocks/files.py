"""Rendering and checking the blocks of the docs: `qlabench docs render` rewrites each block from the data,
`qlabench docs check` lists the blocks whose committed text differs from what the data gives (CI runs it).

The files are the project's markdown that quotes figures (DOC_FILES, relative to the checkout): README.md,
docs/*.md and results/README.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from qlabench.analyze.blocks.context import BlockContext
from qlabench.analyze.blocks.markers import find_blocks, replace_blocks
from qlabench.analyze.blocks.registry import render_block

DOC_FILES = ("README.md", "docs/*.md", "results/README.md")


@dataclass(frozen=True)
class Stale:
    file: str
    block: str
    line: int  # of its opening marker

    @property
    def text(self) -> str:
        return f"{self.file}:{self.line}: block {self.block!r} differs from what the current evidence gives"


def doc_files(root: Path) -> list[Path]:
    """The markdown files under the checkout `root` that may hold blocks."""
    return sorted({f for pattern in DOC_FILES for f in root.glob(pattern) if f.is_file()})


def _rendered(path: Path, ctx: BlockContext) -> tuple[str, str]:
    text = path.read_text()
    return text, replace_blocks(text, lambda b: render_block(b, ctx, str(path)), str(path))


def render_files(paths: Iterable[Path], ctx: BlockContext) -> list[Path]:
    """Rewrite every block of `paths` from the data; the files that changed."""
    changed = []
    for p in paths:
        old, new = _rendered(p, ctx)
        if new != old:
            p.write_text(new)
            changed.append(p)
    return changed


def check_files(paths: Iterable[Path], ctx: BlockContext) -> list[Stale]:
    """The blocks whose committed body differs from what the data gives (nothing is written)."""
    stale = []
    for p in paths:
        old, new = _rendered(p, ctx)
        if new == old:
            continue
        before, after = find_blocks(old, str(p)), find_blocks(new, str(p))
        for b, a in zip(before, after):
            if b.body != a.body:
                stale.append(Stale(str(p), b.name, b.start + 1))
    return stale
