"""Rendering and checking the blocks of the docs: `python -m qlabench_publish docs render` rewrites each block from the data,
`python -m qlabench_publish docs check` lists the blocks whose committed text differs from what the data gives (CI runs it).

The files are the project's markdown that quotes figures (DOC_FILES, relative to the checkout): README.md,
docs/*.md and results/README.md. Which blocks exist is the caller's `blocks` (registry.py): the docs' full set,
each view's blocks included, is cli/blocks_registry.py's BLOCKS, which `python -m qlabench_publish docs` passes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from qlabench_publish.blocks.context import BlockContext
from qlabench_publish.blocks.markers import Block, BlockError, render_blocks
from qlabench_publish.blocks.registry import Blocks, render_block

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


def read_doc(path: Path) -> str:
    """A markdown file's text, exactly as stored (no newline translation); a BlockError naming the file when
    it is missing, a folder, unreadable or not UTF-8."""
    path = Path(path)
    if path.is_dir():
        raise BlockError(f"{path}: is a folder; give markdown files")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise BlockError(f"{path}: no such file") from None
    except OSError as e:
        raise BlockError(f"{path}: cannot read it: {e.strerror or e}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BlockError(f"{path}: not UTF-8 text (byte {e.start}: {e.reason}); the blocks are only read from "
                         "UTF-8 markdown") from None


def _rendered(path: Path, ctx: BlockContext, blocks: Blocks) -> tuple[str, list[Block]]:
    text = read_doc(path)
    return render_blocks(text, lambda b: render_block(b, ctx, blocks, str(path)), str(path))


def render_files(paths: Iterable[Path], ctx: BlockContext, blocks: Blocks) -> list[Path]:
    """Rewrite every block of `paths` from the data, each by its function in `blocks` (the docs' own: pass
    cli/blocks_registry.py's BLOCKS, as `python -m qlabench_publish docs render` does); the files that changed. Every file is
    rendered before any is written, so an error in one leaves all of them as they were."""
    rendered = [(Path(p), *_rendered(p, ctx, blocks)) for p in paths]
    for p, new, changed in rendered:
        if changed:
            try:
                p.write_bytes(new.encode("utf-8"))  # bytes: the file's own line endings, untranslated
            except OSError as e:
                raise BlockError(f"{p}: cannot write it: {e.strerror or e}") from None
    return [p for p, _, changed in rendered if changed]


def check_files(paths: Iterable[Path], ctx: BlockContext, blocks: Blocks) -> list[Stale]:
    """The blocks whose committed body differs from what the data gives (nothing is written): exactly the
    blocks `render_files` would rewrite with the same `blocks` (`python -m qlabench_publish docs check` passes
    cli/blocks_registry.py's BLOCKS)."""
    return [Stale(str(p), b.name, b.start + 1) for p in paths for b in _rendered(p, ctx, blocks)[1]]
