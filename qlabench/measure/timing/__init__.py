"""Timers: how samples of one call are taken. Each returns every sample; summary stats live in stats.py."""

from qlabench.core.errors import TimerError
from qlabench.core.spec import TIMERS as TIMER_NAMES  # auto, wall, events, graph
from qlabench.measure.timing.base import Measurement, Timer
from qlabench.measure.timing.stats import Summary, summarize
from qlabench.measure.timing.stopping import StopRule
from qlabench.measure.timing.wall import WallTimer

__all__ = ["Measurement", "Timer", "Summary", "summarize", "StopRule", "WallTimer", "make_timer", "resolve_timer",
           "TIMER_NAMES"]

CUDA_TIMERS = ("events", "graph")


def resolve_timer(name: str, device: str) -> str:
    """The timer `name` stands for on `device` ('auto': graph on CUDA, wall on CPU).

    TimerError for an unknown name, or for a CUDA timer (events, graph) on a device that is not CUDA.
    Needs no torch: `device` is a device string (cpu, cuda, cuda:N) or a torch.device.
    """
    on_cuda = str(device).split(":", 1)[0] == "cuda"
    if name == "auto":
        return "graph" if on_cuda else "wall"
    if name not in TIMER_NAMES:
        raise TimerError(f"unknown timer {name!r}: expected one of {', '.join(TIMER_NAMES)}")
    if name in CUDA_TIMERS and not on_cuda:
        raise TimerError(f"timer {name!r} needs a CUDA device, not {str(device)!r} (use wall, or auto)")
    return name


def make_timer(name: str, device: str, spec) -> Timer:
    """The timer called `name` ('auto' picks graph on CUDA and wall on CPU) for a TimingSpec."""
    import torch

    dev = torch.device(device)
    name = resolve_timer(name, dev.type)
    rule = StopRule.from_spec(spec)
    if name == "wall":
        return WallTimer(rule, warmup=spec.warmup, sync=torch.cuda.synchronize if dev.type == "cuda" else None)
    from qlabench.measure.timing.cuda import EventsTimer, GraphTimer

    if name == "events":
        return EventsTimer(rule, warmup=spec.warmup, l2_flush=spec.l2_flush)
    return GraphTimer(rule, warmup=spec.warmup, l2_flush=spec.l2_flush)
