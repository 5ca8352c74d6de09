"""What the site reads, in one narrow place: every row of a results tree, which folder and file it came
from, and which rows are the current answer and which are history.

The site asks only `read_site_rows` and the `SiteRows` it returns; the rows come through the project's
evidence layer (qlabench/analyze/evidence: its tree reader, run check and belief), tagged here with the
catalog's folders.

- The current answer is the rows the results catalog marks current kernel timings (folders.py:
  `Folder.keeps`; other entries hold deliberate slowdowns, superseded runs or one-off experiments, never
  to be ranked as a kernel's speed).
- The history of a point is every ok row of a library backend in the whole tree, whatever folder: the
  time it took at each library version and commit. Rows of test backends (synthetic slowdowns, faults),
  of the naive references and of whole layers have no library version to follow and are left out.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from qlabench.analyze.site.folders import KERNEL_TIMINGS, SERVING, Folder, read_catalog
from qlabench.analyze.evidence import believed
from qlabench.analyze.evidence.hbm_peaks import one_peak, stream_peaks
from qlabench.analyze.evidence import read_evidence
from qlabench.core import versions
from qlabench.core.errors import ConfigError


@dataclass
class SiteRows:
    root: Path
    rows: pd.DataFrame  # every result row, plus `folder` (its catalog entry), `file` (relative to root) and
    folders: list[Folder]  # `current` (the catalog counts it a current kernel timing)

    def current(self) -> pd.DataFrame:
        """The rows that answer "which kernel now"."""
        return self.rows[self.rows["current"]]

    def serving(self) -> pd.DataFrame:
        """The rows of the current serving evidence (decode and mtp steps against a state pool)."""
        return self.rows[self.rows["current_serving"]]

    @property
    def current_folders(self) -> list[str]:
        return sorted(set(self.rows.loc[self.rows["current"], "folder"]))

    def history(self) -> pd.DataFrame:
        """Every ok row of a backend of a library of its own (a library's, an engine's, a plugin's: not qlabench's
        own kernels), each with `library` and `version`: its own library's name and version in its version record
        (core/versions.py)."""
        df = self.rows[self.rows["status"] == "ok"]
        recs = df[[c for c in versions.READ if c in df.columns]].to_dict("records")
        own = pd.Series([versions.own_key(r) for r in recs], index=df.index, dtype=object)
        mine = (own.notna() & (own != versions.OWN_CODE)).to_numpy()
        df = df[mine].copy()
        df["library"] = own[mine]
        df["version"] = [versions.own_version(r) for r, m in zip(recs, mine) if m]
        return df


def folder_of(rel: Path, folders: list[Folder]) -> Folder | None:
    """The catalog entry a file lies in (the deepest that holds it, as the catalog's owner rule)."""
    best = None
    for f in folders:
        parts = Path(f.name).parts
        if rel.parts[: len(parts)] == parts and (best is None or len(parts) > len(Path(best.name).parts)):
            best = f
    return best


def read_site_rows(root: str | os.PathLike) -> SiteRows:
    """Every result row under `root` (a results folder, as committed) through the evidence layer (one run in
    several files checked, impossible or over-tolerance rows not believed), each tagged with its folder."""
    root = Path(root)
    if not root.is_dir():
        raise ConfigError(f"{root}: not a folder; give a results folder (e.g. results)")
    folders = read_catalog(root)
    rows = read_evidence([root], all_runs=True).rows
    df = believed(one_peak(rows, stream_peaks(rows)))  # one HBM peak per GPU model, as the serving page's
    rel = {f: Path(f).relative_to(root) for f in set(df["source_file"])}
    entry = {f: folder_of(r, folders) for f, r in rel.items()}
    files, backends = df["source_file"].tolist(), df["backend"].tolist()
    df = df.assign(folder=[entry[f].name if entry[f] else rel[f].parts[0] for f in files],
                   file=[rel[f].as_posix() for f in files])
    for col, kind in (("current", KERNEL_TIMINGS), ("current_serving", SERVING)):
        df[col] = [entry[f] is not None and entry[f].keeps(b, kind) for f, b in zip(files, backends)]
    return SiteRows(root, df.reset_index(drop=True), folders)
