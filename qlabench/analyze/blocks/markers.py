"""Finding and replacing the generated blocks of a markdown text (pure: no files, no data).

    <!-- qlabench:block NAME [KEY=VALUE ...] -->
    body
    <!-- /qlabench:block -->

KEY=VALUE arguments (no spaces in a value) go to the block's function, e.g.
`<!-- qlabench:block advise model=qwen3.5-397b tp=8 seqlens=32768,4x8192 -->`.

A block's body is everything between its two marker lines. Blocks do not nest; an opening marker without
its closing one, or a closing one without an opening one, is an error naming the line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from qlabench.core.errors import ConfigError

OPEN = re.compile(r"^<!-- qlabench:block ([A-Za-z0-9_.-]+)((?: [A-Za-z_]+=[^ ]+)*) -->\s*$")
CLOSE = re.compile(r"^<!-- /qlabench:block -->\s*$")


class BlockError(ConfigError):
    """A file's block markers are malformed, or name a block qlabench does not know."""


@dataclass(frozen=True)
class Block:
    name: str
    args: tuple[tuple[str, str], ...]  # KEY=VALUE arguments of the opening marker, in order
    start: int  # line index of the opening marker
    end: int  # line index of the closing marker
    body: str  # the lines between, joined with newlines (no trailing newline)


def find_blocks(text: str, where: str = "<text>") -> list[Block]:
    lines = text.split("\n")
    out, open_at, name, args = [], None, None, ()
    for i, line in enumerate(lines):
        if m := OPEN.match(line):
            if open_at is not None:
                raise BlockError(f"{where}:{i + 1}: block {m.group(1)!r} opens inside block {name!r} "
                                 f"(opened at line {open_at + 1})")
            open_at, name, args = i, m.group(1), tuple(tuple(a.split("=", 1)) for a in m.group(2).split())
        elif CLOSE.match(line):
            if open_at is None:
                raise BlockError(f"{where}:{i + 1}: a closing block marker without an opening one")
            out.append(Block(name, args, open_at, i, "\n".join(lines[open_at + 1:i])))
            open_at, name = None, None
    if open_at is not None:
        raise BlockError(f"{where}:{open_at + 1}: block {name!r} is never closed (<!-- /qlabench:block -->)")
    return out


def replace_blocks(text: str, render: Callable[[Block], str], where: str = "<text>") -> str:
    """`text` with every block's body replaced by `render(block)` (stripped of blank lines at its ends)."""
    lines = text.split("\n")
    blocks = find_blocks(text, where)
    for b in reversed(blocks):
        body = render(b).strip("\n")
        lines[b.start + 1:b.end] = body.split("\n") if body else []
    return "\n".join(lines)
