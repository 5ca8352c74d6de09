"""`--backends` / `--modes` (core/select.py): part of a suite, and a typo is an error naming what exists."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.core.errors import ConfigError
from qlabench.core.select import parse_names, selected_indices
from qlabench.core.spec import load_suite


def test_names_are_a_comma_list():
    assert parse_names(" fla, flash_qla ,,") == ("fla", "flash_qla") and parse_names(None) == ()


def test_a_filter_keeps_the_matching_points_in_suite_order():
    s = load_suite("flashqla-study")
    keep = selected_indices(s.points, ("flash_qla", "flashinfer"), ("fwd",))
    assert keep == sorted(keep) and len(keep) > 0
    assert {s.points[i].backend for i in keep} == {"flash_qla", "flashinfer"}
    assert {s.points[i].mode for i in keep} == {"fwd"}
    assert len(selected_indices(s.points)) == len(s.points)
    # every forward flashinfer point is kept: the filter drops nothing it should keep
    assert sum(p.backend == "flashinfer" for p in s.points) == sum(s.points[i].backend == "flashinfer" for i in keep)


@pytest.mark.parametrize("backends,modes,msg", [(("flashqla",), (), r"no backend 'flashqla' \(it has: fla,"),
                                                (("fla",), ("bwdd",), "no mode 'bwdd'"),
                                                (("flashinfer",), ("bwd",), "no point has backend")])
def test_a_filter_that_matches_nothing_says_why(backends, modes, msg):
    with pytest.raises(ConfigError, match=msg):
        selected_indices(load_suite("flashqla-study").points, backends, modes)


def test_run_sweep_dry_run_counts_the_filtered_points():
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", "flashqla-study", "--backends", "flashinfer",
                                 "--modes", "fwd", "--dry-run"])
    assert r.exit_code == 0, r.output
    assert "171 points in suite 'flashqla-study'" in r.output
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", "flashqla-study", "--backends", "flashqla", "--dry-run"])
    assert r.exit_code == 2 and "no backend 'flashqla'" in r.output
