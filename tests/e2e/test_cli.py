"""The command line end to end, in temporary folders: run, plot, dry run, listings, and bad input."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.store.files import read_results

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def invoke(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


def flat(text: str) -> str:
    """Output with rich's line wrapping undone, for substring checks."""
    return re.sub(r"\s+", " ", text)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory, request):
    """Run the tiny fixture suite once for the module; returns (results root, CLI result)."""
    suite = request.path.parents[1] / "data" / "tiny-cpu.toml"
    out = tmp_path_factory.mktemp("results")
    result = invoke("run", "sweep", "--suite", suite, "--out", out)
    return out, result


def test_run_writes_a_parquet_under_the_suite_folder(tiny_run):
    out, result = tiny_run
    assert result.exit_code == 0, result.output
    files = list((out / "tiny-cpu").glob("*.parquet"))
    assert len(files) == 1
    assert [p.name for p in (out / "tiny-cpu").iterdir()] == [files[0].name]  # no temp files left
    df = read_results([out])
    assert len(df) == 12
    assert set(df["status"]) == {"ok"}, df[["backend", "mode", "reason"]]
    assert set(df["backend"]) == {"naive-recurrent", "naive-chunk"}
    assert (df["suite"] == "tiny-cpu").all()
    text = flat(result.stdout)
    assert "12 rows (12 ok)" in text
    assert files[0].stem in re.sub(r"\s", "", result.stdout)  # the summary names the file


def test_plot_writes_pngs(tiny_run, tmp_path):
    out, _ = tiny_run
    plots = tmp_path / "plots"
    result = invoke("plot", out, "--out", plots)
    assert result.exit_code == 0, result.output
    pngs = sorted(plots.glob("*.png"))
    assert pngs, result.output
    for p in pngs:
        assert p.read_bytes()[:8] == PNG_MAGIC
    # One figure per (mode, dtype, gate); dense and varlen layouts share it.
    assert {p.name for p in pngs} == {"speedup_fwd_float32_gate-flashqla.png",
                                      "speedup_fwd_bwd_float32_gate-flashqla.png"}


def test_plot_with_an_unknown_baseline_fails_cleanly(tiny_run, tmp_path):
    out, _ = tiny_run
    result = invoke("plot", out, "--out", tmp_path / "plots", "--baseline", "nobody")
    assert result.exit_code == 2
    assert "nobody" in result.stderr and result.stderr.count("\n") == 1
    assert not (tmp_path / "plots").exists() or not any((tmp_path / "plots").iterdir())


def test_plot_of_an_empty_folder_fails_cleanly(tmp_path):
    result = invoke("plot", tmp_path, "--out", tmp_path / "plots")
    assert result.exit_code == 2
    assert "no result files" in result.stderr and result.stderr.count("\n") == 1


def test_dry_run_prints_the_count_and_writes_nothing(tmp_path, data_dir):
    out = tmp_path / "out"
    result = invoke("run", "sweep", "--suite", data_dir / "tiny-cpu.toml", "--out", out, "--dry-run")
    assert result.exit_code == 0, result.output
    assert "12 points in suite 'tiny-cpu'" in flat(result.stdout)
    assert not out.exists()


def test_backends_lists_the_registry():
    result = invoke("backends")
    assert result.exit_code == 0, result.output
    assert "naive-chunk" in result.stdout and "naive-recurrent" in result.stdout
    # the cp column: which backends run distributed points, in which CP modes
    assert re.search(r"┃ cp\s+┃", result.stdout) and "fla-cp" in result.stdout


@pytest.mark.parametrize("columns", [150, 80])
def test_models_lists_each_model_with_its_heads_at_every_tp_degree(columns, monkeypatch):
    from qlabench.core.models import CATALOGUE

    monkeypatch.setenv("COLUMNS", str(columns))
    result = invoke("models")
    assert result.exit_code == 0, result.output
    out = flat(result.stdout)
    for m in CATALOGUE:
        assert m.name in out
        for tp, (h_qk, h_v) in m.heads_by_tp().items():
            assert f"{h_qk}/{h_v}" in out
    if columns >= 120:  # the table: a column per TP degree, '-' where a degree does not divide the heads
        assert re.search(r"qwen3\.5-397b .* 16/64 .* 8/32 .* 4/16 .* 2/8 .* 1/4 .* - ", out)
    else:  # a line per model, never cut
        assert "qwen3.5-27b (27b): K=V=128; TP1 16/48; TP2 8/24; TP4 4/12; TP8 2/6; TP16 1/3" in out


