"""Finding and replacing the generated blocks of a markdown text (pure: no files, no data).

    <!-- qlabench:block NAME [KEY=VALUE ...] -->
    body
    <!-- /qlabench:block -->

KEY=VALUE parameters (no spaces in a value, each key once) go to the block's function, e.g.
`<!-- qlabench:block advise model=qwen3.5-397b tp=8 seqlens=32768,4x8192 -->`.

A block's body is everything between its two marker lines. The rules, each an error naming the line when
broken (a marker is never skipped in silence, so `check` can never pass over a block `render` would miss):

- a marker is alone on its line and starts at its first column; a line that looks like one otherwise
  (indented, spaced differently, with text around it) is an error;
- markers inside a fenced code block (``` or ~~~) are example text, left as they are; a fence that is never
  closed before a marker is an error;
- blocks do not nest; an opening marker without its closing one, or the reverse, is an error;
- a rendered body may not hold a line that reads as a marker (it would open or close a block on the next run).

Everything outside the bodies is kept byte for byte, line endings included; a rendered body takes the line
ending of its opening marker (a CRLF file stays CRLF).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from qlabench.core.errors import ConfigError

OPEN = re.compile(r"<!-- qlabench:block ([A-Za-z0-9_.-]+)((?: [A-Za-z_]+=[^ ]+)*) -->[ \t]*")
CLOSE = re.compile(r"<!-- /qlabench:block -->[ \t]*")
# What a reader would take for a marker: an HTML comment opening with qlabench:block, anywhere on the line.
LOOKS_LIKE = re.compile(r"<!--\s*/?\s*qlabench:block", re.IGNORECASE)
FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})(.*)")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_CODE_SPAN = re.compile(r"`+[^`]*`+")
_SYNTAX = "`<!-- qlabench:block NAME [KEY=VALUE ...] -->` or `<!-- /qlabench:block -->`"


class BlockError(ConfigError):
    """A file's block markers are malformed, or name a block qlabench does not know."""


@dataclass(frozen=True)
class Block:
    name: str
    args: tuple[tuple[str, str], ...]  # KEY=VALUE parameters of the opening marker, in order
    start: int  # line index of the opening marker
    end: int  # line index of the closing marker
    body: str  # the lines between, joined with newlines (no trailing newline)
    newline: str = "\n"  # the line ending of the opening marker: a rendered body's lines take it


def split_lines(text: str) -> list[str]:
    """`text` as lines that keep their endings (\\n, \\r\\n or \\r): joined, they are `text` byte for byte."""
    return _LINE.findall(text)


def _content(line: str) -> str:
    return line.rstrip("\r\n")


def fence_of(line: str) -> tuple[str, str] | None:
    """(fence characters, info) when `line` opens or closes a fenced code block."""
    m = FENCE.fullmatch(_content(line))
    if m is None or (m.group(1)[0] == "`" and "`" in m.group(2)):  # a backtick fence's info holds no backtick
        return None
    return m.group(1), m.group(2)


def fenced_lines(lines: list[str]) -> set[int]:
    """The indices of `lines` inside fenced code blocks, the fences included (by the rules find_blocks keeps:
    a fence closes on the same character, at least as long, with no info); an unclosed fence runs to the end."""
    out, fence = set(), None
    for i, line in enumerate(lines):
        f = fence_of(line)
        if fence is None and f:
            fence = f[0]
        elif fence is not None and f and f[0][0] == fence[0] and len(f[0]) >= len(fence) and not f[1].strip():
            fence = None
        elif fence is None:
            continue
        out.add(i)
    return out


def _marker_like(text: str) -> bool:
    return LOOKS_LIKE.search(_CODE_SPAN.sub("", text)) is not None


def _args(text: str, where: str, line: int) -> tuple[tuple[str, str], ...]:
    args = tuple(tuple(a.split("=", 1)) for a in text.split())
    seen = set()
    for key, _ in args:
        if key in seen:
            raise BlockError(f"{where}:{line}: parameter {key!r} is given twice in the block's opening marker")
        seen.add(key)
    return args


def find_blocks(text: str, where: str = "<text>") -> list[Block]:
    lines = split_lines(text)
    out, open_at, name, args = [], None, None, ()
    fence, fence_at = None, None  # the open code fence (outside blocks only) and its line index
    for i, line in enumerate(lines):
        content = _content(line)
        if open_at is None and fence is not None:  # inside a code fence: example text, markers included
            f = fence_of(line)
            if f and f[0][0] == fence[0] and len(f[0]) >= len(fence) and not f[1].strip():
                fence = None
            continue
        if open_at is None and (f := fence_of(line)):
            fence, fence_at = f[0], i
            continue
        if m := OPEN.fullmatch(content):
            if open_at is not None:
                raise BlockError(f"{where}:{i + 1}: block {m.group(1)!r} opens inside block {name!r} "
                                 f"(opened at line {open_at + 1})")
            open_at, name, args = i, m.group(1), _args(m.group(2), where, i + 1)
        elif CLOSE.fullmatch(content):
            if open_at is None:
                raise BlockError(f"{where}:{i + 1}: a closing block marker without an opening one")
            newline = lines[open_at][len(_content(lines[open_at])):] or "\n"
            out.append(Block(name, args, open_at, i, "\n".join(map(_content, lines[open_at + 1:i])), newline))
            open_at, name = None, None
        elif _marker_like(content):
            raise BlockError(f"{where}:{i + 1}: this line looks like a block marker but is not one: a marker is "
                             f"{_SYNTAX}, alone on its line from its first column (a marker shown as an example "
                             f"belongs in a fenced code block): {content.strip()!r}")
    if open_at is not None:
        raise BlockError(f"{where}:{open_at + 1}: block {name!r} is never closed (<!-- /qlabench:block -->)")
    if fence is not None and any(_marker_like(_content(x)) for x in lines[fence_at + 1:]):
        raise BlockError(f"{where}:{fence_at + 1}: the code fence opened here is never closed, so the block "
                         "markers after it would be read as example text; close it")
    return out


def _body_lines(block: Block, rendered: str, where: str) -> list[str]:
    body = rendered.strip("\r\n")
    lines = re.split(r"\r\n|\r|\n", body) if body else []
    for k, line in enumerate(lines):
        if _marker_like(line) or OPEN.fullmatch(line) or CLOSE.fullmatch(line):
            raise BlockError(f"{where}:{block.start + 1}: block {block.name!r} rendered a line that reads as a "
                             f"block marker (its line {k + 1}: {line.strip()[:80]!r}); a block's text may not open "
                             "or close a block: the data it quotes holds a marker")
    return [line + block.newline for line in lines]


def render_blocks(text: str, render: Callable[[Block], str], where: str = "<text>") -> tuple[str, list[Block]]:
    """`text` with every block's body replaced by `render(block)` (stripped of blank lines at its ends), and the
    blocks whose body changed: `text` is returned unchanged exactly when that list is empty."""
    lines = split_lines(text)
    changed = []
    for b in reversed(find_blocks(text, where)):
        new = _body_lines(b, render(b), where)
        if new != lines[b.start + 1:b.end]:
            lines[b.start + 1:b.end] = new
            changed.append(b)
    return "".join(lines), changed[::-1]


def replace_blocks(text: str, render: Callable[[Block], str], where: str = "<text>") -> str:
    """`text` with every block's body replaced by `render(block)` (stripped of blank lines at its ends)."""
    return render_blocks(text, render, where)[0]
