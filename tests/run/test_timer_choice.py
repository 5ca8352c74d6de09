"""A backend whose call cannot be captured in a CUDA graph (`Backend.graph_capturable` False) is timed with
the plan `TimerPlan.for_backend` gives it, and its row says which timer ran and why.

A CUDA timer cannot run here, so `make` is replaced by one that records the timer it was asked for and
samples with the wall clock: what is tested is which plan run_point asks for, and what the row keeps.
"""

from __future__ import annotations

import json

import pytest

from qlabench.backends.naive import NaiveChunk, NaiveRecurrent
from qlabench.core.point import Point
from qlabench.core.spec import CheckSpec, Suite, TimingSpec
from qlabench.measure import env as envmod
from qlabench.measure.timing import StopRule, TimerPlan, WallTimer
from qlabench.run.point import MeasureContext, run_point


class Uncapturable(NaiveChunk):
    name = "uncapturable"
    graph_capturable = False


class Capturable(NaiveChunk):
    name = "capturable"


@pytest.fixture
def made(monkeypatch):
    names: list[str] = []

    def make(self, device):
        names.append(self.name)
        return WallTimer(self.rule, warmup=0)

    monkeypatch.setattr(TimerPlan, "make", make)
    return names


def _row(backend: str):
    spec = TimingSpec(timer="graph", warmup=0, min_samples=2, max_samples=2)
    suite = Suite(name="t", path="<test>", points=(), timing=spec, check=CheckSpec(oracle_max_tokens=16))
    # the sweep's plan for `graph` on a CUDA device, built directly: resolving it here would refuse the CPU
    plan = TimerPlan(requested="graph", name="graph", rule=StopRule.from_spec(spec), warmup=0)
    reg = {b.name: b for b in (NaiveRecurrent(), Uncapturable(), Capturable())}
    ctx = MeasureContext(suite=suite, device="cpu", env=envmod.capture("cpu"), run_id="r", timer=plan,
                         registry=reg, check=True)
    p = Point(backend=backend, mode="fwd", layout="varlen", batch=1, seqlens=(12, 4), h_qk=1, h_v=2, K=8, V=8,
              dtype="float32")
    return run_point(p, ctx)


def test_an_uncapturable_backend_is_timed_with_events_and_its_row_says_why(made):
    row = _row("uncapturable")
    assert row.status == "ok", row.reason
    assert made == ["events"]
    extra = json.loads(row.extra_json)
    assert extra["timer_requested"] == "graph"
    assert extra["timer_note"].startswith("timer 'graph' not used: uncapturable cannot be captured in a CUDA graph")


def test_a_capturable_backend_keeps_the_runs_timer(made):
    row = _row("capturable")
    assert row.status == "ok", row.reason
    assert made == ["graph"]
    extra = json.loads(row.extra_json)
    assert "timer_note" not in extra and "timer_requested" not in extra
