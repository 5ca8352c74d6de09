"""One selfbench call as a library call: the command line only maps its flags onto a SelfbenchRequest."""

from __future__ import annotations

import re

import pytest

from qlabench.core.spec import load_suite
from qlabench_publish.selfbench import SelfbenchError
from qlabench_publish.selfbench.session import SelfbenchRequest, run_selfbench


def test_a_report_is_rebuilt_without_the_command_line(tmp_path, data_dir):
    said = []
    req = SelfbenchRequest(what="agreement", suite=load_suite(str(data_dir / "tiny-cpu.toml")), out=tmp_path,
                           report_only=True, command="qlabench selfbench agreement --report-only")
    res = run_selfbench(req, say=lambda what, detail: said.append((what, detail)))
    assert res.path == tmp_path / "selfbench-agreement.md" and res.path.read_text() == res.report
    assert "## Agreement" in res.report and "qlabench selfbench agreement --report-only" in res.report
    assert said == [("agreement skipped", f"no {tmp_path / 'agreement.csv'} to report on")]


def test_an_unknown_part_is_refused_when_asked(data_dir, tmp_path):
    with pytest.raises(SelfbenchError, match="unknown selfbench 'speed'"):
        SelfbenchRequest(what="speed", suite=load_suite(str(data_dir / "tiny-cpu.toml")), out=tmp_path)


@pytest.mark.parametrize("rep_ms", [float("nan"), -1.0, 0.0, float("inf"), 1e9])
def test_rep_ms_out_of_range_is_refused_when_asked(data_dir, tmp_path, rep_ms):
    with pytest.raises(SelfbenchError, match="--rep-ms must be"):
        SelfbenchRequest(what="agreement", suite=load_suite(str(data_dir / "tiny-cpu.toml")), out=tmp_path,
                         rep_ms=rep_ms)


def test_rep_ms_nan_is_exit_2_on_the_command_line(data_dir, tmp_path):
    from typer.testing import CliRunner

    from qlabench_publish.cli import app

    r = CliRunner().invoke(app, ["selfbench", "agreement", "--suite", str(data_dir / "tiny-cpu.toml"), "--out",
                                 str(tmp_path / "sb"), "--rep-ms", "nan", "--report-only"])
    assert r.exit_code == 2 and "--rep-ms must be" in r.output


@pytest.mark.parametrize("what", ["precision", "cost", "all"])
@pytest.mark.parametrize("item, says", [
    ("regime=bogus", "timing.regime: must be one of"),
    ("sustained_ms=-1", "timing.sustained_ms: must be > 0"),
    ("max_samples=0", "timing.max_samples: must be >= 1"),
    ("timer=sundial", "timing.timer: must be one of"),
    ("min_samples=500", "timing.max_samples: must be >= min_samples (500)"),
])
def test_a_timing_override_is_validated_as_a_suites_timing_is_before_any_run(data_dir, tmp_path, what, item, says):
    from qlabench_publish.selfbench import parse_timing_overrides

    with pytest.raises(SelfbenchError, match=f"--timing {item.split('=')[0]}=.*: {re.escape(says)}"):
        SelfbenchRequest(what=what, suite=load_suite(str(data_dir / "tiny-cpu.toml")), out=tmp_path / "sb",
                         overrides=parse_timing_overrides([item]))
    assert not (tmp_path / "sb").exists()


def _cli(*args):
    from typer.testing import CliRunner

    from qlabench_publish.cli import app

    return CliRunner().invoke(app, ["selfbench", *args])


def test_the_command_line_refuses_a_bad_override_and_lists_every_kind(data_dir, tmp_path):
    r = _cli("precision", "--suite", str(data_dir / "tiny-cpu.toml"), "--out", str(tmp_path / "sb"),
             "--timing", "regime=bogus")
    assert r.exit_code == 2 and "timing.regime: must be one of" in r.stderr and not (tmp_path / "sb").exists()
    r = _cli("nope")
    assert r.exit_code == 2 and "expected one of precision, cost, agreement, all, regimes" in r.stderr
    r = _cli("regimes", "--timing", "warmup=3", "--out", str(tmp_path / "sb"))  # its own settings: never ignored
    assert r.exit_code == 2 and "--timing does not apply to it" in r.stderr


@pytest.mark.parametrize("what", ["precision", "all"])
def test_a_time_budget_spent_before_the_first_run_is_a_report_not_a_traceback(data_dir, tmp_path, what):
    r = _cli(what, "--suite", str(data_dir / "tiny-cpu.toml"), "--out", str(tmp_path / "sb"), "--max-time", "0")
    assert r.exit_code == 0, r.output
    assert "No completed run to report on yet" in (tmp_path / "sb" / f"selfbench{'' if what == 'all' else '-' + what}.md").read_text()
