"""What a suite's points cost when last measured, as `run sweep --dry-run` prints it (analyze/evidence/costs.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table


def print_recorded_costs(console: Console, points, costs_from: Sequence[str | Path] = ()) -> None:
    """What these points cost inside the sweep when they were measured, per GPU model of the rows read: from
    `costs_from`, else from the current evidence (none: said, and nothing priced)."""
    from qlabench.analyze.evidence.current import rows_or_current
    from qlabench.analyze.evidence.costs import duration, point_costs
    from qlabench.core.errors import QlabenchError

    try:
        rows, paths, from_catalog = rows_or_current(list(costs_from))
    except QlabenchError as e:
        console.print(f"no recorded costs: {escape(str(e))}")
        return
    where = "the current evidence" if from_catalog else ", ".join(str(p) for p in paths)
    priced = point_costs(points, rows)
    if not priced:
        console.print(f"no recorded costs for these points in {escape(where)}: no ok row of their backends and modes "
                      "records its phases")
        return
    for d in priced:
        unknown = f"; {d.unknown} of a backend and mode never measured there, not priced" if d.unknown else ""
        console.print(f"measured before on {escape(d.device)} ({escape(where)}): {duration(d.seconds)} inside the "
                      f"points ({d.own} at their own row's seconds, from {d.runs} runs; {d.at_median} at the median "
                      f"of their backend and mode{unknown}), as those rows ran: a first call that compiled or tuned "
                      "is in it, a warm-up, worker start-up and writing are not")
        t = Table(show_edge=False, pad_edge=False)
        for c in ("backend", "mode", "points", "own row", "at median", "not priced", "s"):
            t.add_column(c, justify="left" if c in ("backend", "mode") else "right")
        for p in d.parts:
            t.add_row(p.backend, p.mode, str(p.points), str(p.own), str(p.at_median), str(p.unknown),
                      f"{p.seconds:.0f}")
        console.print(t)
