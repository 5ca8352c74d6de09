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
from qlabench.core.backend_decl import find, label_of
from qlabench.core.launch import TIME_COLUMN
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


def _median(rows: pd.DataFrame, column: str) -> float | None:
    vals = [float(v) for v in rows[column].dropna()] if column in rows else []
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


def _unranked(rows: pd.DataFrame, launch: str) -> str | None:
    """Why rows with a time are shown unranked in `launch`: checked on a reduced problem only, or no time of
    that regime recorded (the other regime's is shown)."""
    if "checked_at_size" in rows and not rows["checked_at_size"].fillna(False).astype(bool).all():
        tokens = sorted({int(t) for t in rows["check_tokens"].dropna()}) if "check_tokens" in rows else []
        on = f" (checked on {tokens[0]} tokens)" if tokens else ""
        return f"not checked at this call's size{on}: unverified, never ranked"
    col = TIME_COLUMN[launch]
    if col not in rows or rows[col].isna().all():
        timer = sorted({str(t) for t in rows["timer"].dropna()}) if "timer" in rows else []
        what = "no CUDA-graph time (its call was not captured" if launch == "graph" else "no eager time (not measured"
        return f"{what}{': timed with ' + '/'.join(timer) if timer else ''})"
    return None


def _part(rows: pd.DataFrame, backend: str, launch: str) -> _Part:
    cols = [c for c in ("device", "device_index", "gpu_uuid") if c in rows]
    runs, devices = set(rows["run_id"]), {_device(r) for r in rows[cols].to_dict("records")}
    bad = rows[rows["status"] != "ok"]
    if not bad.empty:  # one failed replicate is enough: a time next to a failure is not believed
        r = bad.sort_values("timestamp").iloc[-1]
        return _Part(str(r["status"]), None, None, None, key_value(r.get("reason")), runs, devices, len(rows))
    times = {c: _median(rows, c) for c in ("device_ms", "eager_ms", "host_ms")}
    bound = rows["launch_bound"].dropna().astype(bool) if "launch_bound" in rows else pd.Series(dtype=bool)
    errs = [float(v) for c in _ERRORS if c in rows for v in rows[c].dropna()]
    mem = [float(v) for v in rows["extra_mem_mib"].dropna()] if "extra_mem_mib" in rows else []
    kernels = rows["kernels"] if "kernels" in rows else [None] * len(rows)
    extras = rows["extra_json"] if "extra_json" in rows else [None] * len(rows)
    modes = rows["mode"] if "mode" in rows else ["fwd"] * len(rows)
    paths = frozenset(row_path(backend, x, k, m) for x, k, m in zip(extras, kernels, modes))
    part = _Part("ok", None, None, max(errs) if errs else None, None, runs, devices, len(rows),
                 max(mem) if mem else None, paths, times, bool(bound.any()) if len(bound) else None)
    why = _unranked(rows, launch)
    if why is not None:
        part.status, part.reason = "unranked", why
        return part
    medians = [float(m) for m in rows[TIME_COLUMN[launch]].dropna()]
    mid = statistics.median(medians)
    noise_col = "rel_noise" if launch == "graph" else "eager_rel_noise"
    noise = [float(x) for x in rows[noise_col].dropna()] if noise_col in rows else []
    # an eager time recorded by an older row's events timer carries its noise in rel_noise
    if not noise and "rel_noise" in rows and launch == "eager":
        noise = [float(x) for x in rows.loc[rows["timer"].isin(["events", "wall"]), "rel_noise"].dropna()]
    spread = (max(medians) - min(medians)) / mid if len(medians) > 1 and mid > 0 else None
    known = [x for x in (statistics.median(noise) if noise else None, spread) if x is not None]
    part.time_ms, part.rel_noise = mid, (max(known) if known else None)
    return part


def entry(backend: str, by_mode: dict[str, pd.DataFrame], workload_modes: tuple[str, ...],
          launch: str = "graph") -> Entry | None:
    """The backend's entry from its rows of the workload's mode; None when it has none."""
    mode = workload_modes[0]
    if mode not in by_mode:
        return None
    part = _part(by_mode[mode], backend, launch)
    first = by_mode[mode].iloc[0]
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


def rank(rows: pd.DataFrame, workload_modes: tuple[str, ...], current: str, launch: str = "graph") -> list[Entry]:
    """Entries fastest first in `launch`, then the backends without a rank there (unranked, then by status);
    speedups against `current`."""
    entries = []
    for backend, grp in rows.groupby("backend", sort=False):
        e = entry(str(backend), {str(m): g for m, g in grp.groupby("mode")}, workload_modes, launch)
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
