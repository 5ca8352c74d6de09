"""What a command's output may never replace: the rule every output option is checked by, `--force` or not.

A file a command writes (`-o`, `--output`, `--suite-out`, ...) is refused when it is

- a qlabench results file (whatever its name: its parquet footer says so), or any other parquet file when the
  command writes text or another kind of table: a rendering written over rows loses them;
- the results catalog (`results/catalog.toml`, or any file that parses as one): every view reads it;
- an input of the same command (the same file by any path or link), or a new parquet table inside a results
  folder the command reads (the next read of that folder would take it for a results file).

`overwrite_refusal` says why in words, or None; the command line turns the reason into its one-line error.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from qlabench.store.catalog import CATALOG_NAME
from qlabench.store.files import TABLE_KEY
from qlabench.store.kernels import KERNELS_SCHEMA
from qlabench.store.schema import METADATA_KEY

TEXT = "text"  # what most outputs write: a rendering, a suite, a report
KERNELS = "kernels"  # `kernels -o`: the per-launch table (store/kernels.py)
_CATALOG_READ_LIMIT = 1 << 20  # a catalog is a few KiB; a bigger file is no catalog, and is not read whole


def parquet_kind(path: str | os.PathLike) -> str | None:
    """What a parquet file holds, read from its footer (its name says nothing): 'results' (rows, with the schema
    version in its metadata), 'kernels' (the per-launch table), a derived table's own name, or 'unknown' (a
    parquet file qlabench cannot place, or cannot read); None when `path` is no parquet file."""
    try:
        with open(path, "rb") as f:
            if f.read(4) != b"PAR1":
                return None
    except OSError:
        return None
    try:
        footer = pq.read_metadata(path)
    except (OSError, pa.ArrowInvalid):
        return "unknown"
    meta = footer.metadata or {}
    if METADATA_KEY in meta:
        return "results"
    if TABLE_KEY in meta:
        return meta[TABLE_KEY].decode(errors="replace")
    if footer.schema.to_arrow_schema().names == KERNELS_SCHEMA.names:
        return KERNELS
    return "unknown"


def is_catalog(path: str | os.PathLike) -> bool:
    """Whether `path` is a results catalog: named so inside a `results` folder, or a TOML file with the
    catalog's shape (a format and [[entry]] tables that name a path), whatever it is called."""
    p = Path(path)
    if p.name == CATALOG_NAME and p.resolve().parent.name == "results":
        return True
    try:
        if p.stat().st_size > _CATALOG_READ_LIMIT:
            return False
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    entries = data.get("entry")
    return "format" in data and isinstance(entries, list) and any(isinstance(e, dict) and "path" in e
                                                                   for e in entries)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and os.path.samefile(a, b))
    except OSError:
        return False


def _inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


def overwrite_refusal(path: str | os.PathLike, inputs: Iterable[str | os.PathLike] = (),
                      writes: str = TEXT) -> str | None:
    """Why writing `writes` (TEXT, or a parquet table's kind such as KERNELS) to `path` would destroy data the
    command or a view needs, or None. `inputs`: the files and folders the same command reads."""
    path = Path(path)
    inputs = [Path(i) for i in inputs if i is not None]
    for i in inputs:
        if i.is_file() and _same_file(path, i):
            return f"is an input of this command ({i}); writing it would replace what is being read"
    kind = parquet_kind(path) if path.is_file() else None
    if kind == "results":
        return "is a results file (its parquet footer says so, whatever its name); no output ever replaces one"
    if kind is not None and kind != writes:
        what = "a parquet file qlabench cannot place" if kind == "unknown" else f"a qlabench {kind} table"
        return f"is {what}; this output is {'text' if writes == TEXT else f'a {writes} table'} and never replaces it"
    if path.is_file() and is_catalog(path):
        return "is the results catalog (or a file that parses as one); every view reads it, no output replaces it"
    if writes != TEXT:
        for i in inputs:
            if i.is_dir() and _inside(path, i):
                return (f"lies inside {i}, a results folder this command reads: the next read of that folder "
                        "would take the new table for a results file")
    return None
