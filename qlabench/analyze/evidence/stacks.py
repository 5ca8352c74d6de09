"""Which run and which library stack each row comes from, and what a table that mixes them must say.

A stack is the versions of the library a row's backend runs (core/libraries.py: its version column, then
the compiler under it): 'flash-qla 0.1.3 + tilelang 0.1.15'. A ranking or ratio read across rows of
several runs or stacks also holds run-to-run variation or a version change, so a view labels each row with
its run and stack wherever its rows mix them (`run_mix`), and says nothing where they do not.
"""

from __future__ import annotations

import pandas as pd

from qlabench.core.backend_decl import library_of, stack_columns
from qlabench.core.libraries import package_name
from qlabench.store.keys import plain_value


def _text(v) -> str | None:
    v = plain_value(v)
    return None if v is None or v == "" else str(v)


def stack_label(row) -> str:
    """'flash-qla 0.1.3 + tilelang 0.1.15': the versions the row's backend ran on ('torch X' for a backend
    with no library of its own; 'fla (version not recorded)' for a row older than its version column)."""
    cols = stack_columns(row["backend"])
    parts = [f"{package_name(c)} {_text(row.get(c))}" for c in cols if _text(row.get(c))]
    if not parts and cols:
        return f"{package_name(cols[0])} (version not recorded)"
    if not parts:
        return f"torch {_text(row.get('torch_version')) or '?'}"
    return " + ".join(parts)


def main_version(row) -> str | None:
    """The version of the backend's own library ('0.1.3' for flash_qla rows), None when not recorded."""
    lib = library_of(row["backend"])
    return _text(row.get(lib.column)) if lib else None


def run_mix(rows: pd.DataFrame) -> pd.Series:
    """Per row, 'run R, STACK' where `rows` mix several runs or several stacks of one library, else ''."""
    if rows.empty:
        return pd.Series([], dtype=object, index=rows.index)
    cols = [c for c in ("backend", "run_id", "torch_version", *{c for b in set(rows["backend"])
                                                                 for c in stack_columns(b)}) if c in rows]
    recs = rows[cols].to_dict("records")
    stacks = [stack_label(r) for r in recs]
    per_library: dict[str, set[str]] = {}
    for r, s in zip(recs, stacks):
        lib = library_of(r["backend"])
        per_library.setdefault(lib.name if lib else "", set()).add(s)
    mixed = rows["run_id"].nunique() > 1 or any(len(v) > 1 for v in per_library.values())
    if not mixed:
        return pd.Series([""] * len(rows), index=rows.index, dtype=object)
    return pd.Series([f"run {r['run_id']}, {s}" for r, s in zip(recs, stacks)], index=rows.index, dtype=object)
