"""How far each ranked time was checked: at the point's own size, on a reduced problem that ran the timed
call's own code path (its traced `check_path`), or on a reduced problem only (†).

A row's check may have run on fewer tokens than the point has (the fp32 oracle on 256 tokens); a library
whose call path depends on the size (an intra-card CP that splits only long sequences) may then have been
checked on another path than the one timed. The answer says so per entry, and as a caveat where the
recommended time was never checked at its size (analyze/evidence/accuracy.py reads each row's check).
"""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.evidence.accuracy import CHECK_COLUMNS, REDUCED, row_check
from qlabench.analyze.evidence.records import records
from qlabench.analyze.answer.ranking import Entry
from qlabench.core.backend_decl import find


def attach_checks(entries: list[Entry], rows: pd.DataFrame) -> list[Entry]:
    """Set each entry's `check` (e.g. 'oracle@256 †', 'fp64@full') from the rows its time came from.

    A reduced check of a backend whose declaration says its path does not depend on the size
    (`BackendDecl.size_dependent_path`) ran the kernels the timed call ran, and is not marked; one of a backend
    nothing declares is."""
    # what row_check reads, and whose rows these are: made records once, not a frame filtered per entry
    reads = [c for c in CHECK_COLUMNS if c in rows]
    recs = list(zip(rows["backend"].tolist(), rows["run_id"].tolist(), records(rows, reads))) if len(rows) else []
    for e in entries:
        checks = [c for b, run, r in recs if b == e.backend and run in e.runs and (c := row_check(r)) is not None]
        if not checks:
            continue
        best = max(checks, key=lambda c: (c.full, c.covers_timed_path, c.tokens or 0))
        if best.full:
            e.check = best.label
        elif best.same_path:  # traced: the reduced check ran the timed call's own code path
            e.check = f"{best.label} ({best.same_path} path)"
        elif (d := find(e.backend)) is not None and not d.size_dependent_path:
            e.check = best.label  # one code path at every size
        else:
            e.check = f"{best.label} {REDUCED}"
    return entries


def check_caveats(entries: list[Entry]) -> list[str]:
    best = next((e for e in entries if e.ok), None)
    if best is None or not best.check or not best.check.endswith(REDUCED):
        return []
    return [f"check: {best.backend}'s time was checked on a reduced problem only ({best.check.removesuffix(REDUCED).strip()}), "
            "never at this size: a call whose path depends on the size may have been checked on another path; "
            "a run with [check] full_size checks it here"]
