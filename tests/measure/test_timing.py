"""Choosing a timer (qlabench/measure/timing/__init__.py): resolved and checked without torch or a worker."""

from __future__ import annotations

import pytest

from qlabench.core.errors import ConfigError, QlabenchError, TimerError
from qlabench.measure.timing import TIMER_NAMES, make_timer, resolve_timer


@pytest.mark.parametrize("name, device, want", [
    ("auto", "cpu", "wall"), ("auto", "cuda", "graph"), ("auto", "cuda:1", "graph"), ("wall", "cpu", "wall"),
    ("wall", "cuda", "wall"), ("events", "cuda", "events"), ("graph", "cuda:0", "graph"),
])
def test_resolve_timer(name, device, want):
    assert resolve_timer(name, device) == want


def test_resolve_timer_takes_a_torch_device():
    torch = pytest.importorskip("torch")
    assert resolve_timer("auto", torch.device("cpu")) == "wall"
    assert resolve_timer("graph", torch.device("cuda", 0)) == "graph"


@pytest.mark.parametrize("name, device, words", [
    ("bogus", "cpu", "unknown timer 'bogus'"), ("Graph", "cuda", "unknown timer 'Graph'"),
    ("graph", "cpu", "needs a CUDA device"), ("events", "cpu", "needs a CUDA device"),
])
def test_bad_timers_are_timer_errors(name, device, words):
    with pytest.raises(TimerError, match=words) as e:
        resolve_timer(name, device)
    assert isinstance(e.value, ConfigError) and isinstance(e.value, QlabenchError)
    assert isinstance(e.value, ValueError)  # callers that caught ValueError keep working


def test_every_timer_name_is_known():
    assert set(TIMER_NAMES) == {"auto", "wall", "events", "graph"}


def test_make_timer_refuses_what_resolve_timer_refuses():
    from qlabench.core.spec import TimingSpec

    with pytest.raises(TimerError, match="needs a CUDA device"):
        make_timer("graph", "cpu", TimingSpec())
    assert make_timer("auto", "cpu", TimingSpec()).name == "wall"


# -- a backend whose call cannot be captured in a CUDA graph -----------------------------------------


def _plan(name, device="cuda"):
    from qlabench.core.spec import TimingSpec
    from qlabench.measure.timing import TimerPlan

    return TimerPlan.resolve(name, device, TimingSpec(warmup=2, l2_flush=True, min_samples=4))


@pytest.mark.parametrize("requested, asked", [("graph", "timer 'graph'"), ("auto", "timer 'auto' (graph here)")])
def test_an_uncapturable_backend_is_timed_with_events_and_says_why(requested, asked):
    plan = _plan(requested)
    used, details = plan.for_backend("fla-intracp", graph_capturable=False)
    why = details["timer_note"]
    assert (plan.name, used.name) == ("graph", "events")
    # only the timer changes: the stop rule, warm-up, flush and what was asked travel unchanged
    assert (used.requested, used.rule, used.warmup, used.l2_flush) == (requested, plan.rule, 2, True)
    assert why.startswith(f"{asked} not used: fla-intracp cannot be captured in a CUDA graph")
    assert "events" in why and details["timer_requested"] == requested


@pytest.mark.parametrize("requested, device, capturable", [
    ("graph", "cuda", True), ("events", "cuda", False), ("wall", "cuda", False), ("auto", "cpu", False),
])
def test_every_other_plan_is_kept_as_it_is(requested, device, capturable):
    plan = _plan(requested, device)
    assert plan.for_backend("b", graph_capturable=capturable) == (plan, {})


# -- the sustained regime's lead-in (base.preheat) ---------------------------------------------------


class _Clock:
    """A clock that moves 1 ms per call of the timed function, so a lead-in's length is exact."""

    def __init__(self):
        self.t, self.calls = 0.0, 0

    def __call__(self):
        return self.t

    def fn(self):
        self.calls += 1
        self.t += 1e-3


def test_preheat_runs_the_step_back_to_back_for_its_time_and_syncs():
    from qlabench.measure.timing.base import preheat

    clock, syncs = _Clock(), []
    ran = preheat(clock.fn, lambda: syncs.append(clock.calls), 25.0, clock, steps_per_sync=10)
    assert clock.calls == 30 and ran == pytest.approx(30.0)  # whole groups of 10 until >= 25 ms
    assert syncs == [10, 20, 30]
    assert preheat(clock.fn, lambda: None, 0.0, clock) == 0.0 and clock.calls == 30


@pytest.mark.parametrize("preheat_ms, lead_in_calls", [(0.0, 0), (40.0, 40)])
def test_wall_timer_samples_after_its_lead_in_and_says_so(preheat_ms, lead_in_calls):
    from qlabench.core.spec import TimingSpec
    from qlabench.measure.timing.stopping import StopRule
    from qlabench.measure.timing.wall import WallTimer

    clock = _Clock()
    rule = StopRule.from_spec(TimingSpec(min_samples=3, max_samples=3, max_time_s=10.0))
    m = WallTimer(rule, warmup=2, clock=clock, preheat_ms=preheat_ms).measure(clock.fn)
    assert clock.calls == 2 + lead_in_calls + 3 and len(m.samples_ms) == 3
    assert m.details.get("preheat_ms") == (pytest.approx(preheat_ms) if preheat_ms else None)


def test_the_plan_leads_in_only_in_the_sustained_regime():
    from qlabench.core.spec import TimingSpec
    from qlabench.measure.timing import TimerPlan

    burst = TimerPlan.resolve("wall", "cpu", TimingSpec(sustained_ms=50.0))
    sustained = TimerPlan.resolve("wall", "cpu", TimingSpec(regime="sustained", sustained_ms=50.0))
    assert (burst.regime, burst.preheat_ms) == ("burst", 0.0)
    assert (sustained.regime, sustained.preheat_ms) == ("sustained", 50.0)
    assert sustained.make("cpu").preheat_ms == 50.0 and burst.make("cpu").preheat_ms == 0.0
