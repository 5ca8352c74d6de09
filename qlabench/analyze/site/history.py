"""Each point's time across library versions and commits: every ok row of a library backend in the
results tree, one measurement per run (the median of its replicates' medians).

A point here is the kernel problem a ranking case names (heads, head dims, dtype, sequences, gate and the
other workload axes of core/identity.py) with its backend and mode; the model name is only a label, so
rows of two suites that measured the same heads under different model names are one point, as advise
treats them. Runs are ordered by time and labelled with their library version and commit: a line that
steps at a version change is the library; one that moves at a commit alone is qlabench or the machine.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from qlabench.core import identity
from qlabench.core.identity import workload_axes
from qlabench.store.keys import key_value, point_key

# The model and TP degree only name where the heads came from (core/identity.py); every other workload
# axis, the seed included, is the problem.
POINT_AXES = tuple(a for a in workload_axes() if a not in ("model", "tp"))


@dataclass(frozen=True)
class Measurement:
    run_id: str
    date: str  # the run's first timestamp, to the minute (UTC)
    version: str | None  # the backend's library version
    commit: str | None  # qlabench's git sha, short ('+dirty' kept: the tree had changes)
    folder: str
    median_ms: float
    replicates: int

    @property
    def label(self) -> str:
        return f"{self.version or 'version ?'} @ {self.commit or 'commit ?'}"


@dataclass
class PointHistory:
    backend: str
    library: str
    mode: str
    seqlens: tuple[int, ...]
    gate: str
    key: str
    timer: str
    device: str
    heads: tuple[int, int]  # h_qk, h_v
    dims: tuple[int, int]  # K, V
    dtype: str
    distributed: bool  # a context-parallel point (cp_world_size set)
    runs: list[Measurement] = field(default_factory=list)

    @property
    def versions(self) -> list[str | None]:
        return list(dict.fromkeys(m.version for m in self.runs))

    @property
    def changed(self) -> bool:
        """Measured at more than one library version or commit."""
        return len({(m.version, m.commit) for m in self.runs}) > 1


def _short(sha) -> str | None:
    sha = key_value(sha)
    if not sha:
        return None
    dirty = sha.endswith("+dirty")
    return sha.removesuffix("+dirty")[:7] + ("+dirty" if dirty else "")


def _gate(gate, zero, scale) -> str:
    return identity.gate_label(str(gate), key_value(zero), key_value(scale))


def histories(rows: pd.DataFrame) -> list[PointHistory]:
    """One history per (point, backend, mode, timer, device) of `rows` (source.SiteRows.history()), its
    runs oldest first. The timer and the device split histories: the events timer's time includes the
    launch that the graph timer's leaves out, and another GPU is another line, never a step in this one."""
    if rows.empty:
        return []
    # Grouped on the axes' own values (seqlens as tuples): within one frame each column has one dtype, so
    # equal values group together, and keying every row through store/keys costs seconds on the tree.
    rows = rows.assign(seqlens=rows["seqlens"].map(lambda s: tuple(int(x) for x in s)),
                       timer=rows["timer"].fillna("?"), device=rows["device"].fillna("?"))
    line = ["backend", *POINT_AXES, "timer", "device"]  # POINT_AXES holds the mode
    runs = (rows.sort_values("timestamp")
            .groupby(line + ["run_id"], sort=False, dropna=False)
            .agg(median_ms=("median_ms", "median"), replicates=("median_ms", "size"), date=("timestamp", "first"),
                 version=("version", "first"), commit=("git_sha", "first"), folder=("folder", "first"),
                 library=("library", "first"))
            .reset_index().sort_values(["date", "run_id"]))
    # Plain records grouped by the line's number: a pandas lookup per group and axis costs seconds.
    runs["_line"] = runs.groupby(line, sort=False, dropna=False).ngroup()
    by_line: dict[int, list[dict]] = {}
    for r in runs.to_dict("records"):
        by_line.setdefault(r["_line"], []).append(r)
    out = []
    for recs in by_line.values():
        first = recs[0]
        h = PointHistory(str(first["backend"]), str(first["library"]), str(first["mode"]), first["seqlens"],
                         _gate(first["gate"], first["gate_zero_frac"], first["gate_scale"]),
                         point_key(first[a] for a in POINT_AXES), str(first["timer"]), str(first["device"]),
                         (int(first["h_qk"]), int(first["h_v"])), (int(first["K"]), int(first["V"])),
                         str(first["dtype"]), key_value(first["cp_world_size"]) is not None)
        h.runs = [Measurement(str(r["run_id"]), str(r["date"])[:16].replace("T", " "), key_value(r["version"]),
                              _short(r["commit"]), str(r["folder"]), float(r["median_ms"]), int(r["replicates"]))
                  for r in recs]
        out.append(h)
    return out
