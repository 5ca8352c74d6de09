"""Reading a set of result files as evidence: the rows, where each came from, and what a view must say.

`paths` is the whole set: which folders are current is the caller's to say (the results catalog passes
the current ones; a user names files). Rows come in the current schema (store/schema.py), with a
`source_file` column; one run read from two files is checked (runs.py); `all_runs=False` keeps the newest
row per point and GPU model (problem.py: newest_per_point, the one rule).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from qlabench.analyze.evidence.runs import check_runs
from qlabench.analyze.evidence.replicates import newest_per_point
from qlabench.store.files import read_results


@dataclass(frozen=True)
class Evidence:
    rows: pd.DataFrame  # current schema, plus `source_file`
    paths: tuple[Path, ...]  # what was asked for
    notes: tuple[str, ...] = field(default=())  # lines a view prints under its table

    def frame(self) -> pd.DataFrame:
        """The rows with the notes attached (evidence_notes(frame) gives them back)."""
        rows = self.rows.copy()
        rows.attrs[NOTES_ATTR] = list(self.notes)
        return rows

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.rows["source_file"]))) if "source_file" in self.rows else ()


# Where the notes of a read travel with its rows (pandas attrs), for a loader that returns a frame alone.
NOTES_ATTR = "qlabench_evidence_notes"


def evidence_notes(rows: pd.DataFrame) -> list[str]:
    """The notes the layer attached to rows it read (read_evidence(...).frame()); [] for other frames."""
    return list(rows.attrs.get(NOTES_ATTR, ()))


def read_evidence(paths: Iterable[str | os.PathLike], columns: Iterable[str] | None = None,
                  all_runs: bool = False) -> Evidence:
    """The rows of `paths` (files or folders): see the module docstring. StoreError when nothing can be read,
    EvidenceError when two files of one run disagree."""
    paths = tuple(Path(p) for p in paths)
    df = read_results(paths, columns, source=True)
    df, unknown = _label_unknown_runs(df)
    df, notes = check_runs(df)
    notes = unknown + list(notes)
    if not all_runs:
        df = newest_per_point(df)
    return Evidence(df.reset_index(drop=True), paths, tuple(notes))


UNKNOWN_RUN = "unknown run"


def _label_unknown_runs(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Rows without a run id (a file written by hand, or edited) under a label of their own, one per file: never
    dropped by a view's grouping by run, and never one run with another file's such rows. Said in a note."""
    if "run_id" not in df.columns or df.empty:
        return df, []
    missing = df["run_id"].isna() | (df["run_id"].astype(str).str.strip() == "")
    if not missing.any():
        return df, []
    df = df.copy()
    labels = [f"{UNKNOWN_RUN} ({f})" for f in df.loc[missing, "source_file"]]
    df.loc[missing, "run_id"] = labels
    counts = pd.Series(labels).value_counts(sort=False)
    return df, [f"{n} row(s) carry no run id: shown as run '{label}'" for label, n in counts.items()]
