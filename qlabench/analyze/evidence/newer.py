"""Newer evidence elsewhere: where a results folder beside the ones shown holds a later measurement of the
same problem that disagrees, and what the two rows recorded differently.

Committed results live in several folders (`results/h200`, `results/h200-study`, ...), and the same
problem can be answered in two of them: FLA at 2/8 on one 32768-token sequence reads 1.127 ms in the smoke
run and 0.927 ms in the study. A reader of the older folder is told that newer evidence exists, where,
and why the numbers differ, as far as the rows recorded it (layout, library versions, timer, device,
and the kernel whose time moved most).

The same problem: problem.py (the problem axes of core/identity.py, whatever the layout, seed or model
label). The folders searched are given by the caller (the results catalog's current folders), or by default
the siblings under the evidence root: the highest folder above the ones shown that has a README.md, below
the project's own root (`results/` here). Only the columns compared are read (a fraction of each file).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from qlabench.analyze.evidence.belief import believed
from qlabench.analyze.evidence.kernels import short_name
from qlabench.analyze.evidence.problem import problem_keys
from qlabench.analyze.evidence.records import records
from qlabench.core.errors import QlabenchError, SchemaError
from qlabench.core.identity import problem_axes
from qlabench.core import versions
from qlabench.core.result import CHECKED_TENSORS
from qlabench.store.files import read_table, result_files
from qlabench.store.keys import KEY_COLUMNS, newest_rows, plain_value

# Two medians of one problem disagree beyond this relative difference: between two runs on the H200 the
# same point moves by up to 3.4% (docs/FLASHQLA-STUDY.md), so 5% is more than run-to-run drift.
DISAGREE = 0.05
# What a row records that can make the same problem take another time: these, and the versions of the libraries its
# call used (its version record, core/versions.py; the columns it is derived from in older files).
RECORDED = ("layout", "timer", "device")
# The columns a comparison reads (besides the key, status, timestamp and run id every read keeps), the
# believed-row rule's scalars among them (belief.py); the kernel lists, most of a file's bytes, are read
# afterwards for the disagreeing rows alone.
READ = (RECORDED + versions.READ + ("median_ms", "reason", "oracle", "check_tokens")
        + tuple(f"err_{t}" for t in CHECKED_TENSORS))
KERNEL_COLUMNS = ("kernels", "kernel_dur_us")
KERNEL_NAMES = "kernels.list.element"  # the names' column path inside the parquet file
KERNEL_BATCH = 64  # rows decoded at a time when only some rows' kernel lists are wanted
PROJECT_MARKS = ("pyproject.toml", ".git")
NOT_RESULTS = "not a qlabench results file"  # store/schema.py's reason for a parquet without its metadata
_FOLDER = "_folder"  # which of the searched folders a scanned row is from (its index)
_FILE = "_file"  # which of the scanned files a row is from (its index)


@dataclass(frozen=True)
class NewerEvidence:
    folder: str  # the folder holding the newer rows
    newest: str  # its newest timestamp among the matched rows
    n_points: int  # points shown (ok) that the folder measured again, later
    n_disagree: int  # of those, points whose medians differ by more than DISAGREE
    ratio_range: tuple[float, float] | None  # newer / shown over the disagreeing points
    differences: tuple[tuple[str, int], ...]  # what the disagreeing pairs recorded differently, most common first

    @property
    def line(self) -> str:
        head = (f"newer evidence: {self.n_points} of these points were measured again in {self.folder} "
                f"(up to {self.newest[:10]})")
        if not self.n_disagree:
            return f"{head}; all within {DISAGREE:.0%}"
        lo, hi = self.ratio_range
        why = "; ".join(f"{d} ({n})" for d, n in self.differences[:4]) or "nothing recorded differs"
        return (f"{head}; {self.n_disagree} differ by more than {DISAGREE:.0%} (there / here {lo:.2f}-{hi:.2f}): "
                f"{why}")


@dataclass(frozen=True)
class EvidenceCheck:
    newer: tuple[NewerEvidence, ...] = ()
    unreadable: tuple[str, ...] = ()  # result files under the sibling folders that could not be read, and why

    @property
    def lines(self) -> list[str]:
        """A line per folder whose newer rows disagree, one for those that agree, one for files not read."""
        out = [n.line for n in self.newer if n.n_disagree]
        agree = [n for n in self.newer if not n.n_disagree]
        if agree:
            out.append(f"newer evidence within {DISAGREE:.0%} of these points in " +
                       ", ".join(f"{n.folder} ({n.n_points})" for n in agree))
        if self.unreadable:
            out.append(f"(not searched for newer evidence: {len(self.unreadable)} file(s), e.g. {self.unreadable[0]})")
        return out


def evidence_root(paths: Iterable[str | os.PathLike]) -> Path | None:
    """The highest folder above the shown paths that has a README.md, below a project root; None if none."""
    roots = set()
    for p in map(Path, paths):
        p = p.resolve()
        best = None
        for a in (p if p.is_dir() else p.parent).parents:
            if any((a / m).exists() for m in PROJECT_MARKS):
                break
            if (a / "README.md").is_file():
                best = a
        if best is not None:
            roots.add(best)
    return roots.pop() if len(roots) == 1 else None


def sibling_folders(root: Path, paths: Iterable[str | os.PathLike]) -> list[Path]:
    """The folders directly under `root` holding results, apart from those the shown paths are in or hold and
    those the root's catalog says time something else than a steady call (store/catalog.NOT_STEADY_KINDS)."""
    shown = [Path(p).resolve() for p in paths]
    not_steady = _not_steady(root)
    out = []
    for d in sorted(root.iterdir()):
        if not d.is_dir() or d.name.startswith(".") or d.name in not_steady:
            continue
        if any(s == d or d in s.parents or s in d.parents for s in shown):
            continue
        if next(d.rglob("*.parquet"), None) is not None:
            out.append(d)
    return out


