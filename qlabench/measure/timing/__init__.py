"""Timers: how samples of one call are taken. Each returns every sample; summary stats live in stats.py.

A run resolves its timer once into a `TimerPlan` (plan.py) that travels to its workers and ranks.
"""

from qlabench.core.spec import TIMERS as TIMER_NAMES  # auto, wall, events, graph
from qlabench.measure.timing.base import Measurement, Timer
from qlabench.measure.timing.plan import CUDA_TIMERS, TimerPlan, resolve_timer
from qlabench.measure.timing.stats import Summary, summarize
from qlabench.measure.timing.stopping import StopRule
from qlabench.measure.timing.wall import WallTimer

__all__ = ["CUDA_TIMERS", "Measurement", "Timer", "TimerPlan", "Summary", "summarize", "StopRule", "WallTimer",
           "make_timer", "resolve_timer", "TIMER_NAMES"]


def make_timer(name: str, device: str, spec) -> Timer:
    """The timer called `name` ('auto' picks graph on CUDA and wall on CPU) for a TimingSpec, outside a run."""
    return TimerPlan.resolve(name, device, spec).make(device)
