"""One ranked entry per backend for one case: its time in the launch regime asked for, speedup against the
user's current choice, noise, correctness and where the number came from.

Only `ok` rows carry a time. A backend whose newest row is incorrect, skipped or an error is listed with
its reason and never ranked above anything. A row is ranked on the time of the launch regime asked for
(core/launch.py: `device_ms` for a CUDA graph, `eager_ms` for calls launched eagerly); one that has no time
in that regime, or that was checked only on a reduced problem (`checked_at_size` false: a kernel right on a
few hundred tokens may be wrong beyond), is shown `unranked` with the reason, never ranked nor given a
speedup. A training step is one `fwd_bwd` row (forward and backward through the library's autograd, one
call): never a sum of rows of two modes, which may come from two runs or two GPUs.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

import pandas as pd

from qlabench.analyze.answer.rows import version_name, version_of
from qlabench.analyze.evidence.accuracy import timed_path
from qlabench.analyze.evidence.records import records
from qlabench.analyze.evidence.replicates import median_and_noise
from qlabench.core.backend_decl import find, label_of
from qlabench.core.launch import TIME_COLUMN
from qlabench.core.libraries import version_columns
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
    # the three times of its rows (core/launch.py), whatever regime it is ranked in; None: not recorded
    device_ms: float | None = None
    eager_ms: float | None = None
    host_ms: float | None = None
    # the measurements of its call at this point in fresh processes (every current run's and replicate's, its
    # ranked run's included) and the range of their times in the ranked regime (spread.py, between_processes)
    processes: int = 1
    process_range: tuple[float, float] | None = None
    launch_bound: bool | None = None  # its eager time exceeds its device time beyond noise
    launch: str | None = None  # the launch regime its time_ms is ("graph" or "eager")
    own_noise: float | None = None  # rel_noise before the same-call floor was applied (ties.apply_floor)

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
    times: dict = field(default_factory=dict)  # device_ms, eager_ms, host_ms: the median over its rows
    launch_bound: bool | None = None


def _device(row) -> str:
    """'NVIDIA H200 #0 GPU-1a2b3c4d': the model, the index and, where recorded, the card (two hosts of one
    model, each calling itself `vm`, are two cards)."""
    idx = key_value(row.get("device_index"))
    card = key_value(row.get("gpu_uuid"))
    return f"{row['device']}" + (f" #{idx}" if idx is not None else "") + (f" {str(card)[:12]}" if card else "")


def _na(v) -> bool:
    """A missing value as pandas' dropna/isna sees one in a record: None, NaN, pandas' NA or NaT."""
    return v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and v != v)


def _values(rows: list[dict], column: str) -> list:
    """`rows[column].dropna()` of the records: [] where the frame had no such column."""
    return [v for r in rows if not _na(v := r[column])] if rows and column in rows[0] else []


def _median(rows: list[dict], column: str) -> float | None:
    vals = [float(v) for v in _values(rows, column)]
    return statistics.median(vals) if vals else None


# The modes whose calls run the forward, where a declaration's CP mark (a forward kernel's name) says the path.
_FORWARD_MODES = ("fwd", "fwd_bwd")


def row_path(backend: str, extra_json, kernels, mode: str = "fwd") -> str | None:
    """The code path a row's call took: as traced for it (`check_path`'s timed side, or `call_path`), else read
    off its recorded kernels by its declaration's CP mark (rows of a pinned setting traced none), in a mode whose
    call runs the forward (a backward alone launches no forward kernel to read)."""
    traced = timed_path(extra_json)
    if traced is not None:
        return traced
    if mode not in _FORWARD_MODES:
        return None
    d = find(backend)
    mark = d.cp_mark if d is not None else ""
    names = list(kernels) if kernels is not None and not isinstance(kernels, float) else []
    if not mark or not names:
        return None
    return "cp" if any(mark in str(k) for k in names) else "unsplit"


# Why rows are unranked where a new run of today's qlabench makes them rankable: it checks every row at its own size
# and times every CUDA call eagerly too. A call that cannot be captured in a CUDA graph stays without a graph time, so
# that reason is not one a new run fixes.
NOT_AT_SIZE = "not checked at this call's size"
NO_EAGER = "no eager time (not measured"


def remeasurable(e: Entry) -> bool:
    """The entry is unranked for a reason a new run fixes (`advise --measure` and `--suite-out` measure it again)."""
    return e.status == "unranked" and (e.reason or "").startswith((NOT_AT_SIZE, NO_EAGER))


def _unranked(rows: list[dict], launch: str) -> str | None:
    """Why rows with a time are shown unranked in `launch`: checked on a reduced problem only, or no time of
    that regime recorded (the other regime's is shown)."""
    has = rows[0]
    if "checked_at_size" in has and not all(not _na(v) and bool(v) for v in (r["checked_at_size"] for r in rows)):
        tokens = sorted({int(t) for t in _values(rows, "check_tokens")})
        on = f" (checked on {tokens[0]} tokens)" if tokens else ""
        return f"{NOT_AT_SIZE}{on}: unverified, never ranked"
    col = TIME_COLUMN[launch]
    if not _values(rows, col):
        timer = sorted({str(t) for t in _values(rows, "timer")})
        what = "no CUDA-graph time (its call was not captured" if launch == "graph" else NO_EAGER
        return f"{what}{': timed with ' + '/'.join(timer) if timer else ''})"
    return None


def _part(rows: list[dict], backend: str, launch: str) -> _Part:
    """One mode's part from the records of its rows (a group of `rank`'s, never empty)."""
    has = rows[0]
    runs, devices = {r["run_id"] for r in rows}, {_device(r) for r in rows}
    bad = [r for r in rows if r["status"] != "ok"]
    if bad:  # one failed replicate is enough: a time next to a failure is not believed
        r = sorted(bad, key=lambda r: (_na(r["timestamp"]), "" if _na(r["timestamp"]) else r["timestamp"]))[-1]
        return _Part(str(r["status"]), None, None, None, key_value(r.get("reason")), runs, devices, len(rows))
    times = {c: _median(rows, c) for c in ("device_ms", "eager_ms", "host_ms")}
    bound = [bool(v) for v in _values(rows, "launch_bound")]
    errs = [float(v) for c in _ERRORS for v in _values(rows, c)]
    mem = [float(v) for v in _values(rows, "extra_mem_mib")]
    paths = frozenset(row_path(backend, r.get("extra_json"), r.get("kernels"), r.get("mode", "fwd")) for r in rows)
    part = _Part("ok", None, None, max(errs) if errs else None, None, runs, devices, len(rows),
                 max(mem) if mem else None, paths, times, any(bound) if bound else None)
    why = _unranked(rows, launch)
    if why is not None:
        part.status, part.reason = "unranked", why
        return part
    medians = [float(m) for m in _values(rows, TIME_COLUMN[launch])]
    noise_col = "rel_noise" if launch == "graph" else "eager_rel_noise"
    noise = [float(x) for x in _values(rows, noise_col)]
    # an eager time recorded by an older row's events timer carries its noise in rel_noise
    if not noise and "rel_noise" in has and launch == "eager":
        noise = [float(x) for x in _values([r for r in rows if r["timer"] in ("events", "wall")], "rel_noise")]
    part.time_ms, part.rel_noise = median_and_noise(medians, noise)  # as a folded row of replicates holds it
    return part


def entry(backend: str, by_mode: dict[str, list[dict]], workload_modes: tuple[str, ...],
          launch: str = "graph") -> Entry | None:
    """The backend's entry from the records of its rows of the workload's mode; None when it has none."""
    mode = workload_modes[0]
    if not by_mode.get(mode):
        return None
    part = _part(by_mode[mode], backend, launch)
    first = by_mode[mode][0]
    e = Entry(backend, label_of(backend), version_of(first), part.status, modes=(mode,), runs=tuple(sorted(part.runs)),
              devices=tuple(sorted(part.devices)), rows=part.rows, reason=part.reason, launch=launch,
              device_ms=part.times.get("device_ms"), eager_ms=part.times.get("eager_ms"),
              host_ms=part.times.get("host_ms"), launch_bound=part.launch_bound)
    if part.status not in ("ok", "unranked"):
        return e
    e.max_err, e.extra_mem_mib = part.max_err, part.extra_mem_mib
    e.path = next(iter(part.paths)) if len(part.paths) == 1 else None
    if part.status == "ok":
        e.time_ms, e.rel_noise = part.time_ms, part.rel_noise
        e.own_noise = part.rel_noise
    return e


# the order of the entries without a rank: shown with their times first, then the failures by status
_UNTIMED_ORDER = {"unranked": 0}
# Every column `entry` reads of a row (_part, _unranked, _device, row_path, version_of): `rank` makes records of
# these alone, once, and groups them in Python (a pandas group per backend and mode took every column of a
# frame of over a hundred, a take each, and each of its reads was a pandas operation on a few rows).
_READS = tuple(dict.fromkeys((
    "backend", "mode", "status", "reason", "timestamp", "run_id", "device", "device_index", "gpu_uuid",
    "device_ms", "eager_ms", "host_ms", *TIME_COLUMN.values(), "rel_noise", "eager_rel_noise", "timer",
    "launch_bound", *_ERRORS, "extra_mem_mib", "kernels", "extra_json", "checked_at_size", "check_tokens",
    # the version record (core/versions.py: versions_of), and what it is derived from in a row without one
    "versions", "backend_dist", "backend_version", "backend_git_sha", "backend_git_dirty", "qlabench_version",
    *version_columns())))


def rank(rows: pd.DataFrame, workload_modes: tuple[str, ...], current: str, launch: str = "graph") -> list[Entry]:
    """Entries fastest first in `launch`, then the backends without a rank there (unranked, then by status);
    speedups against `current`."""
    by_backend: dict[str, dict[str, list[dict]]] = {}  # backends in the order met, as groupby(sort=False) gives
    for r in records(rows, [c for c in _READS if c in rows]):
        if not _na(r["backend"]) and not _na(r["mode"]):  # groupby leaves a row without its key out
            by_backend.setdefault(str(r["backend"]), {}).setdefault(str(r["mode"]), []).append(r)
    entries = []
    for backend, by_mode in by_backend.items():
        e = entry(backend, by_mode, workload_modes, launch)
        if e is not None:
            entries.append(e)
    timed = sorted((e for e in entries if e.ok), key=lambda e: e.time_ms)
    untimed = sorted((e for e in entries if not e.ok),
                     key=lambda e: (_UNTIMED_ORDER.get(e.status, 1), e.status, e.backend))
    base = next((e for e in timed if e.backend == current), None)
    for e in timed:
        e.speedup = base.time_ms / e.time_ms if base else None
    return timed + untimed


def version_label(e: Entry) -> str:
    lib = version_name(e.backend)
    if not lib:
        return ""
    return f"{lib} {e.version}" if e.version else f"{lib} (version not recorded)"
