"""One ranked entry per backend for one case: its time, speedup against the user's current choice, noise,
correctness and where the number came from.

Only `ok` rows carry a time. A backend whose newest row is incorrect, skipped or an error is listed with
its reason and never ranked above anything. A training step is the forward plus the backward as
autograd runs it (`bwd_train`), both from the same library version; a `fwd_bwd` row, where a run has
one, is used as measured.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

import pandas as pd

from qlabench.analyze.answer.rows import version_column, version_of
from qlabench.analyze.evidence.accuracy import timed_path
from qlabench.core.backend_decl import label_of
from qlabench.core.libraries import package_name
from qlabench.store.keys import key_value

_ERRORS = ("err_o", "err_ht", "err_dq", "err_dk", "err_dv", "err_dg", "err_dbeta", "err_dh0")


@dataclass
class Entry:
    backend: str
    setting: str
    version: str | None
    status: str  # ok, incorrect, skipped, error
    time_ms: float | None = None
    rel_noise: float | None = None  # the larger of the samples' IQR/median and the replicates' spread
    max_err: float | None = None  # largest relative error against the oracle (correctness check)
    reason: str | None = None
    speedup: float | None = None  # current choice's time / this time
    modes: tuple[str, ...] = ()
    runs: tuple[str, ...] = ()
    devices: tuple[str, ...] = ()
    rows: int = 0
    call: str | None = None  # the library call that gets this time, as the backend declares it (calls.py)
    check: str | None = None  # how far its rows were checked, e.g. 'oracle@256 †' (checked.py)
    first_call: str | None = None  # its first calls in a fresh process, cold and warm caches (first_call.py)
    regime: str | None = None  # the timing regime(s) of its ranked rows, e.g. 'sustained' (evidence/regimes.py)
    # the most extra device memory its calls took beyond inputs and outputs (core/device_memory.py); None: not measured
    extra_mem_mib: float | None = None
    # the code path every one of its timed calls took ("cp"/"unsplit", the rows' traced check_path); None where a
    # row traced none or two rows took different ones: an auto setting and a pinned one on the same path ran
    # the same kernels
    path: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.time_ms is not None

    def as_dict(self) -> dict:
        """Plain JSON values: tuples as lists, a non-finite number as null (JSON has no NaN)."""
        return {k: (list(v) if isinstance(v, tuple) else None if isinstance(v, float) and not math.isfinite(v)
                    else v) for k, v in self.__dict__.items()}


@dataclass
class _Part:
    """One mode's measurement of one backend: the replicates of its newest run."""

    status: str
    time_ms: float | None
    rel_noise: float | None
    max_err: float | None
    reason: str | None
    runs: set = field(default_factory=set)
    devices: set = field(default_factory=set)
    rows: int = 0
    extra_mem_mib: float | None = None
    paths: frozenset = frozenset()  # the timed paths its rows traced; None among them: a row traced none


def _device(row) -> str:
    """'NVIDIA H200 #0 GPU-1a2b3c4d': the model, the index and, where recorded, the card (two hosts of one
    model, each calling itself `vm`, are two cards)."""
    idx = key_value(row.get("device_index"))
    card = key_value(row.get("gpu_uuid"))
    return f"{row['device']}" + (f" #{idx}" if idx is not None else "") + (f" {str(card)[:12]}" if card else "")


def _part(rows: pd.DataFrame) -> _Part:
    cols = [c for c in ("device", "device_index", "gpu_uuid") if c in rows]
    runs, devices = set(rows["run_id"]), {_device(r) for r in rows[cols].to_dict("records")}
    bad = rows[rows["status"] != "ok"]
    if not bad.empty:  # one failed replicate is enough: a time next to a failure is not believed
        r = bad.sort_values("timestamp").iloc[-1]
        return _Part(str(r["status"]), None, None, None, key_value(r.get("reason")), runs, devices, len(rows))
    medians = [float(m) for m in rows["median_ms"]]
    mid = statistics.median(medians)
    noise = [float(x) for x in rows["rel_noise"].dropna()] if "rel_noise" in rows else []
    spread = (max(medians) - min(medians)) / mid if len(medians) > 1 and mid > 0 else None
    known = [x for x in (statistics.median(noise) if noise else None, spread) if x is not None]
    rel = max(known) if known else None
    errs = [float(v) for c in _ERRORS if c in rows for v in rows[c].dropna()]
    mem = [float(v) for v in rows["extra_mem_mib"].dropna()] if "extra_mem_mib" in rows else []
    paths = frozenset(map(timed_path, rows["extra_json"])) if "extra_json" in rows else frozenset({None})
    return _Part("ok", mid, rel, max(errs) if errs else None, None, runs, devices, len(rows),
                 max(mem) if mem else None, paths)


def entry(backend: str, by_mode: dict[str, pd.DataFrame], workload_modes: tuple[str, ...]) -> Entry | None:
    """The backend's entry from its rows per mode; None when it has no row for every mode needed."""
    if "fwd_bwd" in by_mode and len(workload_modes) > 1:  # a training step measured as one call
        parts, modes = [_part(by_mode["fwd_bwd"])], ("fwd_bwd",)
    elif all(m in by_mode for m in workload_modes):
        parts, modes = [_part(by_mode[m]) for m in workload_modes], workload_modes
    else:
        return None
    first = next(iter(by_mode.values())).iloc[0]
    e = Entry(backend, label_of(backend), version_of(first), "ok", modes=modes,
              runs=tuple(sorted(set().union(*(p.runs for p in parts)))),
              devices=tuple(sorted(set().union(*(p.devices for p in parts)))), rows=sum(p.rows for p in parts))
    failed = [p for p in parts if p.status != "ok"]
    if failed:
        e.status, e.reason = failed[0].status, failed[0].reason
        return e
    e.time_ms = sum(p.time_ms for p in parts)
    noises = [p.rel_noise for p in parts if p.rel_noise is not None]
    e.rel_noise = max(noises) if noises else None
    errs = [p.max_err for p in parts if p.max_err is not None]
    e.max_err = max(errs) if errs else None
    mems = [p.extra_mem_mib for p in parts if p.extra_mem_mib is not None]
    e.extra_mem_mib = max(mems) if mems else None
    paths = frozenset().union(*(p.paths for p in parts))
    e.path = next(iter(paths)) if len(paths) == 1 else None
    return e


def rank(rows: pd.DataFrame, workload_modes: tuple[str, ...], current: str) -> list[Entry]:
    """Entries fastest first, then the backends without a time (by status); speedups against `current`."""
    entries = []
    for backend, grp in rows.groupby("backend", sort=False):
        e = entry(str(backend), {str(m): g for m, g in grp.groupby("mode")}, workload_modes)
        if e is not None:
            entries.append(e)
    timed = sorted((e for e in entries if e.ok), key=lambda e: e.time_ms)
    untimed = sorted((e for e in entries if not e.ok), key=lambda e: (e.status, e.backend))
    base = next((e for e in timed if e.backend == current), None)
    for e in timed:
        e.speedup = base.time_ms / e.time_ms if base else None
    return timed + untimed


def version_label(e: Entry) -> str:
    col = version_column(e.backend)
    lib = package_name(col) if col else None
    if not lib:
        return ""
    return f"{lib} {e.version}" if e.version else f"{lib} (version not recorded)"
