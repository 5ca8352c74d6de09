"""How a run samples its points, resolved once: the timer for the device, the stop rule and the warm-up.

A sweep resolves its timer a single time, when it starts and before any worker (`TimerPlan.resolve`: a bad
name, or a CUDA timer on a CPU device, is one TimerError, never a row per point). The plan is plain data
that travels, pickled, to every worker and every distributed rank, which build their timer from it
(`make`) and read its stop rule; nothing downstream resolves the timer again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from qlabench.core.errors import TimerError
from qlabench.core.regimes import lead_in_ms
from qlabench.core.spec import TIMERS, TimingSpec
from qlabench.measure.timing.stopping import StopRule

CUDA_TIMERS = ("events", "graph")


def resolve_timer(name: str, device) -> str:
    """The timer `name` stands for on `device` ('auto': graph on CUDA, wall on CPU).

    TimerError for an unknown name, or for a CUDA timer (events, graph) on a device that is not CUDA.
    Needs no torch: `device` is a device string (cpu, cuda, cuda:N) or a torch.device.
    """
    on_cuda = str(device).split(":", 1)[0] == "cuda"
    if name == "auto":
        return "graph" if on_cuda else "wall"
    if name not in TIMERS:
        raise TimerError(f"unknown timer {name!r}: expected one of {', '.join(TIMERS)}")
    if name in CUDA_TIMERS and not on_cuda:
        raise TimerError(f"timer {name!r} needs a CUDA device, not {str(device)!r} (use wall, or auto)")
    return name


@dataclass(frozen=True)
class TimerPlan:
    """The resolved sampling of a run: what was asked, what it is on this device, and when to stop."""

    requested: str  # as the suite or --timer named it (auto, wall, events, graph)
    name: str  # what that is on the run's device: wall, events or graph
    rule: StopRule
    warmup: int = TimingSpec.warmup
    l2_flush: bool = TimingSpec.l2_flush
    calls_per_sample: int = TimingSpec.calls_per_sample  # 0: the timer's own choice
    regime: str = TimingSpec.regime  # core/regimes.py
    sustained_ms: float = TimingSpec.sustained_ms

    @classmethod
    def resolve(cls, requested: str, device, spec: TimingSpec) -> TimerPlan:
        """The plan for timer `requested` on `device` with a suite's [timing] (TimerError if it cannot run)."""
        return cls(requested=requested, name=resolve_timer(requested, device), rule=StopRule.from_spec(spec),
                   warmup=spec.warmup, l2_flush=spec.l2_flush,
                   calls_per_sample=getattr(spec, "calls_per_sample", TimingSpec.calls_per_sample),
                   regime=getattr(spec, "regime", TimingSpec.regime),
                   sustained_ms=getattr(spec, "sustained_ms", TimingSpec.sustained_ms))

    @property
    def preheat_ms(self) -> float:
        """The lead-in before a point's samples: `sustained_ms` in the sustained regime, none in a burst."""
        return lead_in_ms(self.regime, self.sustained_ms)

    def for_backend(self, backend: str, graph_capturable: bool) -> tuple[TimerPlan, dict]:
        """The plan a backend's points are timed with, and what its row's extra_json says about it ({} when
        it is this plan).

        A call that cannot be captured in a CUDA graph (`Backend.graph_capturable` False) is timed with
        CUDA events instead of the graph timer: eager calls, launch gaps included. The row then records the
        timer asked for and why (`timer_requested`, `timer_note`: the keys a distributed row uses when the
        sweep's timer could not apply). Every other plan (wall, events, or a capturable backend) is this one."""
        if graph_capturable or self.name != "graph":
            return self, {}
        asked = f"timer {self.requested!r}" + (f" ({self.name} here)" if self.name != self.requested else "")
        why = (f"{asked} not used: {backend} cannot be captured in a CUDA graph, so it is timed with events "
               "(eager calls, launch gaps included)")
        return replace(self, name="events"), {"timer_requested": self.requested, "timer_note": why}

    def make(self, device, calls_per_sample: int | None = None):
        """The timer object for this plan on `device` (imports torch; in a worker or a rank).

        `calls_per_sample` overrides the plan's (0 or None there: the timer's own choice)."""
        import torch

        n = calls_per_sample or self.calls_per_sample or None
        if self.name == "wall":
            from qlabench.measure.timing.wall import WallTimer

            sync = torch.cuda.synchronize if torch.device(device).type == "cuda" else None

            return WallTimer(self.rule, warmup=self.warmup, sync=sync, calls_per_sample=n, preheat_ms=self.preheat_ms)
        from qlabench.measure.timing.cuda import EventsTimer, GraphTimer

        cls = EventsTimer if self.name == "events" else GraphTimer
        return cls(self.rule, warmup=self.warmup, l2_flush=self.l2_flush, calls_per_sample=n,
                   preheat_ms=self.preheat_ms)
