"""Harness self-benchmarks: the spread and cost arithmetic on constructed rows, timing overrides, and one
tiny precision run in fresh worker processes (2 runs of a 2-point suite, ~15 s on 2 cores)."""

from __future__ import annotations

import math
import statistics

import pandas as pd
import pytest
from typer.testing import CliRunner

from qlabench_publish import selfbench as sb
from qlabench_publish.cli import app
from qlabench.core.spec import load_suite, parse_suite


def _medians(rows: list[dict]) -> pd.DataFrame:
    base = {"profile": "suite", "timer_requested": "wall", "timer": "wall", "status": "ok", "run_wall_s": 10.0,
            "compile_s": None, "sampling_s": 1.0, "backend": "b", "mode": "fwd"}
    return pd.DataFrame([{**base, **r} for r in rows])


def test_spread_of_medians_range_and_cv_by_hand():
    m = [1.00, 1.01, 0.99, 1.00, 1.02]
    s = sb.spread_of_medians(m)
    assert s["runs_ok"] == 5
    assert s["median_of_medians_ms"] == pytest.approx(1.00)
    assert s["range_rel"] == pytest.approx((1.02 - 0.99) / 1.00)
    assert s["cv"] == pytest.approx(statistics.stdev(m) / statistics.mean(m))


def test_spread_of_one_median_is_not_a_number_and_nan_medians_are_ignored():
    s = sb.spread_of_medians([2.0, float("nan"), None])
    assert s["runs_ok"] == 1 and s["median_of_medians_ms"] == 2.0
    assert math.isnan(s["range_rel"]) and math.isnan(s["cv"])
    assert sb.verdict(s["range_rel"]) == "n/a"


@pytest.mark.parametrize("spread, want", [(0.004, "stretch"), (0.005, "stretch"), (0.0051, "goal"),
                                          (0.01, "goal"), (0.0101, "MISSED")])
def test_verdict_thresholds(spread, want):
    assert sb.verdict(spread) == want


def test_precision_table_uses_ok_rows_of_the_profile_per_timer_and_point():
    rows = [
        {"point": "p1", "run_index": 0, "median_ms": 2.00},
        {"point": "p1", "run_index": 1, "median_ms": 2.01},
        {"point": "p1", "run_index": 2, "median_ms": None, "status": "error"},  # not a time: left out
        {"point": "p1", "run_index": 0, "median_ms": 9.0, "profile": "flashqla"},  # other profile
        {"point": "p1", "run_index": 0, "median_ms": 4.0, "timer_requested": "events", "timer": "events"},
        {"point": "p1", "run_index": 1, "median_ms": 4.2, "timer_requested": "events", "timer": "events"},
    ]
    t = sb.precision_table(_medians(rows)).set_index("timer")
    wall, ev = t.loc["wall"], t.loc["events"]
    assert wall["runs"] == 3 and wall["runs_ok"] == 2
    assert wall["range_rel"] == pytest.approx(0.01 / 2.005)
    assert wall["verdict"] == "stretch"
    assert ev["range_rel"] == pytest.approx(0.2 / 4.1) and ev["verdict"] == "MISSED"


def test_precision_table_says_which_timer_actually_ran():
    # A graph capture that fails falls back to events: the row's timer says so, and so must the table.
    rows = [{"point": "p", "run_index": i, "median_ms": 1.0, "timer_requested": "graph", "timer": t}
            for i, t in enumerate(["graph", "events"])]
    assert sb.precision_table(_medians(rows))["timer_used"].iloc[0] == "events,graph"


