"""The eager launch of a call: what a caller that launches each call from Python pays (core/launch.py).

After a point's samples, its call is launched back to back in bursts, as a training step through autograd or
an engine's eager prefill launches it: CUDA events around each burst give the eager time per call (launch gaps
and the launching thread's cost included), and the thread's own wall time over the same launches, read before
the device is waited for, gives the host time per call. No L2 flush between calls: eager callers do none.

Each burst is primed: one call is launched before its start event, so the event fires when that call's work
ends and the timed calls find the pipeline as a loop of steps keeps it (the device busy while the host launches
ahead, or idle where the host cannot keep up). Without it a burst starts from an idle device and its first call
adds the host's latency up to its first kernel: with one or two calls a burst (a training step, a long prefill)
that latency read as 10-55% of the call, above the same call launched 20 to a burst from a process of its own
(scripts/eager_gap_probe.py, docs/BENCHMARKS.md "Three times").

On a CPU device every call is synchronous, so the wall timer's samples already are the eager time: there is
nothing more to measure (`from_wall`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass

from qlabench.core.launch import PRIMED_MIN_CALLS
from qlabench.measure.timing.stats import summarize

ROUNDS = 15  # bursts; the median over them is the row's eager time
MIN_ROUNDS = 5  # a slow call stops after this many once MAX_S has passed
MAX_S = 2.0  # wall seconds a probe may take beyond its first MIN_ROUNDS bursts
TARGET_BURST_MS = 5.0  # a burst long enough that event resolution and a burst's edges are not the noise
MIN_CALLS = PRIMED_MIN_CALLS  # even a long call is timed over a few: the per-call figure is a loop's, not one launch's
MAX_CALLS = 50


@dataclass(frozen=True)
class LaunchMeasurement:
    eager_ms: float  # median per call over the bursts
    eager_rel_noise: float  # IQR / median over the bursts
    host_ms: float  # median of the launching thread's wall per call
    calls: int  # calls per burst
    rounds: int
    how: str  # "events" (CUDA events around eager bursts) or "wall" (a CPU call's own time)

    def details(self) -> dict:
        # `primed`: each burst began with one call launched before its start event (core/launch.py,
        # unprimed_eager tells the rows of the probe before it did)
        return {"calls_per_burst": self.calls, "bursts": self.rounds, "timer": self.how,
                **({"primed": True} if self.how == "events" else {})}


def from_wall(samples_ms) -> LaunchMeasurement:
    """A CPU row's eager and host time: its wall timer's samples (a CPU call is its own launch)."""
    s = summarize(samples_ms)
    return LaunchMeasurement(s.median, s.rel_noise, s.median, 1, s.n, "wall")


def _calls_per_burst(fn: Callable[[], object], sync: Callable[[], object], clock) -> int:
    """Enough calls that one burst lasts about TARGET_BURST_MS, from one synchronised call's wall time."""
    sync()
    t = clock()
    fn()
    sync()
    ms = max((clock() - t) * 1e3, 1e-3)
    return max(MIN_CALLS, min(MAX_CALLS, round(TARGET_BURST_MS / ms)))


def primed_burst(fn: Callable[[], object], n: int, start: Callable[[], object], end: Callable[[], object],
                 clock: Callable[[], float]) -> float:
    """One burst: a priming call, the start mark, `n` calls, the end mark; the launching thread's seconds over
    the `n` calls. The priming call is launched before `start` so the device is already at work when the timed
    calls begin (the module's doc says why)."""
    fn()
    start()
    t = clock()
    for _ in range(n):
        fn()
    launched = clock() - t
    end()
    return launched


def measure_launch(fn: Callable[[], object], clock: Callable[[], float] = time.perf_counter) -> LaunchMeasurement:
    """Time `fn` launched back to back from Python on the current CUDA device (imports torch)."""
    import torch

    from qlabench.measure.sm_budget import active_stream

    sync = torch.cuda.synchronize
    n = _calls_per_burst(fn, sync, clock)
    eager, host = [], []
    start = clock()
    stream = active_stream()  # under an SM budget, every call runs on its green stream
    with torch.cuda.stream(stream) if stream is not None else contextlib.nullcontext():
        while len(eager) < ROUNDS and (len(eager) < MIN_ROUNDS or clock() - start < MAX_S):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            sync()
            launched = primed_burst(fn, n, a.record, b.record, clock)
            sync()
            eager.append(a.elapsed_time(b) / n)
            host.append(launched * 1e3 / n)
    e, h = summarize(eager), summarize(host)
    return LaunchMeasurement(e.median, e.rel_noise, h.median, n, e.n, "events")

