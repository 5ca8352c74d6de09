"""Issue 16, a newcomer's path: pinned CPU threads, honest noise, one baseline rule, files any tool reads."""

from __future__ import annotations

import dataclasses
import json

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.core.errors import SpecError
from qlabench.core.spec import load_suite, parse_suite
from qlabench.measure.timing import StopRule
from qlabench.run.sweep import run_sweep
from qlabench.store.files import read_results


def _tiny(data_dir, **run):
    s = load_suite(str(data_dir / "tiny-cpu.toml"))
    s = dataclasses.replace(s, points=s.points[:2])
    return dataclasses.replace(s, run=dataclasses.replace(s.run, **run)) if run else s


# -- item 1: CPU workers pin their thread count, and every row records it ---------------------------

def test_cpu_workers_pin_one_thread_by_default_and_record_it(tmp_path, data_dir):
    s = _tiny(data_dir)
    assert s.run.cpu_threads == 1
    res = run_sweep(s, tmp_path)  # isolated workers
    assert [r.cpu_threads for r in res.rows] == [1, 1]
    df = read_results([res.path])
    assert df["cpu_threads"].tolist() == [1, 1]


def test_cpu_threads_from_the_cli_flag(tmp_path, data_dir):
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", str(data_dir / "tiny-cpu.toml"), "--out", str(tmp_path),
                                 "--cpu-threads", "2"])
    assert r.exit_code == 0, r.output
    df = read_results([tmp_path])
    assert set(df["cpu_threads"]) == {2}


def test_cpu_threads_suite_key_is_validated():
    base = {"sweep": {"backends": ["naive-chunk"], "seqlen": [16], "K": 16, "V": 16, "heads": [{"h_qk": 1, "h_v": 1}]}}
    assert parse_suite({**base, "run": {"cpu_threads": 0}}).run.cpu_threads == 0
    with pytest.raises(SpecError, match="run.cpu_threads"):
        parse_suite({**base, "run": {"cpu_threads": -1}})
    with pytest.raises(SpecError, match="run.cpu_threads"):
        parse_suite({**base, "run": {"cpu_threads": "one"}})


# -- item 2: a row says what ended its sampling ---------------------------------------------------

def test_stop_rule_names_what_ended_sampling():
    rule = StopRule(min_samples=5, max_samples=10, max_time_s=1.0, target_rel_noise=0.1)
    assert rule.stopped_by(7, True) == "noise_target"
    assert rule.stopped_by(10, False) == "max_samples"
    assert rule.stopped_by(1, False) == "max_time"


def test_rows_record_stop_reason_and_a_min_samples_shortfall(tmp_path, data_dir):
    s = _tiny(data_dir)
    s = dataclasses.replace(s, timing=dataclasses.replace(s.timing, min_samples=50, max_samples=100,
                                                          max_time_s=0.0, target_rel_noise=0.0))
    from qlabench.backends import REGISTRY

    rows = run_sweep(s, tmp_path, registry=REGISTRY).rows
    assert all(r.ok for r in rows)
    assert {(r.n_samples, r.stopped_by, r.below_min_samples) for r in rows} == {(1, "max_time", True)}
