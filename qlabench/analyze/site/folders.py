"""The results folders and what each holds, from the results catalog: `<root>/catalog.toml` where there is
one (store/catalog.py: per folder or run file its question, kind, stack, date, current or history and what
superseded it), else the table in `<root>/README.md` (`| folder | what | how it was made |`).

A folder on disk that the catalog does not list is still a folder of the site, said to be uncatalogued.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


KERNEL_TIMINGS = "kernel-timings"  # the catalog's kinds: the current rows a ranking reads,
SERVING = "serving"  # and those the serving page reads
# The README's table says nothing of what is current: there, the study's folder is for the rankings, as
# advise read it, and the serving run's folder for the serving page, as its page was made from it.
README_CURRENT = {KERNEL_TIMINGS: ("h200-study",), SERVING: ("h200-serving",)}


@dataclass(frozen=True)
class Folder:
    name: str  # relative to the results root, no trailing slash: 'h200-study', or one run file of a folder
    what: str | None  # the catalog's text (Markdown), None when the catalog does not list the folder
    how: str | None  # how it was made, or the doc that writes it up
    kind: str | None = None  # the catalog.toml fields (None from the README's table)
    status: str | None = None
    date: str | None = None
    stack: str | None = None
    superseded_by: str | None = None
    backends: tuple[str, ...] | None = None
    entry: object | None = None  # the catalog's Entry (store/catalog.py), None from the README's table

    def keeps(self, backend: str, kind: str = KERNEL_TIMINGS) -> bool:
        """Whether this backend's rows here are current evidence of this kind (what a ranking reads): the
        catalog's one rule (store/catalog.py: Entry.keeps, as analyze/evidence/current.py reads it)."""
        if self.entry is None:
            return self.name in README_CURRENT[kind]
        return self.kind == kind and self.entry.keeps(backend)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _name(cell: str) -> str | None:
    """'`h200-study/`' -> 'h200-study'; '`baselines/<gpu>/<suite>.parquet`' -> 'baselines'."""
    m = re.match(r"`([^`<]+)", cell)
    if not m:
        return None
    name = m.group(1).strip().strip("/")
    # the results folder itself ('.', '/') or a step out of it names no folder of it
    return name if name and not set(name.split("/")) & {"", ".", ".."} else None


def read_catalog(root: Path) -> list[Folder]:
    """The catalogued folders in the catalog's order, then every other folder under `root` by name."""
    listed: dict[str, Folder] = {}
    readme = root / "README.md"
    if (root / "catalog.toml").is_file():
        from qlabench.store.catalog import load_catalog

        for e in load_catalog(root).entries:
            listed[e.path] = Folder(e.path, e.question, e.doc, e.kind, e.status, str(e.date), e.stack_label,
                                    e.superseded_by, e.backends, e)
    elif readme.is_file():
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
    tops = {Path(n).parts[0] for n in listed}
    others = sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")
                    and p.name not in tops)
    return [f for f in listed.values() if (root / f.name).exists()] + [Folder(n, None, None) for n in others]
