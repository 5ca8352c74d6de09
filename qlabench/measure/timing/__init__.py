"""Timers: how samples of one call are taken. Each returns every sample; summary stats live in stats.py."""

from qlabench.measure.timing.base import Measurement, Timer
from qlabench.measure.timing.stats import Summary, summarize
from qlabench.measure.timing.stopping import StopRule
from qlabench.measure.timing.wall import WallTimer

__all__ = ["Measurement", "Timer", "Summary", "summarize", "StopRule", "WallTimer", "make_timer"]


def make_timer(name: str, device: str, spec) -> Timer:
    """The timer called `name` ('auto' picks graph on CUDA and wall on CPU) for a TimingSpec."""
    import torch

    on_cuda = torch.device(device).type == "cuda"
    if name == "auto":
        name = "graph" if on_cuda else "wall"
    rule = StopRule.from_spec(spec)
    if name == "wall":
        return WallTimer(rule, warmup=spec.warmup, sync=torch.cuda.synchronize if on_cuda else None)
    if not on_cuda:
        raise ValueError(f"timer {name!r} needs a CUDA device")
    from qlabench.measure.timing.cuda import EventsTimer, GraphTimer

    if name == "events":
        return EventsTimer(rule, warmup=spec.warmup, l2_flush=spec.l2_flush)
    if name == "graph":
        return GraphTimer(rule, warmup=spec.warmup, l2_flush=spec.l2_flush)
    raise ValueError(f"unknown timer {name!r}")
