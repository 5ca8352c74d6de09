"""The timing-regimes study (qlabench_publish/selfbench/regimes.py, regimes_report.py): its rows, verdicts and pages on
CPU from recorded rows; the measuring itself needs CUDA (tests/gpu/test_regimes_gpu.py)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from qlabench.core.spec import load_suite
from qlabench_publish.selfbench import SelfbenchError
from qlabench_publish.selfbench.regimes import (FACTS_FILE, ROWS_FILE, RegimesRequest, measure_regimes,
                                                  point_sensitivity, regime_row, run_regimes)
from qlabench_publish.selfbench.regimes_report import render_regimes, short_table

CLOCKS = {"readings": 12, "sm_clock_median_mhz": 1980, "sm_clock_min_mhz": 1755, "sm_clock_max_mhz": 1980,
          "mem_clock_median_mhz": 3201, "power_max_w": 650.5, "clock_reasons": ["sw_power_cap"]}


def _rows(point="flashinfer fwd h8/32 1x32768", scale=1.0):
    """A point whose per-call time falls with the calls per sample, as the issue's FlashInfer CP figures."""
    def at(ms):
        return [ms * scale * f for f in (0.998, 0.999, 1.001, 1.002)]

    rows = [regime_row(point, "flashinfer", "graph auto", at(0.716), 2, "flushed", {"timer": "graph"}, CLOCKS)]
    rows += [regime_row(point, "flashinfer", f"graph n={n}", at(ms), n, "flushed", {"timer": "graph"})
             for n, ms in ((1, 0.700), (2, 0.716), (8, 0.760), (64, 0.785))]
    rows.append(regime_row(point, "flashinfer", "graph n=64 warm", at(0.780), 64, "warm"))
    rows.append(regime_row(point, "flashinfer", "triton cudagraph", at(0.790), None, "warm", {"rep_ms": 200}))
    rows.append(regime_row(point, "flashinfer", "fi bench_gdn_prefill", at(0.80), None, "flushed",
                           {"path": "cuda events (eager)", "l2": "flushed", "reports": "mean",
                            "args": {"use_cuda_graph": False}}, reported_ms=0.81))
    rows.append(regime_row(point, "flashinfer", "burst ~2ms", at(0.72), 3, "flushed", {}, CLOCKS))
    rows.append(regime_row(point, "flashinfer", "sustained ~200ms", at(0.79), 3, "warm", {}, CLOCKS))
    rows.append(regime_row(point, "flashinfer", "lone call", (), None, "-", reason="RuntimeError: boom"))
    return rows


def _facts(point="flashinfer fwd h8/32 1x32768"):
    return {"point": point, "backend": "flashinfer", "call_path": "cp", "one_call_graph_ms": 0.75,
            "burst_calls": 3, "eager_allocs": 6, "eager_alloc_bytes": 300 * 2**20, "capture_allocs": 12,
            "capture_pool_bytes": 640 * 2**20, "capture_output_addresses": 1}


def test_a_regime_row_keeps_the_statistics_the_reported_figure_and_the_clocks():
    r = regime_row("p", "b", "fi bench_gdn_prefill", [1.0, 2.0, 3.0, 4.0], None, "flushed", {"x": 1}, CLOCKS,
                   reported_ms=2.5)
    assert r["median_ms"] == 2.5 and r["mean_ms"] == 2.5 and r["min_ms"] == 1.0 and r["reported_ms"] == 2.5
    assert r["rel_noise"] == pytest.approx(1.5 / 2.5)
    assert r["sm_clock_min_mhz"] == 1755 and r["clock_reasons"] == "sw_power_cap" and r["clock_readings"] == 12
    assert json.loads(r["details"]) == {"x": 1}
    failed = regime_row("p", "b", "lone call", (), None, "-", reason="boom")
    assert failed["n_samples"] == 0 and pd.isna(failed["median_ms"]) and failed["reason"] == "boom"


def test_a_point_whose_time_moves_with_the_calls_per_sample_is_called_sensitive():
    df = pd.DataFrame(_rows())
    v = point_sensitivity(df)
    assert v["calls_sensitive"] is True and v["calls_spread"] == pytest.approx(0.785 / 0.700 - 1)
    flat = df.assign(median_ms=df["median_ms"].where(~df["regime"].str.match(r"^graph n=\d+$"), 0.7))
    assert point_sensitivity(flat)["calls_sensitive"] is False
    assert point_sensitivity(df[df["regime"] == "graph auto"])["calls_sensitive"] is None
    # an uncapturable call: every forced count fell back to eager events, one call per sample
    fell_back = df.assign(calls_per_sample=1, details=json.dumps({"timer": "events"}))
    assert point_sensitivity(fell_back)["calls_sensitive"] is None


