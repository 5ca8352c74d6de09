"""Merging the outputs of a sharded (or otherwise split) sweep into one result file, with checks.

The shards of `qlabench run sweep --shard I/N` each write their own run(s). `merge_results` reads them
all and keeps one row per point (its identity, core/identity.py) and replicate:
  - the point's `ok` row, if it has one: a shard that was resumed holds an earlier error row and a
    later ok row of the same point, which is normal and not a duplicate;
  - otherwise its newest row (so a point that is skipped or incorrect everywhere keeps its reason).
It reports, and `MergeReport.ok` is false for:
  - duplicated: a point with more than one `ok` row of one replicate (two shards measured it:
    overlapping shard specs, or a shard run twice without --resume);
  - missing: a point of the suite with no row at all (only when the suite is given);
  - unexpected: a row of a point, or of a suite, that the given suite does not have;
  - mixed suites: rows of more than one suite name;
  - not believed: an `ok` row the evidence layer's rule does not believe (an impossible time, an error over
    its tolerance, no check, a reason on an ok row: analyze/evidence/belief.py), named with its file. The
    rule sits above the store, so the caller passes it in (`row_rule`; `qlabench merge` does).
A file is read once however often it is given (a folder given twice is no duplicate measurement), and a
row that is no valid row is refused with its file's name (store/files.read_rows).
Points whose only rows are not ok are counted per status but are not a failure: they were
measured, and `--resume` on the shard re-measures error rows.
"""

from __future__ import annotations

import collections
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from qlabench.core.errors import QlabenchError, StoreError
from qlabench.core.point import Point
from qlabench.core.result import ResultRow, Status
from qlabench.core.spec import Suite
from qlabench.store.files import read_rows, result_files, write_rows
from qlabench.store.locks import locked



@dataclass
class MergeReport:
    files: list[Path]
    rows: list[ResultRow]  # one per point and replicate, in the order they were first seen
    suite: str | None  # the suite checked against, if any
    missing: list[Point] = field(default_factory=list)
    duplicated: dict[Point, int] = field(default_factory=dict)  # point -> ok rows of its most repeated replicate
    unexpected: list[Point] = field(default_factory=list)
    suites_seen: list[str] = field(default_factory=list)
    rows_read: int = 0
    points: int = 0  # distinct points among `rows` (fewer than rows when a run has replicates)
    fingerprints: int = 0  # distinct env fingerprints: more than one means different GPUs or versions
    not_believed: list[str] = field(default_factory=list)  # 'file: point: why' per ok row the row rule refuses

    @property
    def status_counts(self) -> dict[str, int]:
        return dict(collections.Counter(r.status for r in self.rows))

    @property
    def ok(self) -> bool:
        return not (self.missing or self.duplicated or self.unexpected or self.not_believed
                    or len(self.suites_seen) > 1)

    def problems(self) -> list[str]:
        out = []
        if len(self.suites_seen) > 1:
            out.append(f"rows of {len(self.suites_seen)} suites: {', '.join(self.suites_seen)}")
        if self.missing:
            out.append(f"{len(self.missing)} point(s) of suite {self.suite!r} have no row")
        if self.duplicated:
            out.append(f"{len(self.duplicated)} point(s) have more than one ok row")
        if self.unexpected:
            out.append(f"{len(self.unexpected)} row(s) are of points not in suite {self.suite!r}")
        if self.not_believed:
            out.append(f"{len(self.not_believed)} ok row(s) cannot be believed: {self.not_believed[0]}"
                       + (f" (and {len(self.not_believed) - 1} more)" if len(self.not_believed) > 1 else ""))
        return out


def _read_rows(paths: Iterable[str | os.PathLike]) -> tuple[list[Path], list[ResultRow], dict[int, Path]]:
    files = result_files(paths)
    rows, home = [], {}
    for f in files:
        for r in read_rows(f):
            home[id(r)] = f
            rows.append(r)
    return files, rows, home


# A row rule: the rows as a DataFrame (one per merged ok row) -> the same rows, each ok row the rule does not
# believe turned into `error` or `incorrect` with its reason (analyze.evidence.believed).
RowRule = Callable[[pd.DataFrame], pd.DataFrame]


def _not_believed(rows: list[ResultRow], home: dict[int, Path], row_rule: RowRule) -> list[str]:
    oks = [r for r in rows if r.ok]
    if not oks:
        return []
    judged = row_rule(pd.DataFrame([r.as_dict() for r in oks]))
    return [f"{home[id(r)]}: {Point.from_row(r).label()}: {why}"
            for r, status, why in zip(oks, judged["status"], judged["reason"]) if status != Status.OK.value]


def merge_results(paths: Iterable[str | os.PathLike], suite: Suite | None = None,
                  row_rule: RowRule | None = None) -> MergeReport:
    """Read result files/folders and merge them to one row per point and replicate; see the module doc.
    `row_rule`: the evidence layer's rule for a believed row, applied to every merged ok row."""
    files, rows, home = _read_rows(paths)
    if not rows:  # nothing to merge is an input error (exit 2), not an empty merged file
        raise StoreError(f"no rows in {', '.join(map(str, files))}: nothing to merge")
    # A point's replicates (`run sweep --replicates K`) are K rows of one run, one per replicate: each
    # replicate is merged on its own, and only two ok rows of one replicate are a duplicate.
    by_replicate: dict[tuple[Point, int | None], list[ResultRow]] = {}
    for r in rows:
        by_replicate.setdefault((Point.from_row(r), r.replicate), []).append(r)
    merged, duplicated = [], {}
    for (p, _), rs in by_replicate.items():
        oks = [r for r in rs if r.status == Status.OK.value]
        if len(oks) > 1:
            duplicated[p] = max(duplicated.get(p, 0), len(oks))
        merged.append(oks[0] if oks else max(rs, key=lambda r: r.timestamp))
    by_point = dict.fromkeys(p for p, _ in by_replicate)
    report = MergeReport(files=files, rows=merged, suite=suite.name if suite else None, duplicated=duplicated,
                         suites_seen=sorted({r.suite for r in rows}), rows_read=len(rows), points=len(by_point),
                         fingerprints=len({r.env_fingerprint for r in rows}),
                         not_believed=_not_believed(merged, home, row_rule) if row_rule else [])
    if suite is not None:
        wanted = set(suite.points)
        report.missing = [p for p in suite.points if p not in by_point]
        report.unexpected = [p for p in by_point if p not in wanted]
        report.suites_seen = sorted(set(report.suites_seen) | {suite.name})
    return report


def write_merged(report: MergeReport, into: str | os.PathLike, force: bool = False) -> Path:
    """Write the merged rows to `into` atomically; refuses a report with problems, and an existing `into`
    unless `force`. The check and the write hold `into`'s lock: of two merges into one new file, the
    second is refused instead of silently replacing the first's rows."""
    if not report.ok:
        raise QlabenchError("not writing a merge with problems: " + "; ".join(report.problems()))
    meta = {"merged_from": ",".join(str(f) for f in report.files)}
    if report.suite:
        meta["suite"] = report.suite
    with locked(into):
        if not force and Path(into).exists():
            raise StoreError(f"--into {into} exists (written while this merge ran?); pass --force to overwrite it, "
                             "or choose another file")
        return write_rows(into, report.rows, meta)
