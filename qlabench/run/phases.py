"""The wall seconds of each phase of a point (the row's `phases_s`): what a point costs beyond its sampling."""

from __future__ import annotations

import time


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
