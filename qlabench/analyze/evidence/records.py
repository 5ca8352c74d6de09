"""Rows as plain records, grouped: what a view iterates over.

A results frame has ~110 columns; pandas builds a record column by column, so `grp.to_dict("records")`
once per group costs ~110 column lookups per group (tens of seconds over the study's thousands of
groups). Here the records are built once and grouped in Python, in the order groupby would give.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and v != v)


def grouped_records(df: pd.DataFrame, by: str | Sequence[str], sort: bool = False,
                    columns: Sequence[str] | None = None) -> list[tuple[object, list[dict]]]:
    """[(key, records of the rows with that key)], as `df.groupby(by, sort=sort)` would group them (rows
    with a missing key value are left out, as groupby does); `columns`: only those in each record."""
    if df.empty:
        return []
    cols = list(dict.fromkeys(columns)) if columns is not None else list(df.columns)
    recs = df[cols].to_dict("records")
    if isinstance(by, str):
        keys = df[by].tolist()
        missing = [_missing(k) for k in keys]
    else:
        keys = list(zip(*(df[c].tolist() for c in by)))
        missing = [any(_missing(v) for v in k) for k in keys]
    groups: dict[object, list[dict]] = {}
    for k, r, m in zip(keys, recs, missing):
        if not m:
            groups.setdefault(k, []).append(r)
    items = list(groups.items())
    return sorted(items, key=lambda kv: kv[0]) if sort else items
