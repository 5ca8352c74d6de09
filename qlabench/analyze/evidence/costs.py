"""What a sweep's points cost the last time they were measured: each point's seconds inside it, read from rows.

A row records where its point's time went (`phases_s`: the check, the inputs, the first call with its compile and
an autotuning library's tuning, the kernel capture, ...; `sampling_s`: the samples with the sustained regime's
lead-in). Summed, that is what the point cost inside the sweep, as it was measured: a point that compiled or tuned
in its first call carries that cost, one whose tuning came from the store or whose kernels a warm-up had compiled
does not. Warm-ups, worker start-up and writing the rows are outside every point and in none of these figures.

`point_costs` prices a list of points (a suite about to run, `run sweep --dry-run`) from such rows, per GPU model
the rows were measured on: a point with a row of its own (the newest ok one) at that row's seconds, any other at
the median of the rows of its backend and mode on that GPU model, and a point of a backend and mode never measured
there is counted as unknown, never guessed. Pure pandas; no torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from qlabench.store.keys import KEY_COLUMNS, key_of, key_series, newest_rows


def in_point_s(rows: pd.DataFrame) -> pd.Series:
    """Seconds each row spent inside its point: every recorded phase plus its sampling."""
    if "phases_s" not in rows:
        return pd.Series(float("nan"), index=rows.index)
    phases = rows["phases_s"].map(lambda p: sum(v for _, v in pairs) if (pairs := _pairs(p)) else float("nan"))
    sampling = rows["sampling_s"].fillna(0.0) if "sampling_s" in rows else 0.0
    return phases + sampling


def phase_s(rows: pd.DataFrame, name: str) -> pd.Series:
    """Seconds of one phase of each row (0 where the row has no such phase)."""
    return rows["phases_s"].map(lambda p: dict(_pairs(p)).get(name, 0.0))


def _pairs(p) -> list[tuple[str, float]]:
    # parquet gives a map column back as a list of (key, value) pairs; a ResultRow holds a dict
    if p is None or (isinstance(p, float) and p != p):
        return []
    return list(p.items()) if isinstance(p, dict) else [tuple(kv) for kv in p]


@dataclass(frozen=True)
class PartCost:
    """The points of one backend and mode, priced on one GPU model."""
    backend: str
    mode: str
    points: int
    own: int  # points with a row of their own
    at_median: int  # points priced at the median of their backend's and mode's rows
    unknown: int  # points of a backend and mode with no row on this GPU model
    seconds: float  # of the points priced (own + at_median)


@dataclass(frozen=True)
class DeviceCost:
    """The points priced from the rows of one GPU model (`device`, as rows record it), with the parts' totals."""
    device: str
    runs: int  # runs whose rows gave a point its own price
    parts: tuple[PartCost, ...]
    own: int = 0
    at_median: int = 0
    unknown: int = 0
    seconds: float = 0.0

    @classmethod
    def of(cls, device: str, runs: int, parts: tuple[PartCost, ...]) -> "DeviceCost":
        return cls(device, runs, parts, *(sum(getattr(p, f) for p in parts)
                                          for f in ("own", "at_median", "unknown", "seconds")))


def point_costs(points: Sequence, rows: pd.DataFrame) -> list[DeviceCost]:
    """The points (Points, or anything `key_of` reads) priced from `rows` on each GPU model the ok rows were
    measured on, the model with most of the points' own rows first; [] without a usable row."""
    if rows.empty or "phases_s" not in rows or "device" not in rows:
        return []
    ok = rows[(rows["status"] == "ok") & rows["phases_s"].notna()]
    out = []
    for device, on in ok.groupby("device", sort=True):
        secs, run_of, medians = _prices(on)
        counts: dict[tuple[str, str], list] = {}
        runs = set()
        for p in points:
            part = (p.backend, p.mode)
            c = counts.setdefault(part, [0, 0, 0, 0.0])  # own, at median, unknown, seconds
            k = key_of(p)
            if k in secs:
                c[0] += 1
                c[3] += secs[k]
                runs.add(run_of[k])
            elif part in medians:
                c[1] += 1
                c[3] += medians[part]
            else:
                c[2] += 1
        parts = tuple(PartCost(b, m, sum(c[:3]), c[0], c[1], c[2], c[3]) for (b, m), c in sorted(counts.items()))
        out.append(DeviceCost.of(str(device), len(runs), parts))
    return sorted((d for d in out if d.own or d.at_median), key=lambda d: (-d.own, -d.at_median, d.device))


def point_prices(points: Sequence, rows: pd.DataFrame, device: str) -> list[float | None]:
    """Each point's seconds as `point_costs` prices it on GPU model `device`: its own newest ok row's, else the
    median of its backend's and mode's rows there, else None (never measured there). What a progress bar counts
    down from."""
    ok = rows[(rows["status"] == "ok") & rows["phases_s"].notna() & (rows["device"] == device)] \
        if not rows.empty and "phases_s" in rows and "device" in rows else rows.iloc[0:0]
    if ok.empty:
        return [None] * len(points)
    secs, _, medians = _prices(ok)
    return [secs.get(key_of(p), medians.get((p.backend, p.mode))) for p in points]


def _prices(on: pd.DataFrame) -> tuple[dict, dict, dict]:
    """From the ok rows of one GPU model: each point's seconds (its newest row's), that row's run, and the median
    seconds of each (backend, mode)."""
    newest = newest_rows(on, KEY_COLUMNS)
    keys = key_series(newest, KEY_COLUMNS)
    medians = on.assign(_s=in_point_s(on)).groupby(["backend", "mode"])["_s"].median().to_dict()
    return dict(zip(keys, in_point_s(newest))), dict(zip(keys, newest["run_id"])), medians


def duration(seconds: float) -> str:
    """'48 s', '12.5 min', '1.6 h': a duration at a precision its size deserves (never '0.0 h')."""
    if seconds < 100:
        return f"{seconds:.0f} s"
    if seconds < 6000:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


__all__ = ["DeviceCost", "PartCost", "duration", "in_point_s", "phase_s", "point_costs", "point_prices"]
