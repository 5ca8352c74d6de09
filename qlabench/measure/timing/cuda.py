"""CUDA timers: events around eager calls, and CUDA-graph replay of n calls.

- `events`: CUDA events around each eager call. Includes launch overhead (up to ~2x at small sizes on
  the H200): what an eager PyTorch user sees.
- `graph`: n calls captured in one CUDA graph; each sample is one replay's time / n. Launch gaps mostly
  vanish, which is what FlashQLA's table reports (tilelang's do_bench with backend="cudagraph").
With `l2_flush`, a buffer larger than L2 is overwritten before every sample so inputs are not served
from L2 left warm by the previous call (for graphs: before each replay, as FlashQLA's timing does).
Under an SM budget (measure/sm_budget.py) every call, the warm-up and the capture run on the budget's green
context stream, and graphs are replayed there: the current stream inside `held_to`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import torch

from qlabench.core.spec import TimingSpec
from qlabench.measure.sm_budget import active_stream
from qlabench.measure.timing.base import Measurement, preheat, preheat_details
from qlabench.measure.timing.stopping import StopRule

# Samples are taken in batches between host synchronisations: syncing after each sample would put the
# host's latency between consecutive kernels, and never syncing would leave the stop rule blind.
BATCH = 10



def warm_on_side_stream(fn) -> None:
    """One call of `fn` on a side stream, then a sync: the warm-up torch's CUDA-graph docs require before
    a capture (every capture in qlabench goes through here). Under an SM budget the side stream is the
    budget's own green stream (a side stream of the primary context would run on the whole GPU)."""
    if active_stream() is not None:
        fn()
        torch.cuda.synchronize()
        return
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()

def graph_capture(graph: torch.cuda.CUDAGraph):
    """`torch.cuda.graph(graph)`, captured on the held SM budget's green stream when one is held (torch's own
    side stream otherwise): every capture in qlabench goes through here."""
    return torch.cuda.graph(graph, stream=active_stream())


class L2Flusher:
    def __init__(self, enabled: bool):
        self.buf = None
        if enabled:
            l2 = getattr(torch.cuda.get_device_properties(torch.cuda.current_device()), "L2_cache_size", 64 << 20)
            # Twice the L2, at least 128 MiB: writing it evicts whatever the last call left behind.
            self.buf = torch.empty(max(2 * l2, 128 << 20) // 4, dtype=torch.int32, device="cuda")

    def __call__(self) -> None:
        if self.buf is not None:
            self.buf.zero_()


class EventsTimer:
    name = "events"

    def __init__(self, rule: StopRule, warmup: int = TimingSpec.warmup, l2_flush: bool = TimingSpec.l2_flush,
                 calls_per_sample: int | None = None, preheat_ms: float = 0.0):
        self.rule, self.warmup, self.l2_flush = rule, warmup, l2_flush
        self.n = calls_per_sample or 1  # eager calls between one pair of events
        self.preheat_ms = preheat_ms  # the `sustained` regime's lead-in (base.preheat)

    def measure(self, fn: Callable[[], object]) -> Measurement:
        flush = L2Flusher(self.l2_flush)
        for _ in range(self.warmup):
            fn()
        torch.cuda.synchronize()
        ran_ms = preheat(lambda: (flush(), fn()), torch.cuda.synchronize, self.preheat_ms)
        samples: list[float] = []
        start = time.perf_counter()
        while True:
            evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(BATCH)]
            for a, b in evs:
                flush()
                a.record()
                for _ in range(self.n):
                    fn()
                b.record()
            torch.cuda.synchronize()
            for a, b in evs:
                samples.append(a.elapsed_time(b) / self.n)
                stop, met = self.rule.done(samples, time.perf_counter() - start)
                if stop:
                    return Measurement(self.name, tuple(samples), met,
                                       {"calls_per_sample": self.n, "l2_flush": self.l2_flush,
                                        **preheat_details(self.preheat_ms, ran_ms)})


class GraphTimer:
    name = "graph"

    def __init__(self, rule: StopRule, warmup: int = TimingSpec.warmup, l2_flush: bool = TimingSpec.l2_flush,
                 target_replay_ms: float = 2.0, max_calls_per_graph: int = 100, calls_per_sample: int | None = None,
                 preheat_ms: float = 0.0):
        self.rule, self.warmup, self.l2_flush = rule, warmup, l2_flush
        self.preheat_ms = preheat_ms  # the `sustained` regime's lead-in (base.preheat): replays, flushes between
        self.target_replay_ms, self.max_calls = target_replay_ms, max_calls_per_graph
        self.forced_n = calls_per_sample or None  # None / 0: chosen per point by _calls_per_graph

    def _calls_per_graph(self, fn) -> int:
        """Enough calls that one replay lasts ~target_replay_ms, so event resolution is not the noise.

        Chosen from one eager call's time, launch gaps included: a call of several kernels whose eager time
        is above its GPU time gets fewer calls per replay than its GPU time would (FlashInfer 0.7's split
        call: 2 per replay where ~3 fit). `calls_per_sample` fixes the count instead."""
        if self.forced_n:
            return self.forced_n
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        eager_ms = max(a.elapsed_time(b), 1e-3)
        return max(1, min(self.max_calls, round(self.target_replay_ms / eager_ms)))

    def measure(self, fn: Callable[[], object]) -> Measurement:
        flush = L2Flusher(self.l2_flush)
        for _ in range(self.warmup):
            fn()
        torch.cuda.synchronize()
        n = self._calls_per_graph(fn)
        graph = torch.cuda.CUDAGraph()
        warm_on_side_stream(fn)
        try:
            with graph_capture(graph):
                for _ in range(n):
                    fn()
            torch.cuda.synchronize()
        except Exception as e:
            # Some calls cannot be captured (a host sync inside, e.g. a cache miss that reads
            # cu_seqlens). Fall back to eager events and say so: the row's timer reads "events".
            torch.cuda.synchronize()
            m = EventsTimer(self.rule, warmup=0, l2_flush=self.l2_flush, preheat_ms=self.preheat_ms).measure(fn)
            reason = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
            return Measurement(m.timer, m.samples_ms, m.noise_target_met, {**m.details, "graph_fallback": reason})
        graph.replay()  # first replay uploads the graph
        torch.cuda.synchronize()
        ran_ms = preheat(lambda: (flush(), graph.replay()), torch.cuda.synchronize, self.preheat_ms)
        how = {"calls_per_sample": n, "l2_flush": self.l2_flush, "calls_forced": bool(self.forced_n),
               **preheat_details(self.preheat_ms, ran_ms)}
        samples: list[float] = []
        start = time.perf_counter()
        try:
            while True:
                evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                       for _ in range(BATCH)]
                for a, b in evs:
                    flush()
                    a.record()
                    graph.replay()
                    b.record()
                torch.cuda.synchronize()
                for a, b in evs:
                    samples.append(a.elapsed_time(b) / n)
                    stop, met = self.rule.done(samples, time.perf_counter() - start)
                    if stop:
                        return Measurement(self.name, tuple(samples), met, how)
        finally:
            del graph
