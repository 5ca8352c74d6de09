"""Whether a ranked eager time can be read as what a caller launching the call pays.

Two findings on the H200 (docs/BENCHMARKS.md, "Three times"):
- rows measured before the probe primed its bursts (core/launch.py, `unprimed_eager`) read high by up to one
  launch's latency per call: their eager times are flagged by name;
- with primed bursts, qlabench's probe and a standalone loop read one distribution when interleaved in one
  process, but a launch-bound call's eager time moved between processes on one host by more than its row's
  noise (FlashQLA's training step at 2/8), so an eager ranking of launch-bound calls stays unverified.
A call that is not launch-bound is checked by its device time and needs neither note.
"""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.answer.ranking import Entry
from qlabench.analyze.evidence.records import detail
from qlabench.core.launch import unprimed_eager

BETWEEN_PROCESSES = ("eager: a launch-bound call runs at the host's pace; qlabench's probe and a standalone loop read "
                     "the same in one process, but such a call's eager time moved between processes on one host by "
                     "more than its row's noise (docs/BENCHMARKS.md, 'Three times'): unverified; the device times "
                     "(--launch graph) are what runs agree on")


def launch_probe_caveats(entries: list[Entry], ranked: pd.DataFrame, launch: str) -> list[str]:
    """The eager notes of an answer ranked in `launch`: none for a graph ranking or where no ranked call is
    launch-bound; a note naming the entries whose rows came from the unprimed probe; the between-process note for
    the launch-bound rest."""
    if launch != "eager":
        return []
    bound = [e for e in entries if e.ok and e.launch_bound is not False]
    if not bound:
        return []
    unprimed_runs: set[tuple[str, str]] = set()
    if len(ranked) and "extra_json" in ranked:
        for b, run, raw in zip(ranked["backend"], ranked["run_id"], ranked["extra_json"]):
            if unprimed_eager(detail(raw, "eager_launch")):
                unprimed_runs.add((b, run))
    stale = [e.backend for e in bound if any((e.backend, r) in unprimed_runs for r in e.runs)]
    notes = []
    if stale:
        who = "every launch-bound time here" if len(stale) == len(bound) > 2 else ", ".join(stale)
        notes.append(f"eager: {who}: measured before qlabench's probe primed its bursts (one to three "
                     "calls a burst, each starting on an idle device), so the time reads high by up to one launch's "
                     "latency per call (docs/BENCHMARKS.md, 'The cause: a burst that starts on an idle device'): "
                     "unverified until re-measured")
    if len(stale) < len(bound):
        notes.append(BETWEEN_PROCESSES)
    return notes
