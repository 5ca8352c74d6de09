"""Which run and which library stack each row comes from, and what a table that mixes them must say.

A stack is the versions of the libraries a row's backend runs, read off its version record (core/versions.py:
its own library, then the compiler under it): 'flash-qla 0.1.3 + tilelang 0.1.15'. A ranking or ratio read across rows of
several runs or stacks also holds run-to-run variation or a version change, so a view labels each row with
its run and stack wherever its rows mix them (`run_mix`), and says nothing where they do not.
"""

from __future__ import annotations

import pandas as pd

from qlabench.core import versions

# What a stack is read from: the row's version record (core/versions.py), and the columns it is derived from where
# a row has none.
STACK_INPUTS = versions.READ


def stack_label(row) -> str:
    """'flash-qla 0.1.3 + tilelang 0.1.15': the versions the row's backend ran on, from its version record
    ('torch X' for a backend with no library of its own; 'fla (version not recorded)' where its record lacks its
    library)."""
    return versions.stack_text(row)


def main_version(row) -> str | None:
    """The version of the backend's own library ('0.1.3' for flash_qla rows), None when not recorded."""
    return versions.own_version(row)


def run_mix(rows: pd.DataFrame) -> pd.Series:
    """Per row, 'run R, STACK' where `rows` mix several runs or several stacks of one library, else ''."""
    if rows.empty:
        return pd.Series([], dtype=object, index=rows.index)
    cols = [c for c in ("run_id", *STACK_INPUTS) if c in rows]
    recs = rows[cols].to_dict("records")
    stacks = [stack_label(r) for r in recs]
    per_library: dict[str, set[str]] = {}
    for r, s in zip(recs, stacks):
        per_library.setdefault(versions.own_key(r) or "", set()).add(s)
    mixed = rows["run_id"].nunique() > 1 or any(len(v) > 1 for v in per_library.values())
    if not mixed:
        return pd.Series([""] * len(rows), index=rows.index, dtype=object)
    return pd.Series([f"run {r['run_id']}, {s}" for r, s in zip(recs, stacks)], index=rows.index, dtype=object)
