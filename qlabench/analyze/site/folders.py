"""The results folders and what each holds, from the results catalog: the table in `<root>/README.md`
(`| folder | what | how it was made |`), one row per committed folder.

A folder on disk that the table does not list is still a folder of the site, said to be uncatalogued.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Folder:
    name: str  # relative to the results root, without a trailing slash: 'h200-study', 'h200-flashinfer'
    what: str | None  # the catalog's text (Markdown), None when the catalog does not list the folder
    how: str | None


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _name(cell: str) -> str | None:
    """'`h200-study/`' -> 'h200-study'; '`baselines/<gpu>/<suite>.parquet`' -> 'baselines'."""
    m = re.match(r"`([^`<]+)", cell)
    if not m:
        return None
    return m.group(1).strip().strip("/") or None


def read_catalog(root: Path) -> list[Folder]:
    """The catalogued folders in the README's order, then every other folder under `root` by name."""
    listed: dict[str, Folder] = {}
    readme = root / "README.md"
    if readme.is_file():
        in_table = False
        for line in readme.read_text(encoding="utf-8", errors="replace").splitlines():
            if not line.lstrip().startswith("|"):
                in_table = False
                continue
            cells = _cells(line)
            if not in_table:  # the header row names the columns
                in_table = cells[:1] == ["folder"]
                continue
            if set(cells[0]) <= set("-: "):
                continue
            name = _name(cells[0])
            if name and len(cells) >= 3 and name not in listed:
                listed[name] = Folder(name, cells[1], cells[2])
    others = sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")
                    and p.name not in listed)
    return [f for f in listed.values() if (root / f.name).exists()] + [Folder(n, None, None) for n in others]
