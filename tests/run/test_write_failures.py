"""Write failures and output paths: a failed write stops the sweep (exit 1) and loses nothing silently; suite
names are safe slugs and no output lands outside the folder it was given."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from qlabench.run.options import InProcess, RunOptions
from qlabench.cli import app
from qlabench.core.errors import ResultsWriteError, RunIncompleteError, SpecError, StoreError
from qlabench.core.spec import parse_suite
from qlabench.run import sweep as sweepmod
from qlabench.run.sweep import RunResult, run_sweep
from qlabench.store import files
from qlabench.store.baselines import baseline_path, save_baseline
from qlabench.store.files import read_results

TINY = Path(__file__).resolve().parents[1] / "data" / "tiny-cpu.toml"
SUITE = {
    "name": "wf", "device": "cpu",
    "sweep": {"backends": ["naive-recurrent"], "modes": ["fwd"], "seqlen": [8, 12, 16, 20],
              "heads": [{"h_qk": 1, "h_v": 1}], "K": 8, "V": 8, "dtype": "float32"},
    "timing": {"timer": "wall", "warmup": 0, "min_samples": 2, "max_samples": 2, "max_time_s": 0.05},
    "check": {"oracle_max_tokens": 32},
}


def _sweep(out, *extra, limit_fsize=None):
    def pre():
        if limit_fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_fsize, limit_fsize))
    return subprocess.run([sys.executable, "-m", "qlabench", "run", "sweep", "--suite", str(TINY), "--out", str(out),
                           *extra], capture_output=True, text=True, preexec_fn=pre, timeout=300)


def test_out_pointing_at_a_file_is_refused_before_any_point(tmp_path):
    f = tmp_path / "a-file"
    f.write_text("x")
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", str(TINY), "--out", str(f), "--no-isolate"])
    assert r.exit_code == 2, r.output
    assert f"--out {f}: is a file" in r.output
    assert "ok " not in r.output  # no point was measured


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_out_is_refused_before_any_point(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", str(TINY), "--out", str(ro), "--no-isolate"])
    assert r.exit_code == 2 and "cannot write results" in r.output


def test_file_size_limit_mid_write_exits_1_and_says_what_was_kept(tmp_path):
    # RLIMIT_FSIZE (as `prlimit --fsize`): every part file is too large, as on a disk that has filled up
    r = _sweep(tmp_path / "o", limit_fsize=20000)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "cannot write results" in r.stderr and "the sweep stopped" in r.stderr and "--resume" in r.stderr
    assert "time budget" not in r.stdout + r.stderr


def test_a_write_error_mid_sweep_stops_at_once_keeping_earlier_rows(tmp_path, monkeypatch):
    """The isolated pool used to take the sink's OSError for a dead worker, drop the row and go on."""
    real = files.PartWriter.write
    calls = []

    def failing(self, rows):
        calls.append(1)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return real(self, rows)

    monkeypatch.setattr(files.PartWriter, "write", failing)
    suite = parse_suite(SUITE, "wf.toml")
    with pytest.raises(ResultsWriteError, match="No space left on device") as e:
        run_sweep(suite, tmp_path)
    assert "2 row(s) written before it are kept" in str(e.value) and e.value.exit_code == 1
    assert len(calls) == 3  # stopped at once: no fourth point was measured and written
    assert len(read_results([tmp_path / "wf"])) == 2  # the parts are readable as they are


def test_gate_fails_when_the_head_run_left_points_unmeasured(tmp_path, monkeypatch):
    suite = parse_suite(SUITE, "wf.toml")
    base = run_sweep(suite, tmp_path / "b", RunOptions(executor=InProcess()))
    monkeypatch.setattr(sweepmod, "run_sweep", lambda s, out, *a, **kw: RunResult("x", base.path, [], "cpu", 0.0, not_run=3))
    from qlabench.workflows.gate import run_gate

    with pytest.raises(RunIncompleteError, match="3 point"):
        run_gate(suite, [base.path], tmp_path / "h")


@pytest.mark.parametrize("name", ["../../escaped", "/tmp/abs", "", ".", "..", "a/b", "x" * 101, "sp ace"])
def test_unsafe_suite_names_are_refused_where_they_are_parsed(name):
    with pytest.raises(SpecError, match="name"):
        parse_suite({**SUITE, "name": name}, "s.toml")


def test_safe_names_still_parse():
    for name in ("quick-cpu", "h200.smoke_v2", "a" * 100, "..x"):
        assert parse_suite({**SUITE, "name": name}, "s.toml").name == name


def test_a_300_character_name_fails_at_parse_not_after_measuring(tmp_path):
    f = tmp_path / "long.toml"
    f.write_text(TINY.read_text().replace('name = "tiny-cpu"', f'name = "{"n" * 300}"'))
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", str(f), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "at most 100" in r.output
    assert not (tmp_path / "o").exists()


def test_output_paths_resolve_under_their_root(tmp_path):
    with pytest.raises(StoreError, match="refusing"):
        files.run_path(tmp_path, "../../escaped", "r")
    with pytest.raises(StoreError, match="refusing"):
        files.parts_dir(tmp_path, "/abs", "r")
    (tmp_path / "link").symlink_to("/tmp")
    with pytest.raises(StoreError, match="outside"):
        files.run_path(tmp_path, "link", "r")
    assert files.run_path(tmp_path, "s", "r") == tmp_path / "s" / "r.parquet"


def test_baseline_save_refuses_a_suite_name_that_escapes_the_root(tmp_path):
    suite = parse_suite(SUITE, "wf.toml")
    res = run_sweep(suite, tmp_path / "r", RunOptions(executor=InProcess()))
    with pytest.raises(StoreError, match="may contain only"):
        save_baseline([res.path], "../../x", tmp_path / "root")
    with pytest.raises(StoreError, match="may contain only"):
        baseline_path(tmp_path, "cpu", "../../x")
    # Through the CLI `../../x` reads as a suite path (as `run` and `gate` take it) and is refused as a
    # missing file before any name is used; either way nothing is written, inside the root or out of it.
    r = CliRunner().invoke(app, ["baseline", "save", str(res.path), "--suite", "../../x", "--root",
                                 str(tmp_path / "root")])
    assert r.exit_code == 2 and ("may contain only" in r.output or "no such suite file" in r.output), r.output
    assert not (tmp_path / "root").exists() and not (tmp_path.parent / "x.parquet").exists()
