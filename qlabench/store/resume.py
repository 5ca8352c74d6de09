"""Resume: which points of a suite are already recorded `ok` in a results folder, for this environment.

A row counts as done when its suite name and its (backend, workload) key match, its status is ok, and it was
measured in this environment: on the same device model with the same versions of everything its time depends
on (`timing_columns`: torch, CUDA, the driver, qlabench, and its backend's own library stack, or every library
for a backend of none). A library that the point does not run can come or go without making its rows
strangers: a host that has FlashInfer installed resumes the FlashQLA rows of a host that had not. (Given a
fingerprint string instead of the environment, the whole fingerprint must match, as before.) Rows of any status
other than ok are measured again, so a timeout or crash gets another chance. A checked resume also
asks for the same reference (`[check] reference`): a row checked against the fp32 oracle on 256 tokens
is no answer for a sweep that checks against float64 at full size, nor the other way round. A resume
in a timing regime (`[timing] regime`) counts only rows timed in it: a burst is no answer for a sustained
sweep (a row from before the regime was recorded was a burst).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from qlabench.core.backend_decl import stack_columns
from qlabench.core.errors import StoreError
from qlabench.core.libraries import version_columns
from qlabench.store.keys import KEY_COLUMNS, key_of, key_series
from qlabench.core.point import Point
from qlabench.core.result import Status
from qlabench.core.regimes import UNRECORDED_REGIME
from qlabench.store.files import read_results, result_files

# How a row's `oracle` column names its reference (run/point.py writes it).
FP64_LABEL = "fp64-full"
SINGLE_DEVICE_MARK = "(one device, no CP)"  # a distributed point: checked against its single-device backend


def check_reference(oracle) -> str | None:
    """The `[check] reference` a row was checked under, from its `oracle` label: 'fp64-full', 'oracle', or
    None for a distributed row (checked against one device whatever the reference) and an unchecked one."""
    if not isinstance(oracle, str) or not oracle:
        return None
    if oracle.startswith(FP64_LABEL):
        return "fp64-full"
    return None if SINGLE_DEVICE_MARK in oracle else "oracle"


# What every point's time depends on beside its backend's own library stack.
COMMON_COLUMNS = ("device", "torch_version", "cuda_version", "driver_version", "qlabench_version")


def timing_columns(backend: str) -> tuple[str, ...]:
    """The environment columns a row of `backend` must share with this run to count as done: the common ones and
    its library's stack (a backend of no library: every version column that moves a time)."""
    return COMMON_COLUMNS + (stack_columns(backend) or version_columns(moves_timings_only=True))


def same_environment(df: pd.DataFrame, env: Mapping) -> pd.Series:
    """Per row: whether it was measured in `env` (a `measure.env.capture` dict) on every `timing_columns` of its
    backend; a missing version reads as missing on both sides."""
    def norm(v):
        return None if v is None or (isinstance(v, float) and v != v) or v == "" else str(v)

    keep = []
    for rec in df.to_dict("records"):
        cols = timing_columns(str(rec["backend"]))
        keep.append(all(norm(rec.get(c)) == norm(env.get(c)) for c in cols))
    return pd.Series(keep, index=df.index, dtype=bool)


def done_keys(out_root: str | os.PathLike, suite: str, env_fingerprint: str | Mapping, checked: bool = False,
              cpu_threads: int | None = None, reference: str | None = None,
              regime: str | None = None) -> set[str]:
    """Keys of the points of `suite` recorded ok in this environment in <out_root>/<suite>/.

    env_fingerprint: the environment (`measure.env.capture`), each row compared on its backend's
    `timing_columns`; or a fingerprint string, which every row must carry.

    checked: count only rows whose outputs were checked against the oracle (a row measured with
    --no-check has no `oracle`), so a checked resume re-measures what an unchecked run timed.
    cpu_threads: count only rows measured with this many torch threads (None: any).
    reference: with `checked`, count only rows checked under this `[check] reference` ('oracle' or
    'fp64-full'; distributed rows, checked against one device under either, count for both).
    regime: count only rows timed in this regime (None: any; a row without one counts as `burst`)."""
    folder = Path(out_root) / suite
    if not folder.is_dir():
        return set()
    try:
        result_files([folder])
    except StoreError:  # a folder with no result files yet
        return set()
    df = read_results([folder])
    df = df[(df["status"] == Status.OK.value) & (df["suite"] == suite)]
    if isinstance(env_fingerprint, str):
        df = df[df["env_fingerprint"] == env_fingerprint]
    elif not df.empty:
        df = df[same_environment(df, env_fingerprint)]
    if checked:
        df = df[df["oracle"].notna()]
        if reference is not None:
            refs = df["oracle"].map(check_reference)
            df = df[refs.isna() | (refs == reference)]
    if cpu_threads is not None:
        df = df[df["cpu_threads"] == cpu_threads]
    if regime is not None:
        if "timing_regime" in df.columns:
            df = df[df["timing_regime"].fillna(UNRECORDED_REGIME) == regime]
        elif regime != UNRECORDED_REGIME:
            df = df.iloc[:0]
    return set(key_series(df, KEY_COLUMNS))


def remaining(points: Iterable[Point], done: set[str]) -> list[Point]:
    return [p for p in points if key_of(p) not in done]


@contextlib.contextmanager
def resume_lock(out_root: str | os.PathLike, suite: str):
    """Hold <out_root>/<suite>/.resume.lock for a --resume sweep: a second --resume of the same suite into
    the same folder would measure the same points again, so it is refused (StoreError) while one runs.
    The lock is an flock: it goes with the process, even on kill -9."""
    folder = Path(out_root) / suite
    folder.mkdir(parents=True, exist_ok=True)
    f = open(folder / ".resume.lock", "a+")
    try:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            holder = f.read().strip() or "another process"
            raise StoreError(f"another --resume of suite {suite!r} is running in {out_root} ({holder}); wait for "
                             "it, or resume into another --out") from None
        f.seek(0)
        f.truncate()
        f.write(f"pid {os.getpid()}")
        f.flush()
        yield
    finally:
        f.close()
