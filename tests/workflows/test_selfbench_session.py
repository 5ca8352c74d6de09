"""One selfbench call as a library call: the command line only maps its flags onto a SelfbenchRequest."""

from __future__ import annotations

import pytest

from qlabench.core.spec import load_suite
from qlabench.workflows.selfbench import SelfbenchError
from qlabench.workflows.selfbench.session import SelfbenchRequest, run_selfbench


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

    from qlabench.cli import app

    r = CliRunner().invoke(app, ["selfbench", "agreement", "--suite", str(data_dir / "tiny-cpu.toml"), "--out",
                                 str(tmp_path / "sb"), "--rep-ms", "nan", "--report-only"])
    assert r.exit_code == 2 and "--rep-ms must be" in r.output
