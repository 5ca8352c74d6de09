"""Reading and writing result files: one parquet file per run, written atomically and incrementally.

Layout of a results folder (one folder per suite):
    <out_root>/<suite>/<run_id>.parquet               a finished run, compacted into one file
    <out_root>/<suite>/<run_id>/part-00000.parquet    rows of a run in progress (or killed), one per point
Every file is first written under a temporary dot-name in the same folder and then renamed into place,
so a crash mid-write never leaves a partial `.parquet` file behind. A finished run's parts are
compacted into `<run_id>.parquet` (written before the parts are removed); readers skip the parts of a
run whose compacted file exists, so a crash between the two steps duplicates nothing.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from qlabench.core.errors import RowError, StoreError
from qlabench.core.names import name_problem
from qlabench.core.result import ResultRow
from qlabench.store.keys import KEY_COLUMNS
from qlabench.store.schema import VERSION_INPUTS, arrow_schema, check_rows, upgrade


def under_root(root: str | os.PathLike, *names: str) -> Path:
    """`root/name/...`, refusing (StoreError) any name that is not a safe slug (core/names.py) or a
    result that does not resolve inside `root`: no output ever lands outside the folder it was given."""
    for n in names:
        if problem := name_problem(n):
            raise StoreError(f"refusing to write under {root}: name {problem}")
    path = Path(root).joinpath(*names)
    base = Path(root).resolve()
    resolved = path.resolve()
    if resolved != base and base not in resolved.parents:
        raise StoreError(f"refusing to write {path}: it resolves to {resolved}, outside {base}")
    return path


def run_path(out_root: str | os.PathLike, suite: str, run_id: str) -> Path:
    """Conventional location of a run's file: <out_root>/<suite>/<run_id>.parquet."""
    return under_root(out_root, suite, f"{run_id}.parquet")


def parts_dir(out_root: str | os.PathLike, suite: str, run_id: str) -> Path:
    """Folder of a run's part files while it is in progress: <out_root>/<suite>/<run_id>/."""
    return under_root(out_root, suite, run_id)


def check_writable(writer: "PartWriter") -> None:
    """Before a sweep's first point: make the run's folders and write (and remove) a probe file where
    its parts and its compacted file go, with a name as long as the compacted file's temporary one.
    StoreError saying why when that fails (--out is a file, a read-only folder, a name too long)."""
    for folder, stem in ((writer.final_path.parent, writer.final_path.stem), (writer.dir, f"{PART_PREFIX}00000")):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, probe = tempfile.mkstemp(prefix=f".{stem}.", suffix=".tmp", dir=folder)
            os.close(fd)
            os.unlink(probe)
        except OSError as e:
            raise StoreError(f"cannot write results under {folder}: {e.strerror or e}; nothing was run") from None
    try:
        writer.dir.rmdir()  # made again by the first part; an unused empty folder would stay behind
    except OSError:
        pass


PART_PREFIX = "part-"


# The folder the qlabench package sits in (a checkout's root, or site-packages for an installed wheel): a
# recorded path inside it stays relative, so a bundled suite is `qlabench/suites/NAME.toml` either way.
REPO_ROOT = Path(__file__).resolve().parents[2]
# Metadata values that name files: recorded by `portable_path`, never as this machine's absolute path.
PATH_KEYS = ("suite_path", "merged_from")


def portable_path(path: str | os.PathLike) -> str:
    """How a file is named in a result file's metadata: relative to the repository when it lies inside it,
    else by its file name alone. A result file is evidence shared with others; an absolute path would
    record the machine it was written on (its user, its worktree) and point nowhere on the reader's."""
    p = Path(path)
    try:
        return p.resolve().relative_to(REPO_ROOT).as_posix()
    except (ValueError, OSError):
        # a run's part file is named by its run's folder too: part-00000.parquet alone names nothing
        return f"{p.parent.name}/{p.name}" if p.name.startswith(PART_PREFIX) else p.name


def _portable(metadata: dict[str, str] | None) -> dict[str, str] | None:
    if not metadata:
        return metadata
    return {k: (",".join(portable_path(x) for x in v.split(",") if x) if k in PATH_KEYS and v else v)
            for k, v in metadata.items()}


def rows_to_table(rows: Iterable[ResultRow], metadata: dict[str, str] | None = None) -> pa.Table:
    schema = arrow_schema(_portable(metadata))
    dicts = [r.as_dict() for r in rows]
    return pa.Table.from_pylist(dicts, schema=schema)


