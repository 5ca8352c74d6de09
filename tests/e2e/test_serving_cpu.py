"""The serving path end to end on CPU: `qlabench/suites/serving-cpu.toml` through run_sweep, then `report --serving`
over the rows it wrote: every step checked (its pool too), every row ok, the page names the winners."""

from __future__ import annotations

from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.core.spec import load_suite
from qlabench.run.options import InProcess, RunOptions
from qlabench.run.sweep import run_sweep


def test_serving_cpu_runs_and_reports(tmp_path):
    result = run_sweep(load_suite("serving-cpu"), tmp_path / "res", RunOptions(executor=InProcess()))
    rows = result.rows
    assert len(rows) == 8 and all(r.status == "ok" for r in rows), [r.reason for r in rows]
    assert all(r.err_pool == 0.0 and r.bytes_moved > 0 and r.hbm_frac is None for r in rows)
    out = tmp_path / "page"
    r = CliRunner().invoke(app, ["report", "--serving", str(tmp_path / "res"), "--out", str(out)])
    assert r.exit_code == 0, r.output
    page = (out / "serving.md").read_text()
    assert "8 serving rows (8 ok)" in page and "## Where the time goes" in page
