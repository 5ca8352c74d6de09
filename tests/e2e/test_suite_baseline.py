"""One baseline rule: the run summary, `show`, `plot` and `baseline save` all use the suite's baseline."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from qlabench.run.options import InProcess, RunOptions
from qlabench.cli import app
from qlabench.core.spec import load_suite
from qlabench.run.sweep import run_sweep


@pytest.fixture(scope="module")
def tiny_results(tmp_path_factory, data_dir=None):
    from pathlib import Path

    from qlabench.backends import REGISTRY

    out = tmp_path_factory.mktemp("tiny")
    s = load_suite(str(Path(__file__).resolve().parents[1] / "data" / "tiny-cpu.toml"))  # baseline naive-recurrent
    run_sweep(s, out, RunOptions(executor=InProcess(REGISTRY)))
    return out / "tiny-cpu"


def test_files_record_the_suite_baseline_and_show_uses_it(tiny_results):
    from qlabench.analyze.kit.speedups import suite_baselines

    assert suite_baselines([tiny_results]) == ["naive-recurrent"]
    r = CliRunner().invoke(app, ["show", str(tiny_results), "--format", "csv"])
    assert r.exit_code == 0, r.output
    import io

    import pandas as pd

    t = pd.read_csv(io.StringIO(r.stdout))
    assert (t["naive-recurrent x"] == 1.0).all()  # the suite's baseline, not pick_baseline's naive-chunk
    assert len(t) == 6 and {"naive-chunk", "naive-chunk x", "naive-chunk noise"} <= set(t.columns)
    r = CliRunner().invoke(app, ["show", str(tiny_results), "--baseline", "naive-chunk", "-f", "markdown"])
    assert r.exit_code == 0 and "speedup vs naive-chunk" in r.stdout and r.stdout.count("\n| fwd") == 6
    r = CliRunner().invoke(app, ["show", str(tiny_results)])
    assert r.exit_code == 0 and "speedup vs naive-recurrent" in r.stdout and "ok points met" in r.stdout
    r = CliRunner().invoke(app, ["show", str(tiny_results), "--format", "html"])
    assert r.exit_code == 2 and "--format must be one of" in r.stderr


def test_plot_divides_by_the_suite_baseline_like_the_table(tiny_results, tmp_path):
    r = CliRunner().invoke(app, ["plot", str(tiny_results), "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert {p.name for p in tmp_path.iterdir()} == {"speedup_fwd_float32_gate-flashqla.png",
                                                   "speedup_fwd_bwd_float32_gate-flashqla.png"}


def test_baseline_save_accepts_a_suite_path(tiny_results, tmp_path, data_dir):
    r = CliRunner().invoke(app, ["baseline", "save", str(tiny_results), "--suite", str(data_dir / "tiny-cpu.toml"),
                                 "--root", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert list(tmp_path.glob("*/tiny-cpu.parquet"))

