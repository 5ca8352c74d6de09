"""The wall seconds of each phase of a point (the row's `phases_s`): what a point costs beyond its sampling, and
where a whole run's time went (`TimeBreakdown`: the one line every sweep ends with)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

FIRST_CALL = "first_call"  # the point's first full-size call: a JIT compile or an autotuning library's tuning


class Lap:
    """Adds the wall time since the last lap (or restart) to `phases[name]`."""

    def __init__(self, phases: dict[str, float]):
        self.phases = phases
        self.t = time.perf_counter()

    def restart(self) -> None:
        self.t = time.perf_counter()

    def __call__(self, name: str) -> None:
        now = time.perf_counter()
        self.phases[name] = self.phases.get(name, 0.0) + now - self.t
        self.t = now


def phase_kind(name: str) -> str:
    """What a recorded phase is in a run's breakdown: 'first calls' (compiles and tuning), 'checks' (every phase
    that checks a result: the oracle check with its own first calls at the check's size, the full-size and
    timed-path checks, ...) or 'other' (inputs, kernel capture, memory and clock probes). By name, so a check
    phase added later counts as a check without an edit here."""
    if name == FIRST_CALL:
        return "first calls"
    return "checks" if "check" in name else "other"


@dataclass(frozen=True)
class TimeBreakdown:
    """Where a run's wall time went, summed from its rows' phases (`phases_s`) and sampling (`sampling_s`).

    `workers` points ran at once (one per GPU), so the rows' seconds add up to at most `workers` x the sweep's
    wall; what they leave is outside every point: workers starting, results written, waiting. `warmup_s` is
    the compile warm-up before the sweep (run/warmup.py), outside the sweep's wall."""

    wall_s: float  # the sweep's, from its start to its last row written
    first_calls_s: float = 0.0
    checks_s: float = 0.0
    sampling_s: float = 0.0
    other_s: float = 0.0  # the other recorded phases of the points
    warmup_s: float = 0.0
    workers: int = 1
    unrecorded: int = 0  # rows that recorded no phases (refused, or ended early): their seconds are outside

    @classmethod
    def of(cls, rows: Iterable, wall_s: float, workers: int = 1, warmup_s: float = 0.0) -> "TimeBreakdown":
        """From result rows (anything with `phases_s` and `sampling_s`)."""
        kinds = {"first calls": 0.0, "checks": 0.0, "other": 0.0}
        sampling, unrecorded = 0.0, 0
        for r in rows:
            phases = getattr(r, "phases_s", None)
            if not phases:
                unrecorded += 1
            for name, s in (phases or {}).items():
                kinds[phase_kind(name)] += float(s)
            sampling += float(getattr(r, "sampling_s", None) or 0.0)
        return cls(wall_s, kinds["first calls"], kinds["checks"], sampling, kinds["other"], warmup_s,
                   max(1, workers), unrecorded)

    @property
    def inside_s(self) -> float:
        return self.first_calls_s + self.checks_s + self.sampling_s + self.other_s

    @property
    def outside_s(self) -> float:
        """Worker seconds outside every point (start-up, writing, idle): never below zero."""
        return max(0.0, self.wall_s * self.workers - self.inside_s)

    @property
    def total_s(self) -> float:
        return self.warmup_s + self.wall_s
