"""HTML for the site without a template engine: escaping, a page shell with its style inline, tables.

Every page stands alone (style inline, images relative, no script, nothing fetched), so the site reads
from file:// or any static host.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

STYLE = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; max-width: 1100px;
       padding: 0 1.2em 3em; color: #1d1d1f; }
nav { margin: 1em 0; font-size: 0.9em; } nav a { margin-right: 1em; }
h1 { font-size: 1.5em; margin: 0.6em 0 0.2em; } h2 { font-size: 1.2em; margin-top: 1.6em; }
h3 { font-size: 1.0em; margin: 1.2em 0 0.3em; }
table { border-collapse: collapse; margin: 0.4em 0 0.8em; font-size: 0.88em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25em 0.7em; text-align: left; vertical-align: top; }
th { background: #f4f4f6; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.best td { font-weight: 600; } .bad { color: #b00020; } .note { color: #555; font-size: 0.9em; }
img { max-width: 100%; height: auto; border: 1px solid #eee; }
code { background: #f4f4f6; padding: 0 0.2em; border-radius: 3px; overflow-wrap: anywhere; }
ul.caveats { margin: 0.2em 0 0.8em; font-size: 0.88em; color: #444; }
details { margin: 0.5em 0; } summary { cursor: pointer; }
"""


def esc(text) -> str:
    return html.escape("" if text is None else str(text))


def md(text: str | None) -> str:
    """The little Markdown the results catalog uses: `code` spans; everything else as text."""
    if not text:
        return ""
    return re.sub(r"`([^`]*)`", lambda m: f"<code>{m.group(1)}</code>", esc(text))


def page(title: str, body: str, nav: Iterable[tuple[str, str]] = ()) -> str:
    links = "".join(f'<a href="{esc(href)}">{esc(label)}</a>' for label, href in nav)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{esc(title)}</title><style>{STYLE}</style></head>\n<body>"
            f"<nav>{links}</nav><h1>{esc(title)}</h1>\n{body}\n</body></html>\n")


def table(header: list[str], rows: Iterable[tuple[list[str], str]], numeric: Iterable[int] = (),
          attrs: str = "") -> str:
    """`rows` are (cells already escaped, the row's class); `numeric` are the right-aligned columns."""
    numeric = set(numeric)
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = []
    for cells, cls in rows:
        tds = "".join(f'<td class="num">{c}</td>' if i in numeric else f"<td>{c}</td>" for i, c in enumerate(cells))
        body.append(f'<tr class="{cls}">{tds}</tr>' if cls else f"<tr>{tds}</tr>")
    return f"<table {attrs}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def figure(src: str, alt: str) -> str:
    return f'<p><img src="{esc(src)}" alt="{esc(alt)}"></p>'