def test_suites_lists_the_bundled_suites():
    result = invoke("suites")
    assert result.exit_code == 0, result.output
    assert "quick-cpu" in result.stdout


@pytest.mark.parametrize("fixture, key", [("bad-unknown-axis.toml", "sweep.seqlens"), (None, "suite")])
def test_bad_suite_exits_2_with_one_line_and_writes_nothing(tmp_path, data_dir, fixture, key):
    suite = data_dir / fixture if fixture else tmp_path / "absent.toml"
    out = tmp_path / "out"
    result = invoke("run", "sweep", "--suite", suite, "--out", out)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("error: ")
    assert str(suite) in result.stderr and key in result.stderr
    assert "Traceback" not in result.output
    assert not out.exists()


def test_bad_values_in_a_suite_exit_2(tmp_path):
    suite = tmp_path / "bad.toml"
    suite.write_text('[sweep]\nbackends = ["naive-chunk"]\nseqlen = [16]\nbatch = "2"\n'
                     'heads = [{ h_qk = 1, h_v = 1 }]\n')
    result = invoke("run", "sweep", "--suite", suite, "--out", tmp_path / "out")
    assert result.exit_code == 2
    assert "sweep.batch[0]" in result.stderr and "must be an integer" in result.stderr
    assert not (tmp_path / "out").exists()


def test_python_dash_m_reports_a_bad_suite_on_one_stderr_line(tmp_path, data_dir):
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "qlabench", "run", "sweep", "--suite", str(data_dir / "bad-unknown-axis.toml"),
         "--out", str(out)],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert "bad-unknown-axis.toml" in lines[0] and "sweep.seqlens" in lines[0]
    assert proc.stdout == ""
    assert not out.exists()


@pytest.mark.parametrize("args, words", [
    (["--timer", "bogus"], ["unknown timer 'bogus'", "auto, wall, events, graph"]),
    (["--device", "cpu", "--timer", "graph"], ["timer 'graph' needs a CUDA device", "'cpu'"]),
    (["--device", "cpu", "--timer", "events"], ["timer 'events' needs a CUDA device"]),
])
def test_a_bad_timer_is_one_message_before_any_point_runs(tmp_path, data_dir, args, words):
    out = tmp_path / "out"
    result = invoke("run", "sweep", "--suite", data_dir / "tiny-cpu.toml", "--out", out, *args)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    for w in words:
        assert w in result.stderr
    assert "Traceback" not in result.output
    assert result.stdout == ""  # not even an empty progress bar
    assert not out.exists()  # no rows, not even error rows


def test_cli_device_cpu_with_a_graph_timer_suite_is_refused_up_front(tmp_path, data_dir):
    text = (data_dir / "tiny-cpu.toml").read_text().replace('timer = "wall"', 'timer = "graph"')
    suite = tmp_path / "graph-suite.toml"
    suite.write_text(text.replace('device = "cpu"', 'device = "auto"'))
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", str(suite), "--out", str(tmp_path / "r"),
                                 "--device", "cpu"])
    assert r.exit_code == 2 and "timer 'graph' needs a CUDA device" in r.stderr
    assert r.stdout == "" and not (tmp_path / "r").exists()


def test_profile_of_an_unavailable_backend_exits_2_with_its_reason(tmp_path):
    r = CliRunner().invoke(app, ["profile", "--backend", "flash_qla", "--device", "cpu", "--out", str(tmp_path)])
    assert r.exit_code == 2
    assert "backend 'flash_qla' is unavailable: flash-qla is not installed" in " ".join(r.stderr.split())
    assert not any(tmp_path.iterdir())


def test_kernels_prints_a_top_table_and_writes_parquet_only_with_out(tmp_path):
    from pathlib import Path

    h200 = Path(__file__).resolve().parents[2] / "results" / "h200-ncu"
    r = CliRunner().invoke(app, ["kernels", str(h200), "--top", "3"], env={"COLUMNS": "160"})
    assert r.exit_code == 0, r.output
    assert "top 3 of" in r.stdout and "total us" in r.stdout and "wrote" not in r.stdout
    out = tmp_path / "k.parquet"
    r = CliRunner().invoke(app, ["kernels", str(h200), "-o", str(out)])
    assert r.exit_code == 0 and out.is_file() and "kernel launches" in r.stdout

