"""Warm-up runs a layer point as the sweep does: prepared from its point, not from its inputs alone."""

from __future__ import annotations

from qlabench.core.spec import load_suite
from qlabench.run.warmup import warm_points


def test_warm_up_runs_every_layer_point_of_the_cpu_fixture(data_dir):
    suite = load_suite(str(data_dir / "layer-cpu.toml"))
    results = warm_points(suite, list(range(len(suite.points))), "cpu")
    assert [status for _, status in results] == ["ok"] * len(suite.points)