def write_table(path: str | os.PathLike, table: pa.Table) -> Path:
    """Write a table to `path` atomically (temp file in the same folder + rename); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        pq.write_table(table, tmp)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a result file is as readable as any other
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _umask() -> int:
    mask = os.umask(0o022)  # reading the umask means setting it; put it straight back
    os.umask(mask)
    return mask


def write_rows(path: str | os.PathLike, rows: Iterable[ResultRow], metadata: dict[str, str] | None = None) -> Path:
    """Write rows to `path` atomically (temp file + rename); returns the path."""
    return write_table(path, rows_to_table(rows, metadata))


class PartWriter:
    """Appends a run's rows as numbered part files, each written atomically.

    One writer per run id (the run's only writer, so numbering needs no lock). `kill -9` at any
    moment leaves every row written so far readable; `compact` turns the parts into the run's single
    file once the run ends.
    """

    def __init__(self, out_root: str | os.PathLike, suite: str, run_id: str, metadata: dict[str, str] | None = None):
        self.dir = parts_dir(out_root, suite, run_id)
        self.final_path = run_path(out_root, suite, run_id)
        self.metadata = _portable(metadata)
        self.n_parts = 0

    def write(self, rows: Iterable[ResultRow]) -> Path:
        path = self.dir / f"{PART_PREFIX}{self.n_parts:05d}.parquet"
        write_rows(path, rows, self.metadata)
        self.n_parts += 1
        return path

    def compact(self) -> Path | None:
        """Merge the parts into <run_id>.parquet (atomically), then remove them; None if no parts."""
        parts = _part_files(self.dir)
        if not parts:
            return None
        table = pa.concat_tables([read_table(p) for p in parts])
        table = table.replace_schema_metadata(arrow_schema(self.metadata).metadata)
        write_table(self.final_path, table)
        # The compacted file now shadows the parts (see result_files), so removing them is cleanup only.
        shutil.rmtree(self.dir, ignore_errors=True)
        return self.final_path


def _part_files(d: Path) -> list[Path]:
    if not d.is_dir():
        return []
    return sorted(f for f in d.glob(f"{PART_PREFIX}*.parquet") if not f.name.startswith("."))


def _shadowed_part(f: Path) -> bool:
    """A part file of a run that has already been compacted into <run_id>.parquet next to its folder."""
    return f.name.startswith(PART_PREFIX) and f.parent.with_name(f.parent.name + ".parquet").is_file()


# Metadata key naming a parquet table that is not a results file (a derived table written beside the
# runs, e.g. selfbench's medians): a folder walk passes over it, as over `.kernels.parquet` files.
TABLE_KEY = b"qlabench.table"


def _other_table(f: Path) -> bool:
    try:
        meta = _footer(f).metadata or {}
    except (OSError, pa.ArrowInvalid):
        return False  # unreadable: read_table says why
    return meta.get(TABLE_KEY, b"results") != b"results"


def _footer(path: str | os.PathLike) -> pq.FileMetaData:
    """A parquet file's footer, parsed once per version of the file: a folder walk reads it to pass over derived
    tables, and a projected read of the same file needs it again (parsing it was a third of a view's scan of a
    results tree)."""
    st = os.stat(path)
    return _parsed_footer(os.fspath(path), st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=4096)
def _parsed_footer(path: str, mtime_ns: int, size: int) -> pq.FileMetaData:
    return pq.read_metadata(path)


def run_ids(path: str | os.PathLike) -> set[str]:
    """The run ids a result file holds, from its footer's statistics where each row group holds one run (the
    usual case: a file per run), else from its `run_id` column; StoreError when it cannot be read."""
    try:
        meta = _footer(path)
        groups = meta.num_row_groups
        paths = [meta.row_group(0).column(j).path_in_schema for j in range(meta.num_columns)] if groups else []
        if "run_id" not in paths:
            return set()
        col = paths.index("run_id")
        out: set[str] = set()
        for g in range(groups):
            stats = meta.row_group(g).column(col).statistics
            if stats is None or not stats.has_min_max or stats.min != stats.max:
                return {str(r) for r in pq.read_table(path, columns=["run_id"]).column(0).to_pylist() if r}
            out.add(str(stats.min))
        return out
    except (OSError, pa.ArrowInvalid) as e:
        raise StoreError(f"{path}: cannot read parquet: {e}") from e


def write_frame(path: str | os.PathLike, df: pd.DataFrame, table: str) -> Path:
    """Write a derived DataFrame (not result rows) atomically, marked as `table` so that result readers
    walking its folder pass over it."""
    t = pa.Table.from_pandas(df, preserve_index=False)
    return write_table(path, t.replace_schema_metadata({**(t.schema.metadata or {}), TABLE_KEY: table.encode()}))


def result_files(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """Expand files and folders (searched recursively) into the parquet files they hold, each file once (a
    folder given twice, or a file and its folder, is one measurement, never a copy of itself)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            # is_file: a folder may end in .parquet too (a suite named `t.parquet` is one under --out)
            found = sorted(f for f in p.rglob("*.parquet")
                           if f.is_file() and not f.name.startswith(".") and not _shadowed_part(f)
                           and not f.name.endswith(".kernels.parquet")  # store/kernels.py's tables
                           and not _other_table(f))
            # each file resolved once (a view walks the whole tree: resolving it thrice cost a tenth of its walk)
            real = [f.resolve() for f in found]
            _refuse_links_out(p, found, real)
            out.extend(zip(found, real))
        elif p.is_file():
            out.append((p, p.resolve()))
        else:
            raise StoreError(f"{p}: no such file or folder")
    if not out:
        raise StoreError("no result files found in " + ", ".join(map(str, paths)))
    seen: set[Path] = set()
    return [f for f, r in out if not (r in seen or seen.add(r))]


