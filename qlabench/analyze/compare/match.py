"""Pairing the rows of two result sets on the full point key (backend and every workload axis).

Each side is first reduced to its newest row per point (`store.latest_per_point`), so a folder of
re-runs compares its latest measurement. The timer is part of what makes two times comparable but
not of the pairing key: a failed row has no timer, and ok -> error must still pair as a status change.
Two ok rows with different timers are reported as missing + new (they measured different things).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from qlabench.store.keys import KEY_COLUMNS, plain_value, point_key
from qlabench.store.files import latest_per_point

POINT_KEY = KEY_COLUMNS  # rows pair on the backend and every workload axis


@dataclass(frozen=True)
class Pair:
    """One point: its row on each side (a plain dict), either of which may be absent."""

    key: str
    base: dict | None
    head: dict | None

    @property
    def any_row(self) -> dict:
        return self.head if self.head is not None else self.base


def normalized_rows(df: pd.DataFrame) -> list[dict]:
    """Rows as plain-Python dicts (None for nulls, tuples for lists), in order."""
    return [{c: plain_value(v) for c, v in row.items()} for row in df.to_dict("records")]


def rows_by_key(df: pd.DataFrame) -> dict[str, dict]:
    """The newest row of each point, by pairing key."""
    return {point_key(r[c] for c in POINT_KEY): r for r in normalized_rows(latest_per_point(df))}


def match_rows(base: pd.DataFrame, head: pd.DataFrame) -> list[Pair]:
    """Pairs in base order, then head-only rows in head order."""
    b, h = rows_by_key(base), rows_by_key(head)
    pairs: list[Pair] = []
    for k, brow in b.items():
        hrow = h.get(k)
        if hrow is not None and brow["status"] == "ok" and hrow["status"] == "ok" and brow["timer"] != hrow["timer"]:
            pairs.append(Pair(k, brow, None))
            pairs.append(Pair(k, None, hrow))
        else:
            pairs.append(Pair(k, brow, hrow))
    pairs.extend(Pair(k, None, hrow) for k, hrow in h.items() if k not in b)
    return pairs
