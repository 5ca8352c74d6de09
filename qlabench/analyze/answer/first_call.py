"""Each ranked backend's first-call cost: what its first calls took in a fresh process, from `qlabench
cold-start`'s records (workflows/cold_start.py: `cold`, every kernel cache empty; `warm`, the caches the cold
process left), read from the current entries of kind "cold-start" that results/catalog.toml names, or from
the cold-start folders given.

The cold-start suite measures a backend at one shape, not at the answer's: the figure names the point it was
measured at (over several points, the range and their count), for the answer's modes only. A backend without
a record is "not measured"; a phase whose row was not ok shows its status, never a time. Where two folders
hold the same backend, point and phase, the newest run's record counts.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from qlabench.analyze.answer.ranking import Entry
from qlabench.store.catalog import CatalogError, load_catalog, results_root
from qlabench.store.cold_start_records import read_records

KIND = "cold-start"  # the catalog kind of `qlabench cold-start` folders (store/catalog.py)
NOT_MEASURED = "not measured"
PHASES = ("cold", "warm")


@dataclass(frozen=True)
class ColdStart:
    records: tuple[dict, ...]  # newest per (backend, point, phase)
    sources: tuple[str, ...]  # the folders read


def load_cold_start(paths: Iterable[str | os.PathLike] | None = None) -> ColdStart:
    """The records of `paths` (cold-start folders or their JSON files); None: the catalog's current cold-start
    entries, none at all where there is no results catalog (a malformed one raises)."""
    if paths is None:
        try:
            root = results_root()
        except CatalogError:
            return ColdStart((), ())
        paths = load_catalog(root).current_paths((KIND,))
    paths = [str(p) for p in paths]
    newest: dict[tuple, dict] = {}
    records = [r for p in paths for r in read_records(p)]
    for r in sorted(records, key=lambda r: str(r.get("run_id") or "")):  # run ids begin with their UTC time
        newest[(r["backend"], r["point"], r["phase"])] = r
    return ColdStart(tuple(newest.values()), tuple(paths))


def _seconds(times: list[float]) -> str:
    lo, hi = min(times), max(times)
    return f"{lo:.3g} s" if f"{lo:.3g}" == f"{hi:.3g}" else f"{lo:.3g}-{hi:.3g} s"


def _phase(records: list[dict], phase: str) -> str:
    mine = [r for r in records if r["phase"] == phase]
    if not mine:
        return f"{phase} not run"
    times = [float(r["first_calls_s"]) for r in mine if r.get("status") == "ok" and r.get("first_calls_s") is not None]
    failed = [str(r.get("status")) for r in mine if not (r.get("status") == "ok" and r.get("first_calls_s") is not None)]
    parts = [_seconds(times)] if times else []
    if failed:
        parts.append(", ".join(f"{s}" + (f" on {failed.count(s)}" if len(mine) > 1 else "")
                               for s in dict.fromkeys(failed)))
    return f"{phase} " + " + ".join(parts)


def first_call_label(records: Iterable[dict], backend: str, modes: tuple[str, ...]) -> str:
    """'cold 41.2 s, warm 2.1 s at fwd qwen3.5-397b TP8 (h2/8) 32768 ...' for `backend` in `modes`, or
    NOT_MEASURED."""
    mine = [r for r in records if r["backend"] == backend and r.get("mode") in modes]
    if not mine:
        return NOT_MEASURED
    points = list(dict.fromkeys(str(r["point"]) for r in mine))
    where = (f"at {points[0].removeprefix(backend + ' ')}" if len(points) == 1 else f"over {len(points)} points")
    return ", ".join(_phase(mine, p) for p in PHASES) + f" {where}"


def attach_first_calls(entries: list[Entry], cold: ColdStart, modes: tuple[str, ...]) -> list[Entry]:
    """Set each entry's `first_call` from the cold-start records (NOT_MEASURED where it has none)."""
    for e in entries:
        e.first_call = first_call_label(cold.records, e.backend, modes)
    return entries
