"""`[timing] sensitivity`: run_point times the point again at other calls per sample and the row says whether
its time depends on them (calls_sensitivity_ms, calls_sensitive), through the store and into show's marks."""

from __future__ import annotations

import json

import pandas as pd

from qlabench.backends import REGISTRY
from qlabench.backends.synthetic import COLD_ENV
from qlabench.core.point import Point
from qlabench.core.spec import CheckSpec, Suite, TimingSpec
from qlabench.measure import env as envmod
from qlabench.measure.timing import TimerPlan
from qlabench.run.point import MeasureContext, run_point


def _row(monkeypatch, sensitivity: bool, cold_ms: float):
    monkeypatch.setenv(COLD_ENV, str(cold_ms))
    p = Point(backend="synthetic", mode="fwd", layout="dense", batch=1, seqlens=(16,), h_qk=1, h_v=1, K=8, V=8,
              dtype="float32")
    # a noise target never met: the stop rule's statistics after every sample are the idle gap between samples
    timing = TimingSpec(timer="wall", warmup=1, min_samples=2, max_samples=9, max_time_s=5.0,
                        target_rel_noise=0.0, sensitivity=sensitivity, sensitivity_calls=32)
    suite = Suite(name="t", path="<t>", points=(), timing=timing, check=CheckSpec(oracle_max_tokens=16))
    ctx = MeasureContext(suite=suite, device="cpu", env=envmod.capture("cpu"), run_id="r",
                         timer=TimerPlan.resolve("wall", "cpu", timing), registry=REGISTRY, check=True)
    return run_point(p, ctx)


def test_a_per_sample_cost_is_recorded_as_a_sensitivity(monkeypatch):
    row = _row(monkeypatch, sensitivity=True, cold_ms=3.0)
    assert row.ok, row.reason
    assert set(row.calls_sensitivity_ms) == {"1", "32"}  # the wall timer's own count is 1
    assert row.calls_sensitivity_ms["1"] == row.median_ms
    assert row.calls_sensitivity_ms["32"] < 0.5 * row.median_ms
    assert row.calls_sensitive is True
    details = json.loads(row.extra_json)["calls_sensitivity"]
    assert details["spread"] > details["threshold"] and set(details["rel_noise"]) == {"1", "32"}
    assert "calls_sensitivity" in row.phases_s


def test_without_the_option_nothing_is_measured(monkeypatch):
    row = _row(monkeypatch, sensitivity=False, cold_ms=3.0)
    assert row.ok and row.calls_sensitivity_ms is None and row.calls_sensitive is None
    assert "calls_sensitivity" not in json.loads(row.extra_json)


def test_the_row_keeps_its_sensitivity_through_the_store_and_show_marks_it(monkeypatch, tmp_path):
    from qlabench.analyze.kit.speedups import CALLS, noise_summary, speedup_table
    from qlabench.store.files import read_results, write_rows

    sens = _row(monkeypatch, sensitivity=True, cold_ms=3.0)
    plain = _row(monkeypatch, sensitivity=False, cold_ms=0.0)
    import dataclasses

    plain = dataclasses.replace(plain, backend="naive-chunk")
    path = write_rows(tmp_path / "r.parquet", [sens, plain])
    df = read_results([path])
    got = df.set_index("backend")
    assert bool(got.loc["synthetic", "calls_sensitive"]) is True
    assert dict(got.loc["synthetic", "calls_sensitivity_ms"]).keys() == {"1", "32"}
    assert got.loc["naive-chunk", "calls_sensitive"] is None or pd.isna(got.loc["naive-chunk", "calls_sensitive"])
    t = speedup_table(df, "naive-chunk")
    assert t["synthetic noise"].iloc[0].endswith(CALLS) and CALLS not in t["naive-chunk noise"].iloc[0]
    assert f"{CALLS} 1 depend on the calls per sample" in noise_summary(df)
