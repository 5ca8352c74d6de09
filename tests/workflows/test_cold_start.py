"""`qlabench cold-start` (workflows/cold_start.py, analyze/cold_start.py) on CPU: every point runs alone in a
fresh worker process twice, first on an empty kernel cache folder of its own and then on what the first run
left there; the records and the table say which figure is which, and the caller's cache settings come back."""

from __future__ import annotations

import json
import os

from typer.testing import CliRunner

from qlabench.analyze.cold_start import cold_start_frame, cold_start_markdown, read_records
from qlabench.cli import app
from qlabench.core.spec import parse_suite
from qlabench.measure.caches import ENV_VAR
from qlabench.workflows.cold_start import run_cold_start

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
    assert (tmp_path / "out" / "caches" / "point-000" / "triton").is_dir()
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
