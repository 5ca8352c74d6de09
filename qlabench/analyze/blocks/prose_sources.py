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

from qlabench.analyze.blocks.prose_numbers import Numbers, text_numbers
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


def _plain(v):
    if v is None or (isinstance(v, float) and v != v):
        return None
    if isinstance(v, (list, tuple, np.ndarray)):
        return tuple(int(x) for x in v)
    return v.item() if isinstance(v, np.generic) else v


def _values(column) -> list[float]:
    out = []
    for v in column:
        if isinstance(v, dict):
            v = list(v.values())
        elif isinstance(v, list) and v and isinstance(v[0], tuple):  # a map read as (key, value) pairs
            v = [x for _, x in v]
        if isinstance(v, (list, tuple, np.ndarray)):
            out += [float(x) for x in v if x is not None]
        elif v is not None and v == v:
            out.append(float(v))
    return out


def _row_numbers(frames: list, columns: tuple[str, ...]) -> RowNumbers:
    import pandas as pd

    rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    times, by_shape = [], {}
    samples = rows["samples_ms"] if "samples_ms" in rows else [None] * len(rows)
    shape_cols = [c for c in SHAPE if c in rows]
    shapes = zip(*(rows[c] for c in shape_cols)) if shape_cols else [()] * len(rows)
    for m, xs, shape in zip(rows.get("median_ms", [None] * len(rows)), samples, shapes):
        if m is not None and m == m:
            times.append(float(m))
            if m > 0:
                by_shape.setdefault(tuple(map(_plain, shape)), []).append(float(m))
        if xs is not None and len(xs):
            arr = np.asarray(xs, dtype=float)
            arr = arr[np.isfinite(arr)]
            if len(arr):
                times += [float(arr.min()), float(arr.max()), *map(float, np.percentile(arr, DECILES))]
    ratios = [1.0] if by_shape else []  # a row against itself: the '1.00x' of a 'vs X' column's own row
    for ms in by_shape.values():
        a = np.asarray(ms)
        if len(a) > 1:  # every ordered pair of two rows (not a row with itself)
            ratios += (a[:, None] / a[None, :])[~np.eye(len(a), dtype=bool)].tolist()
    if "mean_ms" in rows:
        times += [float(m) for m in rows["mean_ms"] if m is not None and m == m]
    named = {c: Numbers((v, None) for v in _values(rows[c])) for c in columns if c in rows}
    return RowNumbers(Numbers((t, None) for t in times), Numbers((r, None) for r in ratios), len(rows), named)


@dataclass
class Sources:
    """The cited runs and files of every page, loaded once (`load_sources`)."""
    root: Path
    columns: tuple[str, ...] = ()  # the named result columns read
    frames: dict[str, list] = field(default_factory=dict)  # run spec -> its rows (one frame per file)
    missing_runs: dict[str, str] = field(default_factory=dict)  # run spec -> why it cannot be cited
    files: dict[str, Numbers] = field(default_factory=dict)
    missing_files: dict[str, str] = field(default_factory=dict)  # path -> why it cannot be cited
    _cache: dict = field(default_factory=dict)

    def rows(self, runs: tuple[str, ...]) -> RowNumbers:
        key = tuple(sorted(set(runs)))
        if key not in self._cache:
            self._cache[key] = _row_numbers([f for r in key for f in self.frames.get(r, [])], self.columns)
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
            df = read_table(f, ("median_ms", "samples_ms", "mean_ms", *src.columns)).to_pandas()
        except QlabenchError as e:
            for spec, _ in specs:
                src.missing_runs[spec] = f"whose file cannot be read ({e})"
            continue
        for spec, rid in specs:
            src.frames.setdefault(spec, []).append(df if rid is None else df[df["run_id"] == rid])
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