def test_the_short_table_has_the_sweeps_figure_against_triton_and_the_regimes():
    t = short_table(pd.DataFrame(_rows() + _rows("flash_qla fwd h8/32 1x32768", scale=1.6)))
    assert list(t.columns) == ["point", "graph auto", "graph n=1", "graph n=64", "triton cudagraph",
                               "fi bench_gdn_prefill", "burst", "sustained"]
    first = t.iloc[0]
    assert first["graph auto"] == f"0.7160 [2] ({0.716 / 0.79:.3f})"
    assert first["triton cudagraph"] == "0.7900" and first["burst"].startswith("0.7200 (")
    assert t.iloc[1]["graph n=64"] == f"{0.785 * 1.6:.4f} ({0.785 / 0.79:.3f})"


def test_the_page_has_every_table_the_fi_path_and_the_failed_regimes():
    rows, facts = pd.DataFrame(_rows()), pd.DataFrame([_facts()])
    facts["calls_sensitive"], facts["calls_spread"] = True, 0.121
    page = render_regimes(rows, facts, {"host": "h200-host", "device": "NVIDIA H200", "suite": "timing-regimes",
                                        "command": "qlabench selfbench regimes", "settings": {"rep_ms": 200}})
    assert page.startswith("# Timing regimes") and "NVIDIA H200" and "`qlabench selfbench regimes`" in page
    assert "| flashinfer fwd h8/32 1x32768 | 0.7160 [2] (0.906) |" in page
    assert "1980/1755, 650 W, power cap" in page  # median/min SM clock, max power and slowdown reasons
    assert "| flashinfer fwd h8/32 1x32768 | cp | 0.75 | 3 | yes | 12.1% | 6 | 300.0 | 12 | 640.0 | 1 |" in page
    assert "`fi bench_gdn_prefill`: cuda events (eager), L2 flushed" in page and "reports the mean" in page
    assert "## Regimes that failed" in page and "RuntimeError: boom" in page
    assert "with no idle between them" in page  # a run without a cool-down says so
    assert "each after 500 ms idle" in render_regimes(rows, facts, {"settings": {"cooldown_ms": 500.0}})


def test_regimes_need_cuda(tmp_path):
    req = RegimesRequest(suite=load_suite("timing-regimes"), out=tmp_path)
    with pytest.raises(SelfbenchError, match="need CUDA"):
        measure_regimes(req, "cpu")


def test_a_page_is_rebuilt_from_the_tables_a_gpu_host_wrote(tmp_path):
    pd.DataFrame(_rows()).to_csv(tmp_path / ROWS_FILE, index=False)
    pd.DataFrame([_facts()]).to_csv(tmp_path / FACTS_FILE, index=False)
    (tmp_path / "regimes.json").write_text(json.dumps({"host": "gpu-host", "date": "2026-12-01 17:00 UTC"}))
    res = run_regimes(RegimesRequest(suite=load_suite("timing-regimes"), out=tmp_path, report_only=True))
    assert res.path.read_text().count("gpu-host, ") == 1 and "2026-12-01 17:00 UTC" in res.path.read_text()
    with pytest.raises(SelfbenchError, match="no .*regimes.csv"):
        run_regimes(RegimesRequest(suite=load_suite("timing-regimes"), out=tmp_path / "none", report_only=True))


def test_the_suite_holds_the_six_points_of_the_issue():
    got = sorted((p.backend, p.h_qk, p.h_v, p.seqlens, p.layout, p.mode, p.dtype, p.gate)
                 for p in load_suite("timing-regimes").points)
    fwd = ("varlen", "fwd", "bfloat16", "flashqla")
    assert got == sorted([("flashinfer", 8, 32, (32768,), *fwd), ("flashinfer", 2, 8, (32768,), *fwd),
                          ("flashinfer", 8, 32, (8192,), *fwd), ("flashinfer-nocp", 8, 32, (32768,), *fwd),
                          ("flash_qla", 8, 32, (32768,), *fwd), ("flash_qla", 2, 8, (32768,), *fwd)])
    assert load_suite("timing-regimes").timing.sensitivity


def test_the_command_rebuilds_the_page_and_prints_the_short_table_last(tmp_path):
    from typer.testing import CliRunner

    from qlabench_publish.cli import app

    pd.DataFrame(_rows()).to_csv(tmp_path / ROWS_FILE, index=False)
    pd.DataFrame([_facts()]).to_csv(tmp_path / FACTS_FILE, index=False)
    r = CliRunner().invoke(app, ["selfbench", "regimes", "--suite", "timing-regimes", "--out", str(tmp_path),
                                 "--report-only"])
    assert r.exit_code == 0, r.output
    last = r.output.strip().splitlines()[-1]
    assert last.startswith("| flashinfer fwd h8/32 1x32768 | 0.7160 [2] (0.906) |")
    assert (tmp_path / "regimes.md").is_file() and "regimes.md" in r.output
