"""The command line's one error boundary (qlabench/cli/app.py): project errors become one line and exit 2;
anything else is a bug and keeps its traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

import qlabench.run.sweep as sweep_module
from qlabench.cli import app
from qlabench.cli.app import exits_on_error
from qlabench.cli.lazy import one_command, registered
from qlabench.core.errors import ConfigError, QlabenchError


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _commands(group: typer.Typer, prefix: str = ""):
    """(name, the callback the command runs) of every command, each loaded as running it loads it."""
    for name, entry in registered(group).items():
        yield prefix + name, one_command(entry, group.info.cls.wrap).registered_commands[0].callback
    for sub in group.registered_groups:
        yield from _commands(sub.typer_instance, prefix + sub.name + " ")


def test_every_command_is_behind_the_boundary():
    commands = dict(_commands(app))
    assert {"run sweep", "compare", "gate", "baseline save", "profile", "merge", "warmup",
            "backends", "suites", "plot", "plot-sm", "kernels", "compare-study", "_ncu-child",
            "_warm-group"} <= set(commands)
    for name, callback in commands.items():
        assert callback.__code__ is exits_on_error(lambda: None).__code__, name  # the boundary's wrapper
        assert callback.__wrapped__.__doc__, name  # the help text survives the wrapping


@pytest.mark.parametrize("error", [QlabenchError("the input is wrong [cp2 inter]"), ConfigError("a bad option")])
def test_a_project_error_from_a_command_is_one_line_and_exit_2(monkeypatch, tmp_path, data_dir, error):
    def fails(*a, **k):
        raise error

    monkeypatch.setattr(sweep_module, "run_plan", fails)
    result = invoke("run", "sweep", "--suite", data_dir / "tiny-cpu.toml", "--out", tmp_path / "out")
    assert result.exit_code == 2
    assert result.stderr == f"error: {error}\n"  # one line, markup-like text kept as is
    assert "Traceback" not in result.output


@pytest.mark.parametrize("error", [RuntimeError, ValueError, KeyError])
def test_a_bug_inside_the_sweep_is_not_turned_into_exit_2(monkeypatch, tmp_path, data_dir, error):
    def bug(*a, **k):
        raise error("a bug in run_plan")

    monkeypatch.setattr(sweep_module, "run_plan", bug)
    result = invoke("run", "sweep", "--suite", data_dir / "tiny-cpu.toml", "--out", tmp_path / "out")
    assert result.exit_code not in (0, 2)
    assert isinstance(result.exception, error)
    assert "error:" not in result.stderr


def test_a_bug_shows_its_traceback_on_the_console(tmp_path, data_dir):
    """Through the console script's main(), as a user sees it: the traceback, exit code 1, no `error:` line."""
    code = (
        "import sys\n"
        "import qlabench.run.sweep as s\n"
        "def bug(*a, **k):\n"
        "    raise RuntimeError('a bug in run_plan')\n"
        "s.run_plan = bug\n"
        "from qlabench.cli import main\n"
        f"sys.argv = ['qlabench', 'run', 'sweep', '--suite', {str(data_dir / 'tiny-cpu.toml')!r}, "
        f"'--out', {str(tmp_path / 'out')!r}]\n"
        "main()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "Traceback (most recent call last)" in proc.stderr
    assert "RuntimeError: a bug in run_plan" in proc.stderr
    assert "error:" not in proc.stderr


def test_python_dash_m_shows_the_help():
    proc = subprocess.run([sys.executable, "-m", "qlabench", "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    for name in ("run", "compare", "gate", "merge", "warmup", "profile"):
        assert name in proc.stdout


def test_bad_point_json_of_the_ncu_child_is_one_line():
    result = invoke("_ncu-child", "--point-json", "not json")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: bad --point-json") and result.stderr.count("\n") == 1


@pytest.mark.parametrize("args, words", [
    (["profile", "--backend", "naive-chunk", "--heads", "x/8"], "--heads takes"),
    (["profile", "--backend", "naive-chunk", "--seqlens", "1k"], "--seqlens takes"),
    (["profile"], "give --suite and --index"),
    (["profile", "--suite", "quick-cpu", "--index", "100000"], "--index must be in"),
    (["profile", "--backend", "naive-chunk", "--heads", "3/8"], "invalid point"),
    (["compare-study", "--slowdowns", "a,b"], "--slowdowns must be numbers"),
    (["run", "sweep", "--executor", "slurm", "--dry-run"], "expected local or ray"),
    (["run", "sweep", "--executor", "ray", "--no-isolate", "--dry-run"], "drop --no-isolate"),
])
def test_bad_options_exit_2_with_one_line(args, words):
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    assert words in result.stderr


def test_a_dry_run_counts_the_sustained_regimes_lead_in(tmp_path):
    suite = tmp_path / "s.toml"
    suite.write_text('name = "s"\ndevice = "cpu"\n[sweep]\nbackends = ["naive-chunk"]\nmodes = ["fwd"]\n'
                     'seqlen = [8]\nheads = [{ h_qk = 1, h_v = 1 }]\nK = 8\nV = 8\ndtype = "float32"\n'
                     '[timing]\nmax_time_s = 0.5\nregime = "sustained"\nsustained_ms = 300\n')
    out = CliRunner().invoke(app, ["run", "sweep", "--suite", str(suite), "--dry-run"], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    assert "at most 0.8 s per point (0.3 s of it the sustained regime's lead-in)" in out.output


def test_no_help_text_prints_a_doubled_percent_sign():
    # Typer prints help as written (no %-formatting): '3%%' reached the screen (advise --help, ab --help)
    from typer.testing import CliRunner

    from qlabench.cli import app

    for cmd in (["advise"], ["ab"], ["compare"], ["gate"], ["run", "sweep"], ["show"], ["report"]):
        r = CliRunner().invoke(app, [*cmd, "--help"], env={"COLUMNS": "200"})
        assert r.exit_code == 0 and "%%" not in r.output, (cmd, r.output)
    r = CliRunner().invoke(app, ["ab", "--help"], env={"COLUMNS": "200"})
    assert "0.03 = 3%;" in r.output
