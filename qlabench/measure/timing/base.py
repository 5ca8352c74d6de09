"""The timer interface."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class Measurement:
    timer: str
    samples_ms: tuple[float, ...]
    noise_target_met: bool
    details: dict = field(default_factory=dict)  # timer-specific facts (calls per sample, l2 flush, ...)


def preheat(step: Callable[[], object], sync: Callable[[], object], ms: float,
            clock: Callable[[], float] = time.perf_counter, steps_per_sync: int = 10) -> float:
    """Run `step` back to back for at least `ms` of wall time (0: not at all); returns the ms it ran.

    The `sustained` regime's lead-in (core/regimes.py): a GPU that has just been busy for hundreds of ms
    runs at the clocks its power draw allows, which a kernel timed from idle does not see. The host syncs
    every `steps_per_sync` steps, so the wall time is the device's time and the queue never runs ahead."""
    if ms <= 0:
        return 0.0
    start = clock()
    while (clock() - start) * 1e3 < ms:
        for _ in range(steps_per_sync):
            step()
        sync()
    return (clock() - start) * 1e3


def preheat_details(asked_ms: float, ran_ms: float) -> dict:
    """What a measurement's details say about its lead-in: nothing when none was asked."""
    return {"preheat_ms": round(ran_ms, 3)} if asked_ms > 0 else {}


class Timer(Protocol):
    name: str

    def measure(self, fn: Callable[[], object]) -> Measurement:
        """Warm up, then sample per-call times of `fn` until the stop rule says enough."""
        ...
