"""Resume: which points of a suite are already recorded `ok` in a results folder, for this environment.

A row counts as done when its suite name, its env fingerprint (env.FINGERPRINT_FIELDS: device and
library versions) and its (backend, workload) key match, and its status is ok. Rows of any status
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
from collections.abc import Iterable
from pathlib import Path

from qlabench.core.errors import StoreError
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


def done_keys(out_root: str | os.PathLike, suite: str, env_fingerprint: str, checked: bool = False,
              cpu_threads: int | None = None, reference: str | None = None,
              regime: str | None = None) -> set[str]:
    """Keys of the points of `suite` recorded ok under `env_fingerprint` in <out_root>/<suite>/.

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
    df = df[(df["status"] == Status.OK.value) & (df["env_fingerprint"] == env_fingerprint) & (df["suite"] == suite)]
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