def _not_steady(root: Path) -> set[str]:
    """Names of the folders under `root` whose catalog entry (root/catalog.toml, when there is one) is of a kind
    that is no steady timing; an unreadable catalog hides nothing (the catalog's own check reports it)."""
    from qlabench.store.catalog import CATALOG_NAME, NOT_STEADY_KINDS, load_catalog

    if not (root / CATALOG_NAME).is_file():
        return set()
    try:
        entries = load_catalog(root).entries
    except QlabenchError:
        return set()
    return {Path(e.path).parts[0] for e in entries if e.kind in NOT_STEADY_KINDS and len(Path(e.path).parts) == 1}


def newer_evidence(shown: pd.DataFrame, paths: Iterable[str | os.PathLike],
                   folders: Iterable[str | os.PathLike] | None = None) -> EvidenceCheck:
    """For the rows a command shows (read from `paths`), the folders holding newer rows of the same
    problems, and how far and why those differ. `folders`: where to look (default: the siblings under the
    evidence root; the results catalog passes the current folders)."""
    paths = list(paths)
    ok = shown[shown["status"] == "ok"]
    if folders is None:
        root = evidence_root(paths)
        folders = sibling_folders(root, paths) if root is not None else []
    if ok.empty:
        return EvidenceCheck()
    unreadable: list[str] = []
    folders, where, tables = list(map(Path, folders)), [], []
    for i, folder in enumerate(folders):
        for f, t in zip(*_read_folder(folder, unreadable)):
            tables.append(t.append_column(_FILE, pa.array([len(where)] * t.num_rows, pa.int64()))
                          .append_column("source_row", pa.array(range(t.num_rows), pa.int64())))
            where.append((i, f))
    if not tables:
        return EvidenceCheck((), tuple(unreadable))
    # Every folder's rows converted, narrowed, keyed and reduced to the newest per problem at once (a folder at
    # a time cost a conversion, a filter and the keys per folder: most of the scan); then each folder is paired.
    # The scan reads each file's key columns alone; the compared columns only of the rows of a shown problem.
    mine = _Shown(ok)
    found, hit_keys = _shown_problems(ok, mine.keys, pa.concat_tables(tables).to_pandas())
    hits = _compared_rows(found, where, unreadable)
    if hits is None:  # no row of a shown problem anywhere else
        return EvidenceCheck((), tuple(unreadable))
    newest = _newest_believed(hits, pd.Series(hit_keys.to_numpy(), index=hits.index))
    newer = [_evidence(_rel(folders[i]), *found) for i, found in _compare(mine, newest).items()]
    return EvidenceCheck(tuple(newer), tuple(unreadable))


class _Shown:
    """The shown ok rows as the pairing reads them: their problem keys, times and medians; a row's record (what it
    recorded, its kernels) only for the rows that disagree with a newer one."""

    COLUMNS = tuple(dict.fromkeys(KEY_COLUMNS + READ + KERNEL_COLUMNS + ("timestamp", "status")))

    def __init__(self, ok: pd.DataFrame):
        self.frame = ok[[c for c in self.COLUMNS if c in ok]]
        self.keys = problem_keys(ok)
        self.stamps = [str(v) for v in ok["timestamp"].tolist()]
        self.medians = ok["median_ms"].tolist()

    def records(self, positions: list[int]) -> list[dict]:
        return records(self.frame.iloc[positions])


