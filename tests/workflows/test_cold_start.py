"""`qlabench cold-start` (workflows/cold_start.py, analyze/cold_start.py) on CPU: every point runs alone in a
fresh worker process twice, first on an empty kernel cache folder of its own and then on what the first run
left there; the records and the table say which figure is which, and the caller's cache settings come back."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from qlabench.analyze.cold_start.table import cold_start_frame, cold_start_markdown, read_records
from qlabench.cli import app
from qlabench.core.errors import QlabenchError, SweepInterrupted
from qlabench.core.spec import parse_suite
from qlabench.measure.caches import ENV_VAR
from qlabench.workflows import cold_start as workflow
from qlabench.workflows.cold_start import rebuild_cold_start, run_cold_start

SUITE = {"name": "cold-tiny", "device": "cpu",
         "sweep": {"backends": ["naive-recurrent", "naive-chunk"], "modes": ["fwd"], "seqlen": [64],
                   "heads": [{"h_qk": 1, "h_v": 1}], "K": 16, "V": 16, "dtype": "float32"},
         "timing": {"timer": "wall", "warmup": 0, "min_samples": 2, "max_samples": 2}}


def test_each_point_runs_cold_then_warm_in_its_own_cache_folder(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "mine"))
    records = run_cold_start(parse_suite(SUITE, "cold-tiny.toml"), tmp_path / "out")
    assert [(r["backend"], r["phase"]) for r in records] == [
        ("naive-recurrent", "cold"), ("naive-recurrent", "warm"), ("naive-chunk", "cold"), ("naive-chunk", "warm")]
    assert all(r["status"] == "ok" and r["first_calls_s"] > 0 for r in records)
    assert os.environ[ENV_VAR] == str(tmp_path / "mine")  # the caller's cache folder is given back
    suite = parse_suite(SUITE, "cold-tiny.toml")
    assert (workflow.cache_folder(tmp_path / "out", suite.points[0]) / "triton").is_dir()
    assert {len(list((tmp_path / "out" / ph).rglob("*.parquet"))) for ph in ("cold", "warm")} == {2}
    assert read_records(tmp_path / "out") == json.loads((tmp_path / "out" / "cold-start.json").read_text())


def test_the_table_shows_a_failed_phase_by_its_status_never_a_time():
    recs = [{"backend": "a", "point": "p", "phase": "cold", "first_calls_s": 40.0, "status": "ok", "cache_mib": 3.0,
             "device": "NVIDIA H200"},
            {"backend": "a", "point": "p", "phase": "warm", "first_calls_s": 2.0, "status": "ok", "cache_mib": 3.0,
             "device": "NVIDIA H200"},
            {"backend": "b", "point": "p", "phase": "cold", "first_calls_s": None, "status": "error",
             "cache_mib": 0.0, "device": "NVIDIA H200"}]
    f = cold_start_frame(recs).set_index("backend")
    assert f.loc["a", "cold / warm"] == 20.0 and f.loc["b", "cold s"] == "error" and f.loc["b", "warm s"] == "not run"
    md = cold_start_markdown(recs)
    assert "| a | p | 40.00 | 2.00 | 20.0 | 3.0 |" in md and "| b | p | error | not run |" in md


def test_the_command_writes_the_records_and_the_table(tmp_path):
    suite = tmp_path / "cold-tiny.toml"
    suite.write_text('name = "cold-tiny"\ndevice = "cpu"\n[sweep]\nbackends = ["naive-recurrent"]\nmodes = ["fwd"]\n'
                     'seqlen = [64]\nheads = [{ h_qk = 1, h_v = 1 }]\nK = 16\nV = 16\ndtype = "float32"\n'
                     '[timing]\ntimer = "wall"\nwarmup = 0\nmin_samples = 2\nmax_samples = 2\n')
    r = CliRunner().invoke(app, ["cold-start", "--suite", str(suite), "--out", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    assert "cold s" in (tmp_path / "out" / "cold-start.md").read_text() and "naive-recurrent" in r.output


def test_a_run_stopped_at_its_second_point_keeps_the_first_points_records(tmp_path, monkeypatch):
    calls = []
    real = workflow.run_sweep

    def stopped_at_the_second_point(suite, out, options):
        calls.append(suite.points[0].backend)
        if len(calls) > 2:  # the first point's cold and warm ran; the next sweep is stopped, as a time budget does
            raise SweepInterrupted("interrupted")
        return real(suite, out, options)

    monkeypatch.setattr(workflow, "run_sweep", stopped_at_the_second_point)
    with pytest.raises(SweepInterrupted):
        run_cold_start(parse_suite(SUITE, "cold-tiny.toml"), tmp_path / "out")
    kept = read_records(tmp_path / "out")
    assert [(r["backend"], r["phase"], r["status"]) for r in kept] == [
        ("naive-recurrent", "cold", "ok"), ("naive-recurrent", "warm", "ok")]
    assert "| naive-recurrent |" in (tmp_path / "out" / "cold-start.md").read_text()


def test_report_only_rebuilds_the_records_from_the_rows_under_cold_and_warm(tmp_path):
    suite = parse_suite(SUITE, "cold-tiny.toml")
    out = tmp_path / "out"
    measured = run_cold_start(suite, out)
    (out / "cold-start.json").unlink()
    (out / "cold-start.md").unlink()
    shutil.rmtree(workflow.cache_folder(out, suite.points[1]))  # a cache folder not kept (never committed)
    r = CliRunner().invoke(app, ["cold-start", "--suite", str(_suite_file(tmp_path)), "--out", str(out),
                                 "--report-only"])
    assert r.exit_code == 0, r.output
    rebuilt = read_records(out)
    same = ("backend", "mode", "point", "phase", "first_calls_s", "status", "device", "run_id")
    assert [{k: x[k] for k in same} for x in rebuilt] == [{k: x[k] for k in same} for x in measured]
    # the folder's size now is what the warm phase left; the cold phase's own size is not known any more
    assert [x["cache_mib"] for x in rebuilt] == [None, measured[1]["cache_mib"], None, None]
    md = (out / "cold-start.md").read_text()
    assert md.count("not recorded") == 1 and "naive-chunk" in md


def test_report_only_refuses_rows_of_points_the_suite_does_not_hold(tmp_path):
    suite = parse_suite(SUITE, "cold-tiny.toml")
    out = tmp_path / "out"
    run_cold_start(dataclasses.replace(suite, points=suite.points[:1]), out)
    (out / "cold-start.json").unlink()
    with pytest.raises(QlabenchError, match="not a point of suite"):
        rebuild_cold_start(dataclasses.replace(suite, points=suite.points[1:]), out)
    assert not (out / "cold-start.json").exists()
    with pytest.raises(QlabenchError, match="no cold-start rows"):
        rebuild_cold_start(suite, tmp_path / "empty")


def _suite_file(tmp_path):
    f = tmp_path / "cold-tiny.toml"
    f.write_text('name = "cold-tiny"\ndevice = "cpu"\n[sweep]\nbackends = ["naive-recurrent", "naive-chunk"]\n'
                 'modes = ["fwd"]\nseqlen = [64]\nheads = [{ h_qk = 1, h_v = 1 }]\nK = 16\nV = 16\n'
                 'dtype = "float32"\n[timing]\ntimer = "wall"\nwarmup = 0\nmin_samples = 2\nmax_samples = 2\n')
    return f


def test_report_only_gives_each_cache_size_to_its_own_point_whatever_the_order(tmp_path, monkeypatch):
    real = workflow.run_sweep

    def chunk_leaves_3_mib(suite, out, options):  # in the cache folder it was given, wherever that is
        res = real(suite, out, options)
        if suite.points[0].backend == "naive-chunk":
            (Path(os.environ[ENV_VAR]) / "padding").write_bytes(b"\0" * (3 << 20))
        return res

    monkeypatch.setattr(workflow, "run_sweep", chunk_leaves_3_mib)
    out = tmp_path / "out"
    measured = run_cold_start(parse_suite(SUITE, "cold-tiny.toml"), out)
    reordered = _suite_file(tmp_path)  # the same suite, its backends listed the other way round
    reordered.write_text(reordered.read_text().replace('["naive-recurrent", "naive-chunk"]',
                                                       '["naive-chunk", "naive-recurrent"]'))
    r = CliRunner().invoke(app, ["cold-start", "--suite", str(reordered), "--out", str(out), "--report-only"])
    assert r.exit_code == 0, r.output
    warm = {x["backend"]: x["cache_mib"] for x in read_records(out) if x["phase"] == "warm"}
    assert warm["naive-chunk"] >= 3 > warm["naive-recurrent"]
    assert warm["naive-recurrent"] == next(x["cache_mib"] for x in measured
                                           if x["backend"] == "naive-recurrent" and x["phase"] == "warm")


def test_a_cache_folder_named_by_a_place_in_the_suite_is_not_given_to_any_point(tmp_path):
    suite = parse_suite(SUITE, "cold-tiny.toml")
    out = tmp_path / "out"
    run_cold_start(suite, out)
    for i, p in enumerate(suite.points):  # as runs before the folders were named for their points left them
        workflow.cache_folder(out, p).rename(out / "caches" / f"point-{i:03d}")
    assert [x["cache_mib"] for x in rebuild_cold_start(suite, out)] == [None] * 4
