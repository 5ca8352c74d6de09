"""The current evidence: the rows of results/catalog.toml's current entries, as views read them by default.

`advise`, `show`, `report` and the docs blocks read these rows when given no results. Which files count is
the catalog's to say (store/catalog.py): a file belongs to the entry with the longest path holding it, so a
history run inside a current folder is left out, and an entry current only for some backends
(`backends = [...]`) gives only those backends' rows. The paths are a plain list (`CurrentEvidence.paths`): a
loader given paths by the user reads them as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from qlabench.analyze.evidence.runs import check_runs
from qlabench.analyze.evidence.tree import NOTES_ATTR
from qlabench.core.errors import StoreError
from qlabench.store.catalog import Catalog, load_catalog
from qlabench.store.files import read_table, result_files

KERNEL_TIMINGS = ("kernel-timings",)


@dataclass(frozen=True)
class CurrentEvidence:
    paths: tuple[Path, ...]  # the current entries' paths, as the catalog names them
    files: tuple[Path, ...]  # the result files read (those the current entries own)
    rows: pd.DataFrame  # their rows, less the backends an entry is not current for

    @property
    def sources(self) -> list[str]:
        return [str(p) for p in self.paths]


def current_files(catalog: Catalog, kinds: tuple[str, ...] = KERNEL_TIMINGS) -> list[Path]:
    """The result files the current entries of these kinds own (not those of a nested history entry)."""
    paths = catalog.current_paths(kinds)
    return [f for f in result_files(paths) if (e := catalog.owner(f)) is not None and e.is_current]


def current_evidence(catalog: Catalog | None = None, kinds: tuple[str, ...] = KERNEL_TIMINGS) -> CurrentEvidence:
    """The current evidence of these kinds: every row of the current entries' files whose backend its entry
    is current for."""
    catalog = catalog or load_catalog()
    files = current_files(catalog, kinds)
    tables = []
    for f in files:
        table = read_table(f)
        entry = catalog.owner(f)
        if entry.backends is not None:
            table = table.filter(pc.is_in(table["backend"], pa.array(entry.backends)))
        tables.append(table.append_column("source_file", pa.array([str(f)] * table.num_rows, pa.string())))
    if not tables:
        raise StoreError(f"{catalog.root / 'catalog.toml'}: no current entry of kind {', '.join(kinds)}")
    # the evidence layer's run check: a run in two files that disagree is refused, a copy counts once
    rows, notes = check_runs(pa.concat_tables(tables).to_pandas())
    rows.attrs[NOTES_ATTR] = notes
    return CurrentEvidence(tuple(catalog.current_paths(kinds)), tuple(files), rows)


def rows_or_current(paths, kinds: tuple[str, ...] = KERNEL_TIMINGS, also=()) -> tuple[pd.DataFrame, list[Path], bool]:
    """(rows, their paths, from the catalog?): the rows of `paths` when given, else the current evidence's; and
    with them every row of `also` (a run just measured, which no catalog names yet). What a view reads by default
    is the catalog's to say, in one place."""
    from qlabench.analyze.evidence import read_evidence

    paths = [Path(p) for p in paths or ()]
    also = [Path(p) for p in also or ()]
    if paths:  # every run, through the evidence layer (its notes ride along: evidence.evidence_notes)
        return read_evidence(paths + also, all_runs=True).frame(), paths + also, False
    ev = current_evidence(kinds=kinds)
    if not also:
        return ev.rows, list(ev.paths), True
    extra = read_evidence(also, all_runs=True).frame()
    rows = pd.concat([ev.rows, extra], ignore_index=True) if len(ev.rows) else extra
    rows.attrs[NOTES_ATTR] = [*ev.rows.attrs.get(NOTES_ATTR, ()), *extra.attrs.get(NOTES_ATTR, ())]  # both's notes
    return rows, list(ev.paths) + also, True


def history_notes(catalog: Catalog | None = None, kinds: tuple[str, ...] = KERNEL_TIMINGS) -> list[str]:
    """A line per history entry of these kinds (and per current entry's left-out backends): what it measured,
    on which stack, and what answers its question now. A page read from the current evidence lists them
    beside its versions, so an older stack's numbers stay findable without entering its rankings."""
    catalog = catalog or load_catalog()
    out = []
    for e in catalog.entries:
        if e.kind not in kinds or (e.is_current and e.superseded_by is None):
            continue
        what = (f"its rows of backends other than {', '.join(e.backends)}" if e.is_current else "history")
        now = catalog.successor(catalog.get(e.superseded_by))
        out.append(f"`results/{e.path}` ({e.date}, {e.stack_label}; {what}): {e.question}; now answered by "
                   f"`results/{now.path}` (`qlabench report results/{e.path}` shows it against the published table)")
    return out


def keep_current(rows: pd.DataFrame, catalog: Catalog, source_column: str = "source_file") -> pd.DataFrame:
    """The rows (read with the file each came from in `source_column`) that the catalog counts as current:
    their file's entry is current and, where the entry names its backends, the row's backend is one of them.
    For a loader that reads `catalog.current_paths()` itself and tags each row with its file."""
    owners = {f: catalog.owner(f) for f in rows[source_column].unique()}
    keep = [owners[f] is not None and owners[f].keeps(b) for f, b in zip(rows[source_column], rows["backend"])]
    return rows[keep]