def _refuse_links_out(folder: Path, files: list[Path], real: list[Path]) -> None:
    """StoreError for a file of `folder` that a link places outside it (`real`: each file resolved): a folder's
    evidence is what it holds (a path with '..' is refused for the same reason: results/catalog.toml,
    store/catalog.py)."""
    top = folder.resolve()
    for f, r in zip(files, real):
        if not r.is_relative_to(top):
            raise StoreError(f"{f}: a link to {r}, outside {folder}: a results folder's evidence lies inside it "
                             "(copy the files in, or give the other folder itself)")


# Columns every projected read keeps: the key, the status the checks need, and what orders rows.
_ALWAYS_READ = ("status", "timestamp", "run_id")


def read_table(path: str | os.PathLike, columns: Iterable[str] | None = None) -> pa.Table:
    """A result file in the current schema; with `columns`, only those (and the key, status, timestamp and
    run id), which is most of the cost saved: the kernel and sample lists are most of a file's bytes."""
    wanted = None
    try:
        # The file itself, its footer parsed once (pq.read_table would set up a dataset for one file: twice the
        # CPU of a whole read, and pyarrow.dataset's import, for the same table).
        pf = pq.ParquetFile(path, metadata=_footer(path))
        if columns is None:
            table = pf.read()
        else:
            schema = pf.schema_arrow  # (built anew on each access)
            wanted = set(KEY_COLUMNS) | set(_ALWAYS_READ) | set(columns)
            # a file before schema 8 has its version record derived from these (schema.py: _v7_to_v8_versions)
            inputs = set(VERSION_INPUTS) if "versions" in wanted and "versions" not in schema.names else set()
            # One thread: a projected read is small, and threads cost more CPU than they save (a view reads a
            # whole tree this way, measured on 2 cores).
            table = pf.read(columns=[c for c in schema.names if c in wanted | inputs], use_threads=False)
            table = table.replace_schema_metadata(schema.metadata)
    except (OSError, pa.ArrowInvalid) as e:
        raise StoreError(f"{path}: cannot read parquet: {e}") from e
    try:
        table = check_rows(upgrade(table, str(path), wanted), str(path))
    except StoreError:
        raise
    except ValueError as e:  # pyarrow's ArrowInvalid while converting columns
        raise StoreError(str(e)) from e
    return table


def read_results(paths: Iterable[str | os.PathLike], columns: Iterable[str] | None = None,
                 source: bool = False) -> pd.DataFrame:
    """All rows of the given files/folders as one DataFrame, in the current schema (with `columns`: only
    those, and the key, status, timestamp and run id; with `source`: a `source_file` column naming the
    file each row came from).

    A sweep may be compacting its parts while we read (its parts vanish once <run_id>.parquet
    exists): if a listed file has gone, list again and re-read.
    """
    paths = list(paths)
    for _ in range(4):
        try:
            return _read_all(result_files(paths), columns, source)
        except StoreError as e:
            if not isinstance(e.__cause__, FileNotFoundError):
                raise
    return _read_all(result_files(paths), columns, source)


def _read_all(files: list[Path], columns: Iterable[str] | None = None, source: bool = False) -> pd.DataFrame:
    columns = None if columns is None else tuple(columns)
    tables = [read_table(f, columns) for f in files]
    if source:
        tables = [t.append_column("source_file", pa.array([str(f)] * t.num_rows, pa.string()))
                  for f, t in zip(files, tables)]
    return pa.concat_tables(tables).to_pandas()


def file_metadata(paths: Iterable[str | os.PathLike]) -> list[dict[str, str]]:
    """The `qlabench.*` metadata of each result file under `paths` (keys without the prefix), e.g. the
    suite_path, run_id and baseline a sweep wrote."""
    out = []
    for f in result_files(paths):
        try:
            meta = _footer(f).metadata or {}  # (the file's key-value metadata: the schema's, as written)
        except (OSError, pa.ArrowInvalid) as e:
            raise StoreError(f"{f}: cannot read parquet: {e}") from e
        out.append({k.decode()[len("qlabench."):]: v.decode(errors="replace") for k, v in meta.items()
                    if k.startswith(b"qlabench.")})
    return out


def read_rows(path: str | os.PathLike) -> list[ResultRow]:
    """Rows of one file as validated ResultRow records; a row that is not one is a RowError naming the file."""
    out = []
    for i, d in enumerate(read_table(path).to_pylist()):
        try:
            out.append(ResultRow(**d))
        except RowError as e:
            what = " ".join(str(d.get(c)) for c in ("backend", "mode", "seqlens") if d.get(c) is not None)
            raise RowError(f"{path}: row {i + 1} ({what}): {e}") from None
    return out


def latest_per_point(df: pd.DataFrame, by: tuple[str, ...] = ()) -> pd.DataFrame:
    """Keep only the newest row for each (backend, workload) key, and each value of `by` (e.g. the device):
    re-runs supersede older runs."""
    from qlabench.store.keys import KEY_COLUMNS, newest_rows

    return newest_rows(df, tuple(dict.fromkeys(KEY_COLUMNS + tuple(by))))
