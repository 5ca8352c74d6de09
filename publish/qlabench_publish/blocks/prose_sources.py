"""What the runs and files a dated section cites hold, read once for every page `docs check` reads.

A run is cited by its id (searched in the result files under results/) or by the path of a committed
results file or folder (every row under it). Its rows give
- times: each row's median, its fastest and slowest sample and the deciles of its samples;
- ratios: the ratio of the medians of any two of its rows (of the cited runs together) that solve one problem
  shape (mode, sequence lengths, heads, head dims, state pool), whatever else differs (backend, CP setting,
  SM budget, dtype, gate): a `1.82x` or a `+1.1%` change between two rows of the section's runs;
- the values of the numeric result columns the prose names (`sm_coverage`, `compile_s`, `err_o`, ...; every
  element of a list or map column).
A file is a committed text file (a log, a csv, a json, a report): its numbers as they are written.

Each cited parquet is read once, with the columns a time needs; a run id is found from the files' footers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from qlabench_publish.blocks.prose_numbers import Numbers, text_numbers
from qlabench.core.errors import QlabenchError
from qlabench.store.files import read_table, result_files, run_ids

SHAPE = ("mode", "seqlens", "h_qk", "h_v", "K", "V", "pool")
DECILES = tuple(range(10, 100, 10))


@dataclass(frozen=True)
class RowNumbers:
    """What the rows of a dated section's runs hold."""
    times: Numbers
    ratios: Numbers
    rows: int
    columns: dict[str, Numbers]  # a named result column -> its values


@dataclass(frozen=True)
class _RunValues:
    """One cited run's rows, reduced once: its times, each column's values and each shape's medians."""
    times: np.ndarray
    columns: dict[str, np.ndarray]
    medians: dict[tuple, np.ndarray]
    rows: int


def _flat(column: pa.ChunkedArray) -> np.ndarray:
    """Every number of a column: a scalar per row, every element of a list, every value of a map."""
    arr = column.combine_chunks()
    while pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type) or pa.types.is_map(arr.type):
        arr = arr.items if pa.types.is_map(arr.type) else arr.flatten()
    if not (pa.types.is_floating(arr.type) or pa.types.is_integer(arr.type)):
        return np.empty(0)
    return arr.to_numpy(zero_copy_only=False).astype(float)


def _deciles_and_ends(samples: pa.ChunkedArray) -> np.ndarray:
    """Each row's fastest and slowest sample and the deciles of its samples (numpy's linear percentile), for
    every row at once: the samples sorted within their rows, the positions interpolated."""
    arr = samples.combine_chunks()
    lengths = arr.value_lengths().fill_null(0).to_numpy(zero_copy_only=False).astype(int)
    values = arr.flatten().to_numpy(zero_copy_only=False).astype(float)
    row = np.repeat(np.arange(len(lengths)), lengths)
    ok = np.isfinite(values)
    values, row = values[ok], row[ok]
    if not len(values):
        return np.empty(0)
    values = values[np.lexsort((values, row))]
    counts = np.bincount(row, minlength=len(lengths))
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    has = counts > 0
    starts, counts = starts[has], counts[has]
    q = np.array([0, *DECILES, 100]) / 100.0
    pos = q[None, :] * (counts[:, None] - 1)
    lo, frac = np.floor(pos).astype(int), pos - np.floor(pos)
    hi = np.minimum(lo + 1, counts[:, None] - 1)
    low, high = values[starts[:, None] + lo], values[starts[:, None] + hi]
    return (low + frac * (high - low)).ravel()


def _shape_key(values: tuple) -> tuple:
    return tuple(tuple(v) if isinstance(v, list) else v for v in values)


def _run_values(tables: list[pa.Table], columns: tuple[str, ...]) -> _RunValues:
    times, named, medians, n = [], {c: [] for c in columns}, {}, 0
    for t in tables:
        n += t.num_rows
        median = t.column("median_ms").to_numpy(zero_copy_only=False).astype(float) if "median_ms" in \
            t.column_names else np.full(t.num_rows, np.nan)
        times.append(median[np.isfinite(median)])
        if "mean_ms" in t.column_names:
            times.append(_flat(t.column("mean_ms")))
        if "samples_ms" in t.column_names:
            times.append(_deciles_and_ends(t.column("samples_ms")))
        for c in columns:
            if c in t.column_names:
                named[c].append(_flat(t.column(c)))
        shape_cols = [t.column(c).to_pylist() if c in t.column_names else [None] * t.num_rows for c in SHAPE]
        for m, *shape in zip(median, *shape_cols):
            if m > 0:  # NaN is not
                medians.setdefault(_shape_key(tuple(shape)), []).append(m)
    flat = np.concatenate(times) if times else np.empty(0)
    return _RunValues(flat[np.isfinite(flat)], {c: np.concatenate(v) for c, v in named.items() if v},
                      {k: np.asarray(v) for k, v in medians.items()}, n)


