"""The cold-start table (workflows/cold_start.py's records): per backend and point, the first calls in a fresh
process with empty kernel caches and with the caches a previous process left. A phase whose row is not ok
shows its status, never a time; a cache size no record holds (records rebuilt from rows whose cache folders
were gone) shows as "not recorded", never as zero."""

from __future__ import annotations

import math

import pandas as pd

from qlabench.analyze.kit.tables import md_table
from qlabench.store.cold_start_records import RECORDS, read_records  # noqa: F401 (the file's one reader)


NOT_RECORDED = "not recorded"


def _cell(rec: dict | None) -> float | str:
    if rec is None:
        return "not run"
    if rec.get("status") != "ok" or rec.get("first_calls_s") is None:
        return str(rec.get("status"))
    return float(rec["first_calls_s"])


def cold_start_frame(records: list[dict]) -> pd.DataFrame:
    """One row per (backend, point): cold and warm first calls (s), cold / warm, the cache size after."""
    by = {}
    for r in records:
        by.setdefault((r["backend"], r["point"]), {})[r["phase"]] = r
    rows = []
    for (backend, point), ph in by.items():
        cold, warm = _cell(ph.get("cold")), _cell(ph.get("warm"))
        ratio = cold / warm if isinstance(cold, float) and isinstance(warm, float) and warm > 0 else math.nan
        sizes = [r.get("cache_mib") for r in (ph.get("cold"), ph.get("warm")) if r and r.get("cache_mib") is not None]
        mib = sizes[-1] if sizes else NOT_RECORDED  # the last phase's: what the point's caches came to
        rows.append({"backend": backend, "point": point, "cold s": cold, "warm s": warm, "cold / warm": ratio,
                     "cache MiB": mib})
    return pd.DataFrame(rows)


def cold_start_markdown(records: list[dict]) -> str:
    devices = sorted({str(r.get("device")) for r in records})
    return (f"Device: {', '.join(devices)}. `cold s`: the point's first calls (its check and first timed call) in a "
            "fresh process with every kernel cache empty; `warm s`: the same in the next fresh process, on the "
            "caches the first left. Process start and library import are not included.\n\n"
            + md_table(cold_start_frame(records), {"cold s": ".2f", "warm s": ".2f", "cold / warm": ".1f",
                                                   "cache MiB": ".1f"}))
