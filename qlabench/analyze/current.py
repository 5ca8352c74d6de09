"""The current evidence: the rows of results/catalog.toml's current entries, as views read them by default.

`advise`, `show`, `report` and the docs blocks read these rows when given no results. Which files count is
the catalog's to say (store/catalog.py): a file belongs to the entry with the longest path holding it, so a
history run inside a current folder is left out, and an entry current only for some backends
(`backends = [...]`) gives only those backends' rows. The paths are a plain list (`Evidence.paths`): a
loader given paths by the user reads them as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from qlabench.core.errors import StoreError
from qlabench.store.catalog import Catalog, load_catalog
from qlabench.store.files import read_table, result_files

KERNEL_TIMINGS = ("kernel-timings",)


@dataclass(frozen=True)
class Evidence:
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


def current_evidence(catalog: Catalog | None = None, kinds: tuple[str, ...] = KERNEL_TIMINGS) -> Evidence:
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
        tables.append(table)
    if not tables:
        raise StoreError(f"{catalog.root / 'catalog.toml'}: no current entry of kind {', '.join(kinds)}")
    return Evidence(tuple(catalog.current_paths(kinds)), tuple(files), pa.concat_tables(tables).to_pandas())
