"""What a number stands on: per run, its date, GPU model and card, host, git sha, library stack and timing regime.

A view prints these lines beside any table it draws from rows, whatever its format, so a reader can tell
which run, which GPU, which code and which versions a time comes from, and whether two columns were
measured apart.
"""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.evidence.problem import device_series
from qlabench.analyze.evidence.records import records
from qlabench.analyze.evidence.regimes import regime_series
from qlabench.analyze.evidence.stacks import STACK_INPUTS, stack_label
from qlabench.store.keys import plain_value

SHORT_SHA = 10  # characters of a git sha or a GPU UUID a line shows


def _text(v) -> str | None:
    v = plain_value(v)
    return None if v is None or v == "" else str(v)


def run_lines(df: pd.DataFrame) -> list[str]:
    """One line per run of `df`, oldest first: 'run R: 2026-12-01, NVIDIA H200 (card GPU-1a2b...), host vm,
    git 6a76bc9; fla 0.6.0, flash-qla 0.1.3 + tilelang 0.1.15; sustained', and where its replicates were folded
    (replicates.py), '; each time the median of K replicates'."""
    if df.empty or "run_id" not in df.columns:
        return []
    cols = [c for c in ("run_id", "timestamp", "host", "gpu_uuid", "git_sha", "replicates", *STACK_INPUTS)
            if c in df.columns]
    d = df[cols].assign(_device=device_series(df), _regime=regime_series(df))
    out = []
    for run, grp in sorted(d.groupby("run_id", sort=False), key=lambda kv: str(kv[1]["timestamp"].min())):
        recs = records(grp)
        date = str(grp["timestamp"].min())[:10] if "timestamp" in grp else "?"
        devices = ", ".join(sorted(set(grp["_device"])))
        uuids = sorted({u for u in (_text(r.get("gpu_uuid")) for r in recs) if u})
        card = f" (card{'s' if len(uuids) > 1 else ''} {', '.join(u[:SHORT_SHA + 4] for u in uuids)})" if uuids else ""
        hosts = sorted({h for h in (_text(r.get("host")) for r in recs) if h})
        shas = sorted({s for s in (_text(r.get("git_sha")) for r in recs) if s})
        git = f"git {', '.join(s[:SHORT_SHA] for s in shas)}" if shas else "git sha not recorded"
        stacks = sorted({stack_label(r) for r in recs})
        regimes = "/".join(sorted(set(grp["_regime"])))
        folded = grp["replicates"].dropna() if "replicates" in grp else ()
        each = f"; each time the median of {int(max(folded))} replicates" if len(folded) else ""
        out.append(f"run {run}: {date}, {devices}{card}, host {', '.join(hosts) or '?'}, {git}; "
                   f"{', '.join(stacks)}; {regimes}{each}")
    return out