def _row_numbers(runs: list[_RunValues]) -> RowNumbers:
    medians: dict[tuple, list[np.ndarray]] = {}
    for r in runs:
        for k, v in r.medians.items():
            medians.setdefault(k, []).append(v)
    ratios = [np.ones(1)] if medians else []  # a row against itself: the '1.00x' of a 'vs X' column's own row
    for parts in medians.values():
        a = np.concatenate(parts)
        if len(a) > 1:  # every ordered pair of two rows (not a row with itself)
            ratios.append((a[:, None] / a[None, :])[~np.eye(len(a), dtype=bool)])
    columns = {c: Numbers(np.concatenate([r.columns[c] for r in runs if c in r.columns]))
               for c in {c for r in runs for c in r.columns}}
    return RowNumbers(Numbers(np.concatenate([r.times for r in runs]) if runs else ()),
                      Numbers(np.concatenate(ratios) if ratios else ()), sum(r.rows for r in runs), columns)


@dataclass
class Sources:
    """The cited runs and files of every page, loaded once (`load_sources`)."""
    root: Path
    columns: tuple[str, ...] = ()  # the named result columns read
    tables: dict[str, list] = field(default_factory=dict)  # run spec -> its rows (one table per file)
    missing_runs: dict[str, str] = field(default_factory=dict)  # run spec -> why it cannot be cited
    files: dict[str, Numbers] = field(default_factory=dict)
    missing_files: dict[str, str] = field(default_factory=dict)  # path -> why it cannot be cited
    _runs: dict = field(default_factory=dict)
    _cache: dict = field(default_factory=dict)

    def rows(self, runs: tuple[str, ...]) -> RowNumbers:
        """What the rows of `runs` hold together (each run reduced once, each set of runs combined once)."""
        key = tuple(sorted(set(runs)))
        if key not in self._cache:
            for r in key:
                if r not in self._runs:
                    self._runs[r] = _run_values(self.tables.get(r, []), self.columns)
            self._cache[key] = _row_numbers([self._runs[r] for r in key])
        return self._cache[key]


def _is_path(spec: str) -> bool:
    return "/" in spec or spec.endswith(".parquet")


def _inside(root: Path, rel: str) -> Path | None:
    p = (root / rel).resolve()
    return p if p.is_relative_to(root.resolve()) and ".." not in Path(rel).parts else None


def load_sources(root: Path, runs: set[str], files: set[str], doc_pages: set[Path],
                 columns: set[str] = frozenset()) -> Sources:
    """Read what `runs` and `files` (as the markers cite them, paths relative to the checkout `root`) hold;
    a run or file that cannot be cited is kept with the reason. `doc_pages`: the pages `docs check` reads,
    which a section may not cite (a page's number is backed by what that page cites, not by the page);
    `columns`: the result columns the prose names, read beside the times."""
    src = Sources(Path(root), tuple(sorted(columns)))
    results = Path(root) / "results"
    wanted: dict[Path, list[tuple[str, str | None]]] = {}  # file -> (spec, run id or None: every row)
    ids = {r for r in runs if not _is_path(r)}
    if ids:
        holders: dict[str, list[Path]] = {}
        try:
            listed = result_files([results]) if results.is_dir() else []
        except QlabenchError:
            listed = []
        for f in listed:
            for rid in run_ids(f) & ids:
                holders.setdefault(rid, []).append(f)
        for rid in ids:
            found = holders.get(rid, [])
            if not found:
                src.missing_runs[rid] = "which no results file holds"
            elif len(found) > 1:
                src.missing_runs[rid] = ("which " + str(len(found)) + " results files hold (" +
                                         ", ".join(str(f.relative_to(root)) for f in found[:4]) +
                                         "): cite the file or folder")
            else:
                wanted.setdefault(found[0], []).append((rid, rid))
    for spec in runs - ids:
        p = _inside(Path(root), spec)
        if p is None or not p.exists():
            src.missing_runs[spec] = "which does not exist" if p is not None else "outside the checkout"
            continue
        try:
            for f in result_files([p]):
                wanted.setdefault(f, []).append((spec, None))
        except QlabenchError as e:
            src.missing_runs[spec] = f"which holds no results ({e})"
    for f, specs in wanted.items():
        try:
            table = read_table(f, ("median_ms", "samples_ms", "mean_ms", *src.columns))
        except QlabenchError as e:
            for spec, _ in specs:
                src.missing_runs[spec] = f"whose file cannot be read ({e})"
            continue
        for spec, rid in specs:
            src.tables.setdefault(spec, []).append(
                table if rid is None else table.filter(pc.equal(table.column("run_id"), rid)))
    for rel in files:
        p = _inside(Path(root), rel)
        if p is None:
            src.missing_files[rel] = "outside the checkout"
        elif not p.is_file():
            src.missing_files[rel] = "which does not exist"
        elif p.suffix == ".parquet":
            src.missing_files[rel] = "a results file: cite it as run="
        elif p in {d.resolve() for d in doc_pages}:
            src.missing_files[rel] = "a page docs check reads: cite the runs or files it cites"
        else:
            try:
                src.files[rel] = text_numbers(p.read_bytes().decode("utf-8"))
            except UnicodeDecodeError:
                src.missing_files[rel] = "not a UTF-8 text file"
            except OSError as e:
                src.missing_files[rel] = f"which cannot be read ({e.strerror or e})"
    return src
