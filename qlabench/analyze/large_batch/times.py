"""Every backend's time per problem: a column per backend (in the registry's view order), the fastest named, and
every backend within the measured noise of the fastest tied with it (kit/ties.py), never called slower.

A row that is not ok shows its status, never a time; a backend with rows elsewhere in the view but none for a
problem shows 'missing' (it was not measured there).
"""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.kit.backends import in_view_order
from qlabench.analyze.kit.ties import is_tie
from qlabench.analyze.large_batch.frame import problem_order, rows_of
from qlabench.analyze.large_batch.kernels import ms_text

MISSING = "missing"


def backends_of(d: pd.DataFrame) -> list[str]:
    return in_view_order(d["backend"])


def fastest(rows: list[dict]) -> tuple[list[str], dict | None]:
    """(the backends tied for fastest, fastest first; the fastest row) among the ok rows; ([], None) if none."""
    ok = sorted((r for r in rows if r["status"] == "ok"), key=lambda r: float(r["median_ms"]))
    if not ok:
        return [], None
    best = ok[0]
    tied = [r["backend"] for r in ok
            if is_tie(best["median_ms"], r["median_ms"], best.get("rel_noise"), r.get("rel_noise"))]
    return tied, best


def time_table(d: pd.DataFrame, runs: dict[str, str]) -> pd.DataFrame:
    """One line per problem: device (where the rows hold two GPU models), heads, sequences, tokens, a column per
    backend (ms, the status of a row that is not ok, or 'missing'; the fastest and those tied with it in bold),
    `fastest` ('tie: A, B' where the noise cannot tell them apart) and `runs` (the letters of the runs its cells
    come from)."""
    backends = backends_of(d)
    several = d["device"].nunique() > 1
    out = []
    for key in problem_order(d):
        rows = rows_of(d, key).to_dict("records")
        by = {r["backend"]: r for r in rows}
        tied, best = fastest(rows)
        first = rows[0]
        rec = {"device": first["device"]} if several else {}
        rec.update({"heads": first["family"], "sequences": first["sequences"], "tokens": int(first["tokens"])})
        for b in backends:
            cell = ms_text(by.get(b))
            rec[b] = f"**{cell}**" if b in tied else cell
        rec["fastest"] = ("tie: " + ", ".join(tied) if len(tied) > 1 else tied[0]) if tied else "none ok"
        rec["runs"] = ", ".join(sorted({runs.get(str(r["run_id"]), "?") for r in rows}))
        out.append(rec)
    return pd.DataFrame(out)


def not_ok(d: pd.DataFrame) -> pd.DataFrame:
    """The rows that are not ok, with their reasons."""
    bad = d[d["status"] != "ok"]
    return bad[["problem", "backend", "status", "reason"]].reset_index(drop=True)


def missing(d: pd.DataFrame) -> pd.DataFrame:
    """Per backend of the view, the problems (on each GPU model) it has no row for."""
    recs = []
    problems = problem_order(d)
    several = d["device"].nunique() > 1
    for b in backends_of(d):
        mine = d[d["backend"] == b]
        have = set(zip(mine["device"], mine["problem"]))
        absent = [p for p in problems if p not in have]
        if absent:
            first = f"{absent[0][0]}: {absent[0][1]}" if several else absent[0][1]
            recs.append({"backend": b, "problems without a row": len(absent), "first": first})
    return pd.DataFrame(recs)