def _shown_problems(shown: pd.DataFrame, shown_keys: pd.Series, other: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """The ok rows of `other` of a problem shown, and their problem keys. Most of a folder is other problems:
    a cheap filter on a few axes comes before the keys are built, which read the problem's columns alone, and
    the rows are selected once at the end (each selection of the whole frame copies every column)."""
    mask = other["status"] == "ok"
    for c in ("backend", "mode", "h_qk", "h_v", "K", "V", "dtype"):
        mask &= other[c].isin(set(shown[c]))
    at = np.flatnonzero(mask.to_numpy())
    candidates = other[[c for c in (*problem_axes(), "timestamp") if c in other]].iloc[at]
    theirs_keys = problem_keys(candidates)
    # only a row measured after a shown row of its problem can pair with one (_compare): the rest is dropped
    # before any is judged
    oldest: dict[str, str] = {}  # (in Python: a groupby of text runs through pyarrow's query engine, and imports it)
    for key, stamp in zip(shown_keys.tolist(), (str(v) for v in shown["timestamp"].tolist())):
        if key not in oldest or stamp < oldest[key]:
            oldest[key] = stamp
    after = theirs_keys.map(oldest)
    hit = (after.notna() & (candidates["timestamp"].astype(str) > after.fillna(""))).to_numpy()
    return other.iloc[at[hit]], theirs_keys[hit]


def _newest_believed(hits: pd.DataFrame, hit_keys: pd.Series) -> pd.DataFrame:
    """The newest row of each folder and problem that a view believes (`_p`: the problem's key): a newer time no
    view believes is no newer evidence, and the next newest then counts. The rule reads each row it judges, so
    it judges the newest ones only, and again where it refused one."""
    # `_row` names a hit in every round: the newest rows come renumbered, so their index names no row of `hits`
    hits = hits.assign(_p=hit_keys, _row=range(len(hits)))
    while True:
        newest = newest_rows(hits, (), keys=hits[_FOLDER].astype(str) + " " + hits["_p"])
        refused = newest.loc[(believed(newest)["status"] != "ok").to_numpy(), "_row"]
        if refused.empty:
            return newest.drop(columns="_row")
        hits = hits[~hits["_row"].isin(refused)]


def _compared_rows(found: pd.DataFrame, where: list[tuple[int, Path]], unreadable: list[str]) -> pd.DataFrame | None:
    """The compared columns (READ) of the rows `found` (the scan's key columns, `_file` and `source_row` naming
    each row's file and position there), in the same order, with their file and folder."""
    parts = []
    for n, rows in found.groupby(_FILE, sort=True)["source_row"]:
        folder, f = where[n]
        got = _read_one(f, READ)
        if not isinstance(got, pa.Table):  # (read a moment ago: only a file changed since is refused here)
            unreadable.append(got if isinstance(got, str) else f"{f}: no longer a results file")
            continue
        at = rows.to_numpy()
        parts.append(got.take(pa.array(at)).append_column("source_file", pa.array([str(f)] * len(at), pa.string()))
                     .append_column("source_row", pa.array(at, pa.int64()))
                     .append_column(_FOLDER, pa.array([folder] * len(at), pa.int64())))
    return pa.concat_tables(parts).to_pandas() if parts else None


def _read_one(f: Path, columns: tuple[str, ...] = ()) -> pa.Table | str | None:
    """The key columns of one file and `columns`; why it could not be read (a string); None for a parquet that is
    no results file (a derived table is no evidence)."""
    try:
        return read_table(f, columns)
    except SchemaError as e:
        return None if NOT_RESULTS in str(e) else str(e)
    except QlabenchError as e:
        return str(e)


def _read_folder(folder: Path, unreadable: list[str]) -> tuple[list[Path], list[pa.Table]]:
    files = result_files([folder])
    # (one at a time: reading these small files on threads cost more CPU and wall time on 2 cores, measured)
    got = [_read_one(f) for f in files]
    unreadable += [g for g in got if isinstance(g, str)]
    ok = [(f, g) for f, g in zip(files, got) if isinstance(g, pa.Table)]
    return [f for f, _ in ok], [g for _, g in ok]


def _compare(mine: _Shown, newest: pd.DataFrame) -> dict[int, tuple[list[str], list[float], Counter]]:
    """Pair each shown ok row with its problem's newest row in each folder (`newest`: one row per folder and
    problem, `_p` the problem's key), when that row was measured after it. Per folder with a pair: the newer
    rows' times, the ratios of the pairs that disagree, and what those recorded differently. Paired on the key,
    time and median alone; only the disagreeing rows of every folder become records, at once."""
    folder_of, stamps, medians = newest[_FOLDER].tolist(), [str(v) for v in newest["timestamp"].tolist()], \
        newest["median_ms"].tolist()
    at = {(f, key): j for j, (f, key) in enumerate(zip(folder_of, newest["_p"].tolist()))}
    pairs: dict[int, list[tuple[int, int]]] = {}  # folder -> (a shown row's position, its newer row's position)
    for f in sorted(set(folder_of)):
        for i, key in enumerate(mine.keys):
            j = at.get((f, key))
            if j is not None and stamps[j] > mine.stamps[i]:
                pairs.setdefault(f, []).append((i, j))
    disagree = [(f, i, j, r) for f, ps in pairs.items() for i, j in ps
                if abs((r := float(medians[j]) / float(mine.medians[i])) - 1) > DISAGREE]
    mine_rows = mine.records([i for _, i, _, _ in disagree])
    theirs_rows = records(newest.iloc[[j for _, _, j, _ in disagree]],
                          [c for c in newest.columns if c not in ("_p", _FOLDER)])
    kernels = _kernel_rows(theirs_rows)
    out = {f: ([stamps[j] for _, j in ps], [], Counter()) for f, ps in pairs.items()}
    for (f, _, _, ratio), m, theirs in zip(disagree, mine_rows, theirs_rows):
        out[f][1].append(ratio)
        out[f][2].update(recorded_differences(m, {**theirs, **kernels.get(id(theirs), {})}))
    return out


def _evidence(folder: str, stamps: list[str], ratios: list[float], why: Counter) -> NewerEvidence:
    return NewerEvidence(folder=folder, newest=max(stamps), n_points=len(stamps), n_disagree=len(ratios),
                         ratio_range=(min(ratios), max(ratios)) if ratios else None,
                         differences=tuple(why.most_common()))


def _kernel_rows(rows: list[dict]) -> dict[int, dict]:
    """The kernel lists of rows read without them (id(row) -> {column: list}), from their files (`source_file`
    at `source_row`): the two list columns alone, as stored (every schema version has them), and of each
    file only the batches up to the last row wanted."""
    wanted: dict[str, list[dict]] = {}
    for r in rows:
        if "kernels" not in r and r.get("source_file"):
            wanted.setdefault(r["source_file"], []).append(r)
    out = {}
    for path, rs in wanted.items():
        # The names as a dictionary (as stored): decoding a file's every kernel name into its own string cost
        # most of a `show` (0.4 s for one numerics file); the values read back are the same names.
        pf = pq.ParquetFile(path, read_dictionary=[KERNEL_NAMES])
        cols = [c for c in KERNEL_COLUMNS if c in pf.schema_arrow.names]
        last = max(int(r["source_row"]) for r in rs)
        batches, n = [], 0
        for b in pf.iter_batches(batch_size=KERNEL_BATCH, columns=cols):
            batches.append(b)
            n += b.num_rows
            if n > last:
                break
        t = pa.Table.from_batches(batches, schema=batches[0].schema if batches else None)
        for r in rs:
            out[id(r)] = {c: t.column(c)[int(r["source_row"])].as_py() for c in cols}
    return out


def recorded_differences(mine: dict, theirs: dict) -> list[str]:
    """What two rows of one problem recorded differently, e.g. 'layout dense here, varlen there', and the
    kernel whose time moved most."""
    out = []
    for c in RECORDED:
        a, b = plain_value(mine.get(c)), plain_value(theirs.get(c))
        if a is not None and b is not None and a != b:
            out.append(f"{c} {a} here, {b} there")
    a, b = versions.versions_of(mine), versions.versions_of(theirs)
    for key in a:
        if key in b and a[key] != b[key]:
            out.append(f"{versions.short(key, a[key])} here, {b[key][:12] if key.endswith(versions.COMMIT) else b[key]}"
                       " there")
    moved = most_moved_kernel(mine, theirs)
    if moved:
        out.append(f"the kernel that moved most: {moved}")
    return out


def _kernel_us(row: dict) -> dict[str, float]:
    names, durs = plain_value(row.get("kernels")) or (), plain_value(row.get("kernel_dur_us")) or ()
    out: dict[str, float] = {}
    if len(names) != len(durs):
        return out
    short: dict[str, str] = {}  # a call launches a few kernels many times: each name shortened once
    for n, d in zip(names, durs):
        if d is not None and d == d:
            s = short.get(n)
            if s is None:
                s = short[n] = short_name(n)
            out[s] = out.get(s, 0.0) + float(d)
    return out


def most_moved_kernel(mine: dict, theirs: dict) -> str | None:
    a, b = _kernel_us(mine), _kernel_us(theirs)
    common = set(a) & set(b)
    if not common:
        return None
    return max(common, key=lambda n: abs(b[n] - a[n]))


def _rel(folder: Path) -> str:
    try:
        return str(folder.relative_to(Path.cwd()))
    except ValueError:
        return str(folder)