def test_run_cost_excludes_compile_and_averages_per_point():
    rows = [
        {"point": "a", "run_index": 0, "compile_s": 3.0, "sampling_s": 0.5},
        {"point": "b", "run_index": 0, "compile_s": None, "sampling_s": 1.5},
        {"point": "a", "run_index": 1, "compile_s": 1.0, "sampling_s": 0.5, "run_wall_s": 5.0},
        {"point": "b", "run_index": 1, "compile_s": None, "sampling_s": 0.5, "run_wall_s": 5.0},
    ]
    runs = sb.run_cost_table(_medians(rows)).set_index("run")
    assert runs.loc[0, "s_per_point"] == pytest.approx((10.0 - 3.0) / 2)
    assert runs.loc[0, "sampling_s_per_point"] == pytest.approx(1.0)
    assert runs.loc[1, "s_per_point"] == pytest.approx((5.0 - 1.0) / 2)
    summary = sb.cost_table(_medians(rows)).iloc[0]
    assert summary["runs"] == 2
    assert summary["s_per_point"] == pytest.approx((3.5 + 2.0) / 2)
    assert summary["sampling_s_per_point"] == pytest.approx((1.0 + 0.5) / 2)


def test_point_cost_table_puts_profiles_side_by_side():
    rows = [{"point": "a", "run_index": i, "sampling_s": s} for i, s in enumerate([0.2, 0.4, 0.3])]
    rows += [{"point": "a", "run_index": 0, "sampling_s": 1.1, "profile": "flashqla"}]
    t = sb.point_cost_table(_medians(rows)).set_index("point")
    assert t.loc["a", "suite wall"] == pytest.approx(0.3)
    assert t.loc["a", "flashqla wall"] == pytest.approx(1.1)


def test_timing_overrides_are_typed_and_checked():
    got = sb.parse_timing_overrides(["min_time_s=0.1", "max_samples=50", "l2_flush=false", "timer=graph"])
    assert got == {"min_time_s": 0.1, "max_samples": 50, "l2_flush": False, "timer": "graph"}
    with pytest.raises(sb.SelfbenchError, match="KEY=VALUE"):
        sb.parse_timing_overrides(["nonsense=1"])
    with pytest.raises(sb.SelfbenchError, match="not a int"):
        sb.parse_timing_overrides(["max_samples=many"])
    with pytest.raises(sb.SelfbenchError, match="not a bool"):
        sb.parse_timing_overrides(["l2_flush=maybe"])


def test_flashqla_profile_fixes_the_sampling_time_and_overrides_win():
    s = parse_suite({"sweep": {"backends": "naive-chunk", "seqlen": 8, "heads": [{"h_qk": 1, "h_v": 1}]},
                     "timing": {"warmup": 2, "max_time_s": 5.0}})
    f = sb.with_timing(s, "flashqla")
    assert f.timing.min_time_s == f.timing.max_time_s == pytest.approx(1.0)  # 10 replays x 100 ms
    assert f.timing.warmup == 2 and s.timing.max_time_s == 5.0  # the rest kept; the original untouched
    assert sb.with_timing(s, "flashqla", {"max_time_s": 0.3}).timing.max_time_s == 0.3
    assert sb.with_timing(s) is s
    with pytest.raises(sb.SelfbenchError, match="unknown timing profile"):
        sb.with_timing(s, "nope")


def test_markdown_table_formats_and_escapes():
    df = pd.DataFrame([{"a": "x|y", "b": 0.123456, "c": float("nan"), "d": True}])
    md = sb.markdown_table(df, {"b": sb.pct})
    assert md.splitlines()[0] == "| a | b | c | d |"
    assert md.splitlines()[2] == "| x\\|y | 12.35% | - | yes |"


def test_agreement_is_skipped_with_a_reason_on_cpu():
    assert "needs CUDA" in sb.agreement_unavailable("cpu")
    with pytest.raises(sb.SelfbenchError, match="needs CUDA"):
        sb.run_agreement(load_suite("cpu-precision"), "cpu")


def test_the_precision_suites_hold_the_backends_heads_and_lengths_of_the_precision_study():
    h200 = load_suite("h200-precision")
    assert {p.backend for p in h200.points} == {"flash_qla", "fla"}
    assert {(p.h_qk, p.h_v) for p in h200.points} == {(2, 8), (16, 64)}
    assert {p.seqlens for p in h200.points} == {(8192,), (32768,)}
    assert {p.mode for p in h200.points} == {"fwd", "fwd_bwd"}
    cpu = load_suite("cpu-precision")
    assert {p.backend for p in cpu.points} == {"naive-chunk"} and cpu.device == "cpu"


