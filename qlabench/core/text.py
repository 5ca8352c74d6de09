"""Text that came from outside qlabench, made safe to show: what a kernel's package says (an exception message,
a backend's name, version or description), what a results file holds, a name on disk.

Two rules, each defined once:
- `visible`: control characters made visible (`\\x1b`, `\\u202e`). A terminal obeys an escape sequence in text it
  prints: an exception message holding `\\x1b[2J\\x1b]0;...` would clear the screen and set the window title. Every
  console the command line prints through applies it (cli/app.py), and any writer of plain text calls it.
- `md_text`: a text as literal markdown, on one line: `visible`, then HTML's `&` and `<` as entities (no
  `<script>`, no `<!--` that hides the rest of a page; `>` alone opens nothing), and the characters markdown
  reads as syntax escaped: `|` that would split a table's cell, the `]` that makes a link of `[x](...)`,
  `[x][y]` or `[x]: url`, a backtick that opens a code span, `\\` itself (brackets that make no link, `[kv]`,
  stay as they are). Every markdown writer (tables, the pull-request comment, `show --format markdown`, the
  report's pages) calls it.
"""

from __future__ import annotations

import re
import unicodedata

# Categories that are no visible character: controls, format characters (bidirectional overrides that reorder a
# line), line and paragraph separators, surrogates, private use.
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co"})
_KEEP = "\n\t"  # layout a reader expects, which moves no cursor back and sets nothing
_MD_SPECIAL = re.compile(r"[\\`|<&]|\](?=[(\[:])")  # `](`, `][`, `]:` make a link (or its definition)
_MD_ENTITY = {"&": "&amp;", "<": "&lt;"}  # no tag and no entity opens without them


def _escape(c: str) -> str:
    n = ord(c)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def is_hidden(c: str) -> bool:
    return unicodedata.category(c) in _HIDDEN


def visible(text: object, keep: str = _KEEP) -> str:
    """`text` with every control or format character written as its escape (ESC -> `\\x1b`, U+202E -> `\\u202e`);
    the characters of `keep` (newline and tab) stay as they are. Text with none is returned unchanged."""
    text = str(text)
    if text.isprintable() or not any(is_hidden(c) and c not in keep for c in text):
        return text
    return "".join(_escape(c) if c not in keep and is_hidden(c) else c for c in text)


def one_line(text: object) -> str:
    """`visible`, with newlines and tabs as single spaces: a text shown inside one line (a cell, a progress
    line)."""
    return " ".join(visible(text, keep="\n\t").split("\n")).replace("\t", " ")


def md_text(text: object) -> str:
    """`text` as literal markdown on one line (a table cell, a list item, a heading): what it shows is `text`."""
    flat = " ".join(visible(text, keep="\n\t").split())
    return _MD_SPECIAL.sub(lambda m: _MD_ENTITY.get(m.group(), "\\" + m.group()), flat)


def md_code(text: object) -> str:
    """`text` as an inline code span on one line (its content is no markdown nor HTML there), or as `md_text`
    where it holds a backtick (which would end the span) or a `|` (which splits a table's cell even inside one)."""
    flat = " ".join(visible(text, keep="\n\t").split())
    return md_text(text) if ("`" in flat or "|" in flat or not flat) else f"`{flat}`"


def visible_frame(df):
    """A table (a pandas frame) with `visible` applied to its column names and text cells, for a writer of plain
    text such as CSV: its quoting keeps a `,` or a newline inside its cell, but a control character reaches whoever
    prints the file."""
    out = df.rename(columns=lambda c: visible(c) if isinstance(c, str) else c)
    for c in out.columns:
        if out[c].dtype == object:
            out[c] = [visible(v) if isinstance(v, str) else v for v in out[c]]
    return out
