"""Whether a ranked time of an autotuning library was tuned for its own point.

FLA's Triton kernels autotune on keys without the sequence length: a row measured before qlabench tuned each
point for itself (`[run] autotune = "point"`, whose rows say `autotune_tuned_for`) ran with the configs of
whatever shape its worker met first, and on the H200 that moved FLA's time by up to 1.31x (the
autotune-regret table). Such a time, and any speedup over it, depends on the sweep's order: the answer says so.
Which backends autotune is theirs to declare (core/backend_decl.py: `autotune_modules`); a row that recorded a Triton choice (`autotune`) autotuned whatever its backend.
"""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.answer.ranking import Entry
from qlabench.analyze.evidence.records import detail, records
from qlabench.core.spec_limits import TUNED_FOR_POINT
from qlabench.core.backend_decl import autotuning


def tuned_for(row) -> str | None:
    """"point", "point-cached", "process", or None when a row that autotuned did not record which (made before
    it was)."""
    return detail(row.get("extra_json"), "autotune_tuned_for")


_READS = ("autotune", "extra_json")  # what tuned_for and order_dependent read of a row


def order_dependent(rows: list[dict], autotunes: bool) -> bool:
    """Whether any of these rows (records of the `_READS` columns their frame has) autotuned (its backend does,
    or it recorded a Triton choice) without being tuned for its own point."""
    for r in rows:
        choices = r.get("autotune")
        if (autotunes or (choices is not None and len(choices))) and tuned_for(r) not in TUNED_FOR_POINT:
            return True
    return False


def tuning_caveats(entries: list[Entry], ranked: pd.DataFrame, current: str) -> list[str]:
    """A note per ranked time (the current choice's first: every speedup divides by it) whose library
    autotuned on another shape than its point."""
    flagged = []
    # the rows' records once, with whose they are (not the frame filtered per entry)
    recs = list(zip(ranked["backend"].tolist(), ranked["run_id"].tolist(),
                    records(ranked, [c for c in _READS if c in ranked]))) if len(ranked) else []
    for e in entries:
        if not e.ok:
            continue
        mine = [r for b, run, r in recs if b == e.backend and run in e.runs]
        if order_dependent(mine, e.backend in autotuning()):
            flagged.append(e.backend)
    if not flagged:
        return []
    flagged.sort(key=lambda b: b != current)
    what = ", ".join(flagged)
    speedups = f"; every speedup here divides by {current}'s time" if current in flagged else ""
    return [f"order: {what} autotuned on whatever shape its worker ran first, not on this point (rows made before "
            f"per-point tuning){speedups}: such a time moved by up to 1.3x with the sweep order on the H200 "
            "(`qlabench autotune-regret`); unverified until re-measured with [run] autotune = \"point\""]
