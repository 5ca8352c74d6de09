"""The timing regimes on a real GPU (measure/timing/regimes.py, probes/capture_alloc.py, probes/clock_trace.py,
qlabench_publish/selfbench/regimes.py): every regime gives per-call times of the same call, within reason of one
another, and the study writes its tables. Run with `pytest -m gpu` on a CUDA host; skipped elsewhere."""

from __future__ import annotations

import statistics

import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _cuda():
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")


def _matmul():
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    return lambda: a @ a  # ~0.1 ms on an H100-class GPU; allocates its output on every call


def test_every_regime_times_the_same_call():
    from qlabench.measure.probes.clock_trace import ClockTrace
    from qlabench.measure.timing import StopRule
    from qlabench.measure.timing import regimes as rg

    fn = _matmul()
    fn()
    rule = StopRule(min_samples=10, max_samples=50, max_time_s=0.3, target_rel_noise=0.01)
    n, call_ms = rg.calls_for(fn, 2.0)
    assert n >= 1 and call_ms > 0
    with ClockTrace(torch.cuda.current_device()) as trace:
        got = {
            "graph 1": rg.graph_timer(fn, rule, trace, 1, True),
            "graph 8": rg.graph_timer(fn, rule, trace, 8, True),
            "graph auto warm": rg.graph_timer(fn, rule, trace, None, False),
            "events": rg.events_timer(fn, rule, trace, True),
            "flush between": rg.flush_between(fn, rule, trace, 4),
            "lone": rg.isolated(fn, trace, 1, 5, 0.005),
            "burst": rg.isolated(fn, trace, n, 5, 0.005),
            "cold eager": rg.cold_eager(fn, trace, 5, 0.005),
        }
        trace.reset()
        got["sustained"] = rg.sustained(fn, trace, n, 50.0, call_ms)
        sustained_clocks = trace.summary()
    assert got["graph 8"].calls_per_sample == 8 and got["graph 8"].details["calls_forced"]
    assert got["graph auto warm"].l2 == "warm" and not got["graph auto warm"].details["calls_forced"]
    medians = {k: statistics.median(v.samples_ms) for k, v in got.items()}
    for k, ms in medians.items():  # one matmul, whatever the regime: within 3x of its graph time
        assert call_ms / 3 < ms < 3 * call_ms + 0.05, (k, ms, call_ms)
    assert got["sustained"].details["replays"] >= 8
    assert got["flush between"].details["flush_ms_median"] > 0
    from qlabench.measure.probes import clocks

    if clocks.nvml_status()[0]:
        assert sustained_clocks["readings"] > 0 and sustained_clocks["sm_clock_median_mhz"] > 0


def test_allocations_of_a_call_eagerly_and_in_capture():
    from qlabench.measure.probes.capture_alloc import capture_allocations, eager_allocations

    fn = _matmul()
    fn()
    eager = eager_allocations(fn)
    assert eager["eager_allocs"] >= 1 and eager["eager_alloc_bytes"] >= 4096 * 4096 * 2
    cap = capture_allocations(fn, 2)
    assert cap["capture_allocs"] >= 2 and cap["capture_output_addresses"] in (1, 2)
    assert cap["capture_pool_bytes"] >= 4096 * 4096 * 2  # the graph's pool holds at least one output


def test_the_study_writes_its_tables_and_page(tmp_path, data_dir):
    from qlabench.core.spec import load_suite
    from qlabench_publish.selfbench.regimes import RegimesRequest, run_regimes
    from qlabench_publish.selfbench.regimes_report import short_table

    req = RegimesRequest(suite=load_suite(str(data_dir / "regimes-gpu.toml")), out=tmp_path, calls=(1, 8),
                         rep_ms=20.0, sustained_ms=50.0, isolated_samples=5, idle_gap_ms=5.0,
                         cooldown_ms=10.0)
    res = run_regimes(req)
    assert {"graph auto", "graph n=1", "graph n=8", "graph n=8 warm", "graph n=8 flush between", "events",
            "triton cudagraph", "lone call", "cold eager", "burst ~2ms", "sustained ~50ms"} <= set(res.rows["regime"])
    dense = res.rows[res.rows["point"].str.endswith("1x2048")]
    failed = dense[dense["reason"].notna()]
    assert failed.empty, failed[["regime", "reason"]]
    assert (res.rows.dropna(subset=["median_ms"])["median_ms"] > 0).all()
    assert res.facts.iloc[0]["burst_calls"] >= 1 and "eager_allocs" in res.facts
    # the uncapturable point: eager regimes measured, graph-only ones refused with the reason
    uncaptured = res.rows[~res.rows.index.isin(dense.index)].set_index("regime")
    assert uncaptured.loc["cold eager", "median_ms"] > 0 and uncaptured.loc["events", "median_ms"] > 0
    assert uncaptured.loc["burst ~2ms", "reason"].startswith("RuntimeError: not capturable in a CUDA graph")
    for f in ("regimes.csv", "regime-facts.csv", "regimes.json", "regimes.md"):
        assert (tmp_path / f).is_file(), f
    assert "graph auto" in short_table(res.rows).columns
