"""An unusable kernel cache folder is one line and exit 2 before any worker starts, never a run of error rows."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.measure.caches import CACHE_VARS, ENV_VAR


@pytest.fixture(autouse=True)
def _own_cache_vars(monkeypatch):
    for var in CACHE_VARS:  # as for a user who set none of the libraries' own variables
        monkeypatch.delenv(var, raising=False)


def _sweep(data_dir, out, *extra):
    return CliRunner().invoke(app, ["run", "sweep", "--suite", str(data_dir / "tiny-cpu.toml"), "--out", str(out),
                                    *extra])


def test_cache_dir_env_on_a_file_is_refused_before_any_worker(tmp_path, data_dir, monkeypatch):
    f = tmp_path / "afile"
    f.write_text("x")
    monkeypatch.setenv(ENV_VAR, str(f))
    r = _sweep(data_dir, tmp_path / "r")
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("error: kernel cache folder") and r.stderr.count("\n") == 1, r.stderr
    assert not (tmp_path / "r").exists()  # nothing measured, nothing written


def test_cache_dir_option_on_a_file_is_one_line(tmp_path, data_dir):
    f = tmp_path / "afile"
    f.write_text("x")
    for args in (["run", "sweep", "--suite", str(data_dir / "tiny-cpu.toml"), "--out", str(tmp_path / "r")],
                 ["warmup", "--suite", str(data_dir / "tiny-cpu.toml")]):
        r = CliRunner().invoke(app, args + ["--cache-dir", str(f)])
        assert r.exit_code == 2, (args, r.output, r.exception)
        assert "Traceback" not in r.output and str(f) in r.stderr


def test_a_read_only_home_is_one_line(tmp_path, data_dir):
    env = {k: v for k, v in os.environ.items() if k not in CACHE_VARS + (ENV_VAR, "XDG_CACHE_HOME")}
    env["HOME"] = "/sys/qlabench-no-home"  # nothing can be made there, not even by root
    proc = subprocess.run([sys.executable, "-m", "qlabench", "run", "sweep", "--suite", str(data_dir / "tiny-cpu.toml"),
                           "--out", str(tmp_path / "r")], env=env, capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith("error: kernel cache folder /sys/qlabench-no-home"), proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "r").exists()
