"""Pairing the rows of two result sets on the full point key (the identity's axes, core/identity.py).

Each side is first reduced to its newest run per point (`store.replicates.latest_run_per_point`), so
a folder of re-runs compares its latest measurement, with every replicate of it: a pair carries the
newest row of each side (its status, its kernels) and all that run's rows (`base_reps`, `head_reps`). The timer is part of what makes two times comparable but
not of the pairing key: a failed row has no timer, and ok -> error must still pair as a status change.
Two ok rows with different timers are reported as missing + new (they measured different things).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from qlabench.core.errors import ConfigError
from qlabench.store.keys import KEY_COLUMNS, plain_value, point_key
from qlabench.store.replicates import latest_run_per_point


@dataclass(frozen=True)
class Pair:
    """One point: its row on each side (a plain dict), either of which may be absent."""

    key: str
    base: dict | None
    head: dict | None
    base_reps: tuple[dict, ...] = ()  # every row of the side's newest run of the point (its replicates)
    head_reps: tuple[dict, ...] = ()

    @property
    def any_row(self) -> dict:
        return self.head if self.head is not None else self.base


def normalized_rows(df: pd.DataFrame) -> list[dict]:
    """Rows as plain-Python dicts (None for nulls, tuples for lists), in order."""
    return [{c: plain_value(v) for c, v in row.items()} for row in df.to_dict("records")]


def row_key(row: dict) -> str:
    """The pairing key of a normalized row: its point's key string (backend and every workload axis)."""
    return point_key(row.get(c) for c in KEY_COLUMNS)


def replicates_by_key(df: pd.DataFrame) -> dict[str, list[dict]]:
    """Every row of each point's newest run (oldest first, so the last is the newest), by pairing key."""
    out: dict[str, list[dict]] = {}
    rows = normalized_rows(latest_run_per_point(df))
    for r in sorted(rows, key=lambda r: r["timestamp"] or ""):
        out.setdefault(row_key(r), []).append(r)
    return out


def rows_by_key(df: pd.DataFrame) -> dict[str, dict]:
    """The newest row of each point, by pairing key."""
    return {k: reps[-1] for k, reps in replicates_by_key(df).items()}


def match_rows(base: pd.DataFrame, head: pd.DataFrame) -> list[Pair]:
    """Pairs in base order, then head-only rows in head order."""
    b, h = replicates_by_key(base), replicates_by_key(head)
    pairs: list[Pair] = []
    for k, breps in b.items():
        brow, hreps = breps[-1], h.get(k, [])
        hrow = hreps[-1] if hreps else None
        if hrow is not None and brow["status"] == "ok" and hrow["status"] == "ok" and brow["timer"] != hrow["timer"]:
            pairs.append(Pair(k, brow, None, tuple(breps)))
            pairs.append(Pair(k, None, hrow, (), tuple(hreps)))
        else:
            pairs.append(Pair(k, brow, hrow, tuple(breps), tuple(hreps)))
    pairs.extend(Pair(k, None, hreps[-1], (), tuple(hreps)) for k, hreps in h.items() if k not in b)
    return pairs


def only_backends(df: pd.DataFrame, backends: str | Iterable[str] | None, side: str) -> pd.DataFrame:
    """`df`'s rows of `backends` (all of them for None); a ConfigError naming a backend with no row on `side`:
    a filter that keeps nothing of a side would compare nothing and say so only as "missing"."""
    if backends is None:
        return df
    names = backends.split(",") if isinstance(backends, str) else backends
    wanted = list(dict.fromkeys(b.strip() for b in names if b.strip()))
    have = set(df["backend"]) if len(df) else set()
    if absent := [b for b in wanted if b not in have]:
        raise ConfigError(f"--backends: no row of {', '.join(absent)} in the {side} (it has: "
                          f"{', '.join(sorted(have)) or 'no rows'})")
    return df[df["backend"].isin(wanted)]