TINY = """
name = "tiny-precision"
device = "cpu"
[sweep]
backends = ["naive-chunk"]
modes = ["fwd", "fwd_bwd"]
seqlen = [32]
heads = [{ h_qk = 1, h_v = 1 }]
K = 16
V = 16
dtype = "float32"
[timing]
timer = "wall"
warmup = 1
min_samples = 3
max_samples = 10
max_time_s = 0.05
[check]
oracle_max_tokens = 32
"""


def test_tiny_precision_run_in_fresh_processes_and_resume(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    suite = load_suite(str(path))
    seen = []
    infos = sb.run_repeats(suite, tmp_path / "o", timers=["wall"], runs=2, device="cpu",
                           on_run=lambda i, reused: seen.append(reused))
    assert seen == [False, False]
    assert [i.index for i in infos] == [0, 1]
    assert all(i.workers_started >= 1 and i.points == 2 for i in infos)  # each run started its own worker
    assert len({i.run_id for i in infos}) == 2

    medians = sb.medians_frame(tmp_path / "o", sb.all_completed_runs(tmp_path / "o"))
    assert len(medians) == 4 and set(medians["status"]) == {"ok"}
    assert (medians["median_ms"] > 0).all() and (medians["sampling_s"] > 0).all()
    table = sb.precision_table(medians)
    assert len(table) == 2 and (table["runs_ok"] == 2).all()
    assert (table["range_rel"] >= 0).all()

    # Completed runs are reused, not redone; a run left without run.json is redone.
    (sb.run_dir(tmp_path / "o", "suite", "wall", 1) / sb.RUN_FILE).unlink()
    seen.clear()
    again = sb.run_repeats(suite, tmp_path / "o", timers=["wall"], runs=2, device="cpu",
                           on_run=lambda i, reused: seen.append(reused))
    assert seen == [True, False]
    assert again[0].run_id == infos[0].run_id and again[1].run_id != infos[1].run_id


def test_cli_agreement_on_cpu_writes_a_report_saying_why_not(tmp_path):
    r = CliRunner().invoke(app, ["selfbench", "agreement", "--suite", "cpu-precision", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    text = (tmp_path / "selfbench-agreement.md").read_text()
    assert "## Agreement" in text and "Not run: agreement needs CUDA" in text
    assert "- command: `python -m qlabench_publish" in text


def test_cli_rejects_an_unknown_what_and_a_bad_override(tmp_path):
    r = CliRunner().invoke(app, ["selfbench", "speed", "--out", str(tmp_path)])
    assert r.exit_code == 2 and "unknown selfbench" in r.output
    r = CliRunner().invoke(app, ["selfbench", "cost", "--timing", "warmup=lots", "--out", str(tmp_path)])
    assert r.exit_code == 2 and "not a int" in r.output


@pytest.mark.gpu
def test_agreement_on_cuda_measures_both_timers():
    why = sb.agreement_unavailable("cuda")
    if why:
        pytest.skip(why)
    s = parse_suite({"sweep": {"backends": "naive-chunk", "seqlen": 256, "heads": [{"h_qk": 1, "h_v": 2}],
                               "K": 32, "V": 32, "dtype": "float32"},
                     "timing": {"min_samples": 5, "max_time_s": 0.5}})
    t = sb.run_agreement(s, "cuda", rep_ms=20)
    r = t.iloc[0]
    assert r["graph_ms"] > 0 and r["triton_ms"] > 0 and r["graph_s"] > 0 and r["triton_s"] > 0
    assert r["ratio"] == pytest.approx(r["graph_ms"] / r["triton_ms"])
    assert r["agrees"] == (abs(r["ratio"] - 1) <= sb.AGREEMENT_TOL)


def test_report_only_rebuilds_from_fetched_runs_without_measuring_and_names_where_they_ran(tmp_path):
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    out = tmp_path / "o"
    sb.run_repeats(load_suite(str(path)), out, timers=["wall"], runs=2, device="cpu")
    # Pretend the runs came from another host: rewrite the host of their rows.
    for f in (out / "runs").rglob("*.parquet"):
        t = pq.read_table(f)  # keeps the schema metadata that marks a qlabench results file
        i = t.schema.get_field_index("host")
        t = t.set_column(i, t.schema.field(i), pa.array(["gpu-host-7"] * t.num_rows, type=t.schema.field(i).type))
        pq.write_table(t, f)
    before = sorted(p.name for p in (out / "runs").iterdir())
    r = CliRunner().invoke(app, ["selfbench", "precision", "--suite", str(path), "--out", str(out), "--runs", "3",
                                 "--timer", "wall", "--report-only"])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in (out / "runs").iterdir()) == before  # no run was made
    assert "1 of the runs asked for are not under" in r.output.replace("\n", " ")
    text = (out / "selfbench-precision.md").read_text()
    assert "- host: gpu-host-7" in text
    assert "load average" not in text
    table = pd.read_csv(out / "precision.csv")
    assert (table["runs_ok"] == 2).all()

    r = CliRunner().invoke(app, ["selfbench", "agreement", "--suite", str(path), "--out", str(out), "--report-only"])
    assert r.exit_code == 0, r.output
    assert "Not run: no " in (out / "selfbench-agreement.md").read_text()


def test_report_only_without_runs_says_so(tmp_path):
    import pandas as pd

    r = CliRunner().invoke(app, ["selfbench", "precision", "--suite", "cpu-precision", "--out", str(tmp_path),
                                 "--report-only"])
    assert r.exit_code == 2 and "no completed runs under" in r.output.replace("\n", " ")
    assert not (tmp_path / "selfbench-precision.md").exists()
    typo = tmp_path / "typo"
    r = CliRunner().invoke(app, ["selfbench", "cost", "--suite", "cpu-precision", "--out", str(typo), "--report-only"])
    assert r.exit_code == 2 and not typo.exists()
    # `all` with only a fetched agreement.csv: the agreement report, not an error
    pd.DataFrame([{"point": "p", "graph_ms": 1.0, "triton_ms": 1.0, "ratio": 1.0, "agrees": True}]).to_csv(
        tmp_path / "agreement.csv", index=False)
    r = CliRunner().invoke(app, ["selfbench", "all", "--suite", "cpu-precision", "--out", str(tmp_path), "--report-only"])
    assert r.exit_code == 0, r.output
    assert "## Agreement" in (tmp_path / "selfbench.md").read_text()


def test_a_run_that_measures_nothing_stops_the_benchmark_with_the_reason(tmp_path):
    # flash_qla on a CPU suite: every point is skipped; five more such runs would say nothing.
    path = tmp_path / "none.toml"
    path.write_text(TINY.replace('backends = ["naive-chunk"]', 'backends = ["flash_qla"]'))
    with pytest.raises(sb.SelfbenchError, match=r"measured no point .* flash_qla skipped"):
        sb.run_repeats(load_suite(str(path)), tmp_path / "o", timers=["wall"], runs=3, device="cpu")
    assert sb.all_completed_runs(tmp_path / "o") == []  # not recorded as a completed run


def test_rows_record_their_phases_and_cost_breaks_them_down(tmp_path):
    import json

    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    out = tmp_path / "o"
    sb.run_repeats(load_suite(str(path)), out, timers=["wall"], runs=1, device="cpu")
    medians = sb.medians_frame(out, sb.all_completed_runs(out))
    for ph in map(json.loads, medians["phases_s"]):
        assert {"check", "inputs", "first_call"} <= set(ph) and all(v >= 0 for v in ph.values())
    medians.to_parquet(tmp_path / "medians.parquet")  # the CLI writes this frame
    t = sb.phase_cost_table(medians)
    assert len(t) == 1 and t["sampling"].iloc[0] > 0
    assert t["in points"].iloc[0] <= t["run wall / point"].iloc[0]  # the run's wall time covers its points
    assert "Mean seconds per point in each phase" in sb.render_cost(medians)
    # A row written before phases were recorded reads as no phases.
    assert sb._phases(None) == {} and sb._phases([("check", 0.5)]) == {"check": 0.5}
