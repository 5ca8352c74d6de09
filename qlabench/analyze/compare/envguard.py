"""The environment guard: times from different GPU models or major library versions are not comparable.

`env_diff` lists every environment column whose values differ between the two sides; a difference is
*blocking* when it is the device model, or the major version of a library present on both sides.
For 0.x libraries (tilelang, fla-core, flash-qla) the major version is "0.<minor>", as in semver,
since their minor releases are the ones that change kernels. A library installed on one side only is
shown but not blocking: its rows appear as status changes anyway.

A plugin backend's own code (its distribution's version, the commit of the checkout it was imported from) and an
engine backend's engine are libraries of their own, read from the rows' version record (core/versions.py): a
changed version or commit is listed per backend, as `<backend> version` / `<backend> commit`, and a different
major version blocks as a library's does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from qlabench.core.errors import QlabenchError
from qlabench.core import versions
from qlabench.core.libraries import BY_NAME, version_columns
from qlabench.store.keys import plain_value

VERSIONED = version_columns(moves_timings_only=True)
# Shown in the diff, never blocking: they say where and from what code the rows came.
INFORMATIONAL = (tuple(c for c in version_columns() if c not in VERSIONED)
                 + ("python_version", "qlabench_version", "git_sha", "host", "gpu_uuid", "env_fingerprint"))


@dataclass(frozen=True)
class EnvField:
    name: str
    base: tuple[str, ...]  # distinct values on the base side (sorted)
    head: tuple[str, ...]
    blocking: bool
    why: str = ""


class EnvMismatchError(QlabenchError):
    """The sides ran on different GPU models or major library versions; carries the diff."""

    def __init__(self, diff: list[EnvField]):
        self.diff = diff
        lines = [f"  {f.name}: {', '.join(f.base) or '-'} -> {', '.join(f.head) or '-'}"
                 + (f"  [blocking: {f.why}]" if f.blocking else "") for f in diff]
        super().__init__("refusing to compare results from different environments "
                         "(pass --allow-env-mismatch to compare anyway):\n" + "\n".join(lines))


def major(version: str) -> str:
    """'2.13.0+cpu' -> '2'; '0.6.0' -> '0.6'; '12.8' -> '12'."""
    parts = re.findall(r"\d+", version)
    if not parts:
        return version
    return f"0.{parts[1]}" if parts[0] == "0" and len(parts) > 1 else parts[0]


def _values(df: pd.DataFrame, col: str) -> tuple[str, ...]:
    if col not in df.columns:
        return ()
    return tuple(sorted({str(v) for v in map(plain_value, df[col]) if v is not None}))


def env_diff(base: pd.DataFrame, head: pd.DataFrame) -> list[EnvField]:
    out = []
    for col in ("device",) + VERSIONED + INFORMATIONAL:
        b, h = _values(base, col), _values(head, col)
        if b == h:
            continue
        blocking, why = False, ""
        if col == "device":
            blocking, why = True, "different device models"
        elif col in VERSIONED and b and h and {major(v) for v in b} != {major(v) for v in h}:
            blocking, why = True, "different major versions"
        out.append(EnvField(col, b, h, blocking, why))
    return out + backend_diff(base, head)


def _own_values(df: pd.DataFrame, backend: str) -> tuple[str | None, dict[str, tuple[str, ...]]]:
    """The name of `backend`'s own code in its rows' version record (core/versions.py: own_key) and the distinct
    values of its version and its checkout's commit there."""
    rows = df[df["backend"] == backend]
    recs = rows[[c for c in versions.READ if c in rows.columns]].to_dict("records")
    keys = {versions.own_key(r) for r in recs}
    own = next(iter(keys)) if len(keys) == 1 else None
    found: dict[str, set[str]] = {"version": set(), "commit": set()}
    for r in recs:
        rec = versions.versions_of(r)
        for what, key in (("version", own), ("commit", f"{own}{versions.COMMIT}")):
            if rec.get(key) is not None:
                found[what].add(rec[key])
    return own, {what: tuple(sorted(v)) for what, v in found.items()}


def backend_diff(base: pd.DataFrame, head: pd.DataFrame) -> list[EnvField]:
    """Per backend on both sides whose own code has no environment column above (a plugin's distribution, an
    engine's kernels): its version and checkout commit where they differ, read from the rows' version record."""
    if "backend" not in base.columns or "backend" not in head.columns:
        return []
    out = []
    for backend in sorted({str(b) for b in base["backend"]} & {str(b) for b in head["backend"]}):
        own, b_vals = _own_values(base, backend)
        _, h_vals = _own_values(head, backend)
        if own is None or own == versions.OWN_CODE or own in BY_NAME:
            continue
        for what in ("version", "commit"):
            b, h = b_vals[what], h_vals[what]
            if b == h:
                continue
            blocking = what == "version" and bool(b and h) and {major(v) for v in b} != {major(v) for v in h}
            out.append(EnvField(f"{backend} {what}", b, h, blocking, "different major versions" if blocking else ""))
    return out


def check_env(diff: list[EnvField], allow_mismatch: bool) -> None:
    """Raise EnvMismatchError if any difference blocks and the caller did not allow it."""
    if not allow_mismatch and any(f.blocking for f in diff):
        raise EnvMismatchError(diff)
