"""Whether a ranked eager time can be read as what a caller launching the call pays.

Two findings on the H200 (docs/BENCHMARKS.md, "Three times"):
- rows measured before the probe primed its bursts (core/launch.py, `unprimed_eager`) read high by up to one
  launch's latency per call: their eager times are flagged by name;
- with primed bursts, qlabench's probe and a standalone loop read one distribution when interleaved in one
  process, but a launch-bound call's eager time moved between processes on one host by more than its row's
  noise (FlashQLA's training step at 2/8); over fresh processes on one H100 the two read the same range.
So an eager ranking of launch-bound calls measured in one process stays unverified; one whose launch-bound calls
were each measured in fresh processes (replicates, other runs) ranks inside their range (spread.py,
between_processes) and says so. A call that is not launch-bound is checked by its device time and needs neither.
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
# every launch-bound entry was measured in more than one process: its range is in the ranking (the spread note)
_RANGE = ("were each measured in fresh processes, and their eager times are ranked inside the range those measurements "
          "span (qlabench's probe and a standalone loop read the same range over processes: docs/BENCHMARKS.md, "
          "'Three times')")
RANKED_ON_RANGE = f"eager: the launch-bound calls here {_RANGE}"
RANKED_ON_RANGE_OTHERS = f"eager: the other launch-bound calls here {_RANGE}"  # beside the unprimed probe's note


# the end of the note naming times of the probe before it primed its bursts (launch_probe_caveats)
UNPRIMED = ("measured before qlabench's probe primed its bursts (one to three calls a burst, each starting on an idle "
            "device), so the time reads high by up to one launch's latency per call (docs/BENCHMARKS.md, 'The cause: a "
            "burst that starts on an idle device'): unverified until re-measured")


def eager_unverified(note: str) -> bool:
    """Whether `note` says an eager ranking is unverified: launch-bound calls measured in one process only, or
    times of the unprimed probe."""
    return note == BETWEEN_PROCESSES or (note.startswith("eager: ") and note.endswith(UNPRIMED))


def between_processes_note(note: str) -> bool:
    """Whether `note` is one of the two notes on how a launch-bound eager time moves between processes (a page
    whose header says so already leaves them out)."""
    return note in (BETWEEN_PROCESSES, RANKED_ON_RANGE, RANKED_ON_RANGE_OTHERS)


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
        notes.append(f"eager: {who}: {UNPRIMED}")
    primed = [e for e in bound if e.backend not in stale]
    if primed:
        ranged = all(e.processes > 1 for e in primed)
        notes.append((RANKED_ON_RANGE_OTHERS if stale else RANKED_ON_RANGE) if ranged else BETWEEN_PROCESSES)
    return notes
