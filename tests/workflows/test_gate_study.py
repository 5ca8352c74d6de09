"""`qlabench compare-study` (workflows/gate_study.py): its options are checked before the study measures
anything (a bad --confirm used to surface only after the whole baseline sweep)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import qlabench.run.sweep
from qlabench.cli import app


@pytest.mark.parametrize("option, value", [("--confirm", "-5"), ("--confirm", "1000"), ("--replicates", "1000")])
def test_bad_options_are_refused_before_any_sweep(tmp_path, monkeypatch, option, value):
    def no_sweep(*args, **kwargs):
        raise AssertionError("a sweep ran before the options were checked")

    monkeypatch.setattr(qlabench.run.sweep, "run_sweep", no_sweep)
    r = CliRunner().invoke(app, ["compare-study", "--suite", "gate-study-cpu", "--out", str(tmp_path / "s"),
                                 option, value])
    assert r.exit_code == 2, r.output
    assert f"{option} must be between" in r.output
    assert not (tmp_path / "s" / "base").exists()
