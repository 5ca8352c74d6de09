"""The autotune-regret table (workflows/autotune_regret.py), on CPU with a stand-in autotuner whose tuned
config makes a call slow on any other length: 1.00x on the diagonal, the order's cost off it."""

from __future__ import annotations

import time

import pytest
import standin_autotuner

from qlabench.backends import REGISTRY
from qlabench.backends.naive import NaiveChunk
from qlabench.core.errors import ConfigError
from qlabench.core.point import Point
from qlabench.core.spec import Suite, TimingSpec
from qlabench.workflows.autotune_regret import (measure_regret, read_regret, regret_markdown, regret_summary,
                                                 write_regret)


class MistunedIsSlow(NaiveChunk):
    """A call sleeps 2 ms more when the stand-in autotuner was tuned on another length than its own."""
    name = "mistuned-is-slow"
    autotune_modules = ("regret_lib.",)

    def __init__(self, tuner):
        self.tuner = tuner

    def prepare_point(self, point, inp):
        length = inp.q.shape[1]

        def call():
            if self.tuner.run(point.h_v, length) != length:
                time.sleep(0.002)
            return None

        return call


@pytest.fixture
def backend(monkeypatch):
    return MistunedIsSlow(standin_autotuner.install(monkeypatch, "regret_lib.ops").kernel)


def _suite(name, lengths):
    pts = tuple(Point(backend=name, mode="fwd", layout="dense", batch=1, seqlens=(n,), h_qk=1, h_v=2, K=8, V=8,
                      dtype="float32") for n in lengths)
    return Suite(name="r", path="<r>", points=pts,
                 timing=TimingSpec(timer="wall", warmup=0, min_samples=3, max_samples=3, max_time_s=1.0))


def test_each_shape_is_slow_only_under_another_shapes_tuning(backend, tmp_path):
    cells = measure_regret(_suite(backend.name, [32, 64, 128]), backend.name, "cpu",
                           registry={backend.name: backend})
    assert len(cells) == 9
    for c in cells:
        if c.tuned_on == c.timed:
            assert c.regret == 1.0
        else:
            assert c.regret > 2  # a sleep of 2 ms on a call of microseconds
    summary = regret_summary(cells)
    assert [r["timed"] for r in summary] == ["1x32", "1x64", "1x128"]
    assert all(r["worst_regret"] > 2 and r["others"] == 2 for r in summary)
    csv_path, md_path = write_regret(cells, tmp_path)
    assert read_regret(csv_path) == cells
    assert "| 1/2 K8 V8 float32 | 1x64 |" in md_path.read_text()
    assert md_path.read_text() == regret_markdown(cells)


def test_a_backend_that_does_not_autotune_is_refused():
    with pytest.raises(ConfigError, match="does not autotune"):
        measure_regret(_suite("naive-chunk", [32]), "naive-chunk", "cpu", registry=REGISTRY)
