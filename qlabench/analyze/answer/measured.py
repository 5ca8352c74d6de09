"""What the whole evidence of an answer says of one GPU model, read once per evidence frame: the backends it measured
there (the candidates of an answer drawn from it), the backends that do not run there at all, and the same-call
floor of its ties. Every case of a question, and every question of a site page, asks these of the same frame, so
each is computed once per frame and key (a page answers hundreds of cases)."""

from __future__ import annotations

import weakref

import pandas as pd

from qlabench.analyze.answer.spread import SameCall, same_call_floor
from qlabench.analyze.evidence import device_series
from qlabench.core.result import off_device, unavailable


# {id(frame): {key: value}}, an entry dropped with its frame: what answer_cases reads from the whole evidence once per
# frame, not once per case (a site page answers hundreds of cases from one frame). Not the frame's `attrs`: pandas
# deep-copies those into every frame derived from it (each filter and take of an answer).
_PER_FRAME: dict[int, dict[tuple, object]] = {}


def per_frame(df: pd.DataFrame, key: tuple, compute):
    """compute(), once per frame and key."""
    cache = _PER_FRAME.get(id(df))
    if cache is None:
        cache = _PER_FRAME[id(df)] = {}
        weakref.finalize(df, _PER_FRAME.pop, id(df), None)
    if key not in cache:
        cache[key] = compute()
    return cache[key]


def floor_of(df: pd.DataFrame, device: str | None, launch: str) -> SameCall:
    """The same-call floor of `df`'s rows on `device`, computed once per frame, GPU model and regime (every case
    of a question, and every question of a page, reads the same frame)."""
    return per_frame(df, ("floor", device, launch), lambda: same_call_floor(
        df[df["device"] == device] if device is not None else df.iloc[0:0], launch))


def measured_in(df: pd.DataFrame, modes: tuple[str, ...], device: str | None) -> set[str]:
    """The backends whose rows of these modes the evidence holds on this GPU model (any, for None): with the one
    the question names, the candidates of an answer drawn from it (backend_decl.candidates)."""
    if df.empty:
        return set()
    rows = df[df["mode"].isin(modes)]
    if device is not None:
        rows = rows[(device_series(rows) == device).to_numpy()]
    return set(rows["backend"])


def off_device_in(df: pd.DataFrame, modes: tuple[str, ...], device: str | None) -> dict[str, str]:
    """The backends that do not run on this GPU model at any point, with why: every row of theirs in these modes on it
    skipped by the library's own check of the device (core/result.py, `off_device`). One such row answers for every
    point of the model, so they are not missing where no row of theirs was taken."""
    if df.empty or device is None:
        return {}
    rows = df[df["mode"].isin(modes)]
    rows = rows[(device_series(rows) == device).to_numpy()]
    why: dict[str, str] = {}  # the backends with such a skip (few rows are skipped: only theirs are read)
    skipped = rows[rows["status"] == "skipped"]
    for b, st, reason in zip(skipped["backend"], skipped["status"], skipped["reason"]):
        if off_device(st, reason):
            why[str(b)] = str(reason).removeprefix("unsupported: ")
    if not why:
        return {}
    # a row that ran, or failed otherwise; not one skipped because the host lacked the package: that says nothing of
    # whether the backend runs on this GPU model
    says_nothing = [off_device(st, r) or unavailable(st, r) for st, r in zip(rows["status"], rows["reason"])]
    others = {str(b) for b, skip in zip(rows["backend"], says_nothing) if not skip}
    return {b: w for b, w in why.items() if b not in others}


def measured_on(df: pd.DataFrame, modes: tuple[str, ...], device: str | None) -> set[str]:
    """measured_in, once per frame (a copy: the caller may change it)."""
    return set(per_frame(df, ("measured", modes, device), lambda: measured_in(df, modes, device)))


def off_device_on(df: pd.DataFrame, modes: tuple[str, ...], device: str | None) -> dict[str, str]:
    """off_device_in, once per frame (a copy)."""
    return dict(per_frame(df, ("off", modes, device), lambda: off_device_in(df, modes, device)))
