"""One call timed under several regimes (issue 36): what a timer reports depends on what ran just before.

Each function returns a `RegimeTiming`: per-call samples and how they were taken. The regimes:
- `graph_timer`: qlabench's graph timer (cuda.py) at a chosen calls-per-sample count (None: its own choice,
  ~2 ms of calls by one eager call's time), L2 flushed before each replay or not; `events_timer`: its
  events timer (eager calls back to back);
- `flush_between`: n calls in one graph with an L2 flush captured before each call, minus a graph of the
  flushes alone replayed beside it: every call starts from a cold L2, back to back;
- `isolated`: a graph of n calls replayed after an L2 flush and an idle gap (the GPU idle, the host
  asleep): n = 1 is a lone cold call, n calls ~2 ms a short burst;
- `sustained`: the same graph replayed back to back for ~total_ms (one flush first), as a serving engine's
  busy step loop or triton's do_bench_cudagraph (one graph of ~rep ms, replayed) keep the GPU busy;
- `cold_eager`: one eager call after an L2 flush and an idle gap, CUDA events around it (launches included).
A `ClockTrace` (probes/clock_trace.py) is marked active while each regime's timed work runs, so its
clocks are those of the regime.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from qlabench.measure.probes.clock_trace import ClockTrace
from qlabench.measure.timing.cuda import (BATCH, EventsTimer, GraphTimer, L2Flusher, graph_capture,
                                          warm_on_side_stream)
from qlabench.measure.timing.stopping import StopRule


@dataclass(frozen=True)
class RegimeTiming:
    samples_ms: tuple[float, ...]  # per call
    calls_per_sample: int | None
    l2: str  # what L2 held when a sample started: "flushed", "flushed before each call", "warm"
    details: dict = field(default_factory=dict)


def _pair() -> tuple:
    return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)


def capture(fn: Callable[[], object], n: int, before_each: Callable[[], None] | None = None) -> torch.cuda.CUDAGraph:
    """n calls of `fn` (each preceded by `before_each`, if given) in one CUDA graph, warmed up on a side stream."""
    warm_on_side_stream(fn)
    graph = torch.cuda.CUDAGraph()
    with graph_capture(graph):
        for _ in range(n):
            if before_each is not None:
                before_each()
            fn()
    torch.cuda.synchronize()
    graph.replay()  # the first replay uploads the graph
    torch.cuda.synchronize()
    return graph


def replay_ms(graph: torch.cuda.CUDAGraph, times: int = 5) -> float:
    """Median device time of one replay (back to back, after one untimed replay)."""
    graph.replay()
    out = []
    for _ in range(times):
        a, b = _pair()
        a.record()
        graph.replay()
        b.record()
        torch.cuda.synchronize()
        out.append(a.elapsed_time(b))
    return statistics.median(out)


def calls_for(fn: Callable[[], object], target_ms: float, max_calls: int = 4096) -> tuple[int, float]:
    """(calls whose replay lasts ~target_ms, one call's device time in ms from a one-call graph)."""
    g = capture(fn, 1)
    ms = max(replay_ms(g), 1e-3)
    del g
    return max(1, min(max_calls, round(target_ms / ms))), ms


def graph_timer(fn, rule: StopRule, trace: ClockTrace, calls: int | None, l2_flush: bool,
                warmup: int = 3) -> RegimeTiming:
    """qlabench's graph timer as a sweep runs it, at `calls` per sample (None: its own choice)."""
    trace.active(True)
    try:
        m = GraphTimer(rule, warmup=warmup, l2_flush=l2_flush, calls_per_sample=calls).measure(fn)
    finally:
        trace.active(False)
    details = dict(m.details, timer=m.timer)
    return RegimeTiming(m.samples_ms, m.details.get("calls_per_sample"),
                        "flushed" if l2_flush else "warm", details)


def events_timer(fn, rule: StopRule, trace: ClockTrace, l2_flush: bool, warmup: int = 3) -> RegimeTiming:
    """qlabench's events timer: eager calls back to back (launches included), L2 flushed before each or not."""
    trace.active(True)
    try:
        m = EventsTimer(rule, warmup=warmup, l2_flush=l2_flush).measure(fn)
    finally:
        trace.active(False)
    return RegimeTiming(m.samples_ms, 1, "flushed" if l2_flush else "warm", dict(m.details, timer=m.timer))


def flush_between(fn, rule: StopRule, trace: ClockTrace, calls: int) -> RegimeTiming:
    """`calls` calls per replay, an L2 flush captured before each; the flushes' own time (a graph of them
    alone, replayed right after each sample) is subtracted per sample."""
    flush = L2Flusher(True)
    with_calls = capture(fn, calls, before_each=flush)
    flushes = capture(flush, calls)
    samples: list[float] = []
    flush_ms: list[float] = []
    start = time.perf_counter()
    trace.active(True)
    try:
        while True:
            evs = [(_pair(), _pair()) for _ in range(BATCH)]
            for (a, b), (c, d) in evs:
                a.record()
                with_calls.replay()
                b.record()
                c.record()
                flushes.replay()
                d.record()
            torch.cuda.synchronize()
            for (a, b), (c, d) in evs:
                f = c.elapsed_time(d)
                flush_ms.append(f / calls)
                samples.append((a.elapsed_time(b) - f) / calls)
            stop, _ = rule.done(samples, time.perf_counter() - start)
            if stop:
                break
    finally:
        trace.active(False)
        del with_calls, flushes
    return RegimeTiming(tuple(samples), calls, "flushed before each call",
                        {"flush_ms_median": statistics.median(flush_ms)})


def after_idle(call, flush, trace: ClockTrace, gap_s: float) -> float:
    """Milliseconds of one `call` (a graph replay or an eager call) timed with CUDA events after an L2 flush,
    a synchronisation and `gap_s` of idle GPU, with the clock trace active around it."""
    flush()
    torch.cuda.synchronize()
    time.sleep(gap_s)
    a, b = _pair()
    trace.active(True)
    a.record()
    call()
    b.record()
    torch.cuda.synchronize()
    trace.active(False)
    return a.elapsed_time(b)


def isolated(fn, trace: ClockTrace, calls: int, samples: int, gap_s: float) -> RegimeTiming:
    """A graph of `calls` calls replayed `samples` times, each after an L2 flush, a synchronisation and
    `gap_s` of idle GPU: a lone cold call (calls = 1) or a short burst from idle."""
    flush = L2Flusher(True)
    graph = capture(fn, calls)
    try:
        out = [after_idle(graph.replay, flush, trace, gap_s) / calls for _ in range(samples)]
    finally:
        del graph
    return RegimeTiming(tuple(out), calls, "flushed", {"idle_gap_ms": gap_s * 1e3, "replays": samples})


def sustained(fn, trace: ClockTrace, calls: int, total_ms: float, call_ms: float) -> RegimeTiming:
    """The graph of `calls` calls replayed back to back for ~total_ms after one L2 flush; a sample per
    replay. Details: the medians of the first and the last quarter of the window (a clock that sags under
    load shows as a later quarter slower than the first)."""
    flush = L2Flusher(True)
    graph = capture(fn, calls)
    replays = max(8, round(total_ms / max(calls * call_ms, 1e-3)))
    evs = [_pair() for _ in range(replays)]
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    trace.active(True)
    try:
        flush()
        for a, b in evs:
            a.record()
            graph.replay()
            b.record()
        torch.cuda.synchronize()
    finally:
        trace.active(False)
        wall_ms = (time.perf_counter() - t0) * 1e3
        del graph
    out = [a.elapsed_time(b) / calls for a, b in evs]
    q = max(1, len(out) // 4)
    return RegimeTiming(tuple(out), calls, "warm", {
        "replays": replays, "window_ms": wall_ms, "first_quarter_ms": statistics.median(out[:q]),
        "last_quarter_ms": statistics.median(out[-q:])})


def cold_eager(fn, trace: ClockTrace, samples: int, gap_s: float) -> RegimeTiming:
    """One eager call per sample after an L2 flush, a synchronisation and `gap_s` idle; CUDA events around
    the call, so its launches count, as for a lone call of an eager PyTorch program."""
    flush = L2Flusher(True)
    fn()
    out = [after_idle(fn, flush, trace, gap_s) for _ in range(samples)]
    return RegimeTiming(tuple(out), 1, "flushed", {"idle_gap_ms": gap_s * 1e3})
