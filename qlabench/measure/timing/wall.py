"""Wall-clock timer: one call per sample (or `calls_per_sample` back to back), synchronising the device (if any)
around the sample."""

from __future__ import annotations

import time
from collections.abc import Callable

from qlabench.core.spec import TimingSpec
from qlabench.measure.timing.base import Measurement, preheat, preheat_details
from qlabench.measure.timing.stopping import StopRule


class WallTimer:
    name = "wall"

    def __init__(self, rule: StopRule, warmup: int = TimingSpec.warmup, sync: Callable[[], None] | None = None,
                 clock: Callable[[], float] = time.perf_counter, calls_per_sample: int | None = None,
                 preheat_ms: float = 0.0):
        self.rule, self.warmup, self.sync, self.clock = rule, warmup, sync or (lambda: None), clock
        self.n = calls_per_sample or 1
        self.preheat_ms = preheat_ms  # the `sustained` regime's lead-in (base.preheat)

    def measure(self, fn: Callable[[], object]) -> Measurement:
        for _ in range(self.warmup):
            fn()
        self.sync()
        ran_ms = preheat(fn, self.sync, self.preheat_ms, self.clock)
        samples: list[float] = []
        start = self.clock()
        while True:
            t0 = self.clock()
            for _ in range(self.n):
                fn()
            self.sync()
            samples.append((self.clock() - t0) * 1e3 / self.n)
            stop, met = self.rule.done(samples, self.clock() - start)
            if stop:
                return Measurement(self.name, tuple(samples), met, {"calls_per_sample": self.n, **preheat_details(self.preheat_ms, ran_ms)})
