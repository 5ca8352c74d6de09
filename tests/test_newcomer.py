"""Issue 16, a newcomer's path: pinned CPU threads, honest noise, one baseline rule, files any tool reads."""

from __future__ import annotations

import dataclasses
import json

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from qlabench.run.options import InProcess, RunOptions
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

    rows = run_sweep(s, tmp_path, RunOptions(executor=InProcess(REGISTRY))).rows
    assert all(r.ok for r in rows)
    assert {(r.n_samples, r.stopped_by, r.below_min_samples) for r in rows} == {(1, "max_time", True)}


# -- item 2: the summary shows noise ----------------------------------------------------------------

def test_speedup_table_marks_noisy_and_short_points(make_row):
    import pandas as pd

    from qlabench.analyze.report import FEW, NOISY, noise_summary, speedup_table
    from qlabench.cli.views import speedup_markdown

    df = pd.DataFrame([r.as_dict() for r in [
        make_row(backend="naive-recurrent", median_ms=10.0, noise_target_met=True, rel_noise=0.01),
        make_row(backend="naive-chunk", median_ms=1.0, noise_target_met=False, rel_noise=0.4),
        make_row(backend="naive-recurrent", median_ms=20.0, seqlens=(128,), total_tokens=128, n_samples=1,
                 samples_ms=(20.0,), noise_target_met=False, below_min_samples=True, stopped_by="max_time"),
        make_row(backend="naive-chunk", median_ms=2.0, seqlens=(128,), total_tokens=128, noise_target_met=True),
    ]])
    t = speedup_table(df, "naive-recurrent")
    assert t["naive-chunk noise"].tolist() == [NOISY, ""]
    assert t["naive-recurrent noise"].tolist() == ["", FEW]
    md = speedup_markdown(t, "naive-recurrent")
    assert "| 1.000 (10.00x) ~ |" in md and "20.000 (1.00x) !" in md
    line = noise_summary(df)
    assert line.startswith("2 of 4 ok points met their noise target") and "~ 1 missed it" in line
    assert "! 1 got fewer than min_samples" in line


# -- items 3 and 4: one baseline rule for the run summary, `show` and `plot` ----------------------------

@pytest.fixture(scope="module")
def tiny_results(tmp_path_factory, data_dir=None):
    from pathlib import Path

    from qlabench.backends import REGISTRY

    out = tmp_path_factory.mktemp("tiny")
    s = load_suite(str(Path(__file__).parent / "data" / "tiny-cpu.toml"))  # baseline naive-recurrent
    run_sweep(s, out, RunOptions(executor=InProcess(REGISTRY)))
    return out / "tiny-cpu"


def test_files_record_the_suite_baseline_and_show_uses_it(tiny_results):
    from qlabench.analyze.report import suite_baselines

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


def test_plot_panels_share_a_y_scale_and_keep_models_apart(tmp_path, make_row, monkeypatch):
    import matplotlib.figure
    import pandas as pd

    from qlabench.analyze.plot import plot_speedups

    figs = []
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda fig, path, **k: figs.append(fig))
    rows = []
    for model, hq in (("qwen3.5-27b", 16), ("qwen3.5-397b", 32)):
        for tp in (1, 8):
            for n in (64, 128):
                slow = 100.0 if tp == 8 else 2.0  # one panel spans > 20x, the other does not
                rows += [make_row(backend="naive-recurrent", median_ms=slow, model=model, tp=tp, h_qk=hq // tp,
                                  h_v=hq // tp, seqlens=(n,), total_tokens=n),
                         make_row(backend="naive-chunk", median_ms=1.0, model=model, tp=tp, h_qk=hq // tp,
                                  h_v=hq // tp, seqlens=(n,), total_tokens=n)]
    df = pd.DataFrame([r.as_dict() for r in rows])
    plot_speedups(df, tmp_path, "naive-recurrent", panel="tp")
    (fig,) = figs
    axes = [a for a in fig.axes if a.get_visible()]
    assert len(axes) == 2 and {a.get_yscale() for a in axes} == {"log"}
    labels = {t.get_text() for a in axes for t in a.get_legend().get_texts()}
    assert "naive-chunk · qwen3.5-27b" in labels and "naive-chunk · qwen3.5-397b" in labels
    assert all(a.get_ylabel() == "" for a in axes) and "speedup vs naive-recurrent" in fig.get_supylabel()
    assert "gate profile flashqla" in fig.get_suptitle()


# -- item 6: --device cpu with a suite whose timer is graph is refused before anything runs ------------

def test_cli_device_cpu_with_a_graph_timer_suite_is_refused_up_front(tmp_path, data_dir):
    text = (data_dir / "tiny-cpu.toml").read_text().replace('timer = "wall"', 'timer = "graph"')
    suite = tmp_path / "graph-suite.toml"
    suite.write_text(text.replace('device = "cpu"', 'device = "auto"'))
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", str(suite), "--out", str(tmp_path / "r"),
                                 "--device", "cpu"])
    assert r.exit_code == 2 and "timer 'graph' needs a CUDA device" in r.stderr
    assert r.stdout == "" and not (tmp_path / "r").exists()


# -- item 7: gate and baseline UX -----------------------------------------------------------------------

def test_gate_without_a_baseline_says_how_to_make_one(tmp_path, data_dir, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["gate", "--suite", str(data_dir / "tiny-cpu.toml")])
    assert r.exit_code == 2
    assert "no baseline at results/baselines/" in r.stderr and "qlabench baseline save results/tiny-cpu" in r.stderr
    assert not (tmp_path / "results").exists()  # nothing ran


def test_baseline_save_accepts_a_suite_path(tiny_results, tmp_path, data_dir):
    r = CliRunner().invoke(app, ["baseline", "save", str(tiny_results), "--suite", str(data_dir / "tiny-cpu.toml"),
                                 "--root", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert list(tmp_path.glob("*/tiny-cpu.parquet"))


def _rows_file(path, make_row, ms, samples):
    from qlabench.store.files import write_rows

    return write_rows(path, [make_row(backend="naive-chunk", median_ms=ms, samples_ms=samples,
                                      n_samples=len(samples))])


def test_compare_names_itself_and_a_pass_says_why(tmp_path, make_row):
    base = _rows_file(tmp_path / "base.parquet", make_row, 1.0, (1.0, 1.0))
    head = _rows_file(tmp_path / "head.parquet", make_row, 1.8, (1.8, 1.8))  # +80%, but 2 samples: ambiguous
    r = CliRunner().invoke(app, ["compare", str(base), str(head), "--format", "markdown"])
    assert r.exit_code == 0, r.output
    assert "qlabench compare: PASS" in r.stdout and "qlabench gate" not in r.stdout
    assert "PASS because all 1 moved points are ambiguous" in r.stdout


def test_fail_on_help_lists_shift():
    r = CliRunner().invoke(app, ["compare", "--help"], env={"COLUMNS": "200"})
    assert "shift" in r.stdout.split("--fail-on", 1)[1].split("--", 1)[0]


# -- item 9: 80-column terminals ----------------------------------------------------------------------

def _at_80(obj) -> str:
    import io

    from rich.console import Console

    buf = io.StringIO()
    Console(file=buf, width=80).print(obj)
    return buf.getvalue()


def test_backends_notes_read_whole_at_80_columns():
    from qlabench.backends import REGISTRY
    from qlabench.cli.listings import backends_table

    text = _at_80(backends_table(REGISTRY.values(), width=80))
    assert "naive-recurrent: token-by-token fp32 recurrence" in " ".join(text.split())
    assert "…" not in text


def test_dry_run_labels_are_never_cut_at_80_columns():
    from qlabench.cli.listings import points_table

    s = load_suite("flashqla-study")
    text = _at_80(points_table(dataclasses.replace(s, points=s.points[:40]), width=80))
    assert "…" not in text and "qwen3.5-397b TP8 (h2/8)" in text
    import re

    lines = [ln for ln in text.splitlines() if re.match(r"\s*\d+  \S", ln)]
    assert len(lines) == 40 and len(set(lines)) == 40


def test_speedup_table_folds_rather_than_cuts(make_row):
    import pandas as pd

    from qlabench.analyze.report import speedup_table
    from qlabench.cli.views import speedup_rich_table

    df = pd.DataFrame([make_row(backend=b, model="qwen3.5-397b", tp=8, h_qk=2, h_v=8, median_ms=ms).as_dict()
                       for b, ms in (("naive-recurrent", 9.0), ("naive-chunk", 1.0), ("flash_qla", 0.1))])
    text = _at_80(speedup_rich_table(speedup_table(df, "naive-recurrent"), "naive-recurrent"))
    assert "…" not in text and "(90.00x)" in text


# -- item 11: scripts/published_compare.py needs no undeclared package ----------------------------------

def test_published_compare_runs_with_declared_dependencies_only():
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    # tabulate is not a dependency: block it, as a fresh environment would not have it
    code = ("import sys, runpy; sys.modules['tabulate'] = None; sys.argv = sys.argv[1:]; "
            "runpy.run_path(sys.argv[0], run_name='__main__')")
    out = subprocess.run([sys.executable, "-c", code, str(root / "scripts" / "published_compare.py"),
                          str(root / "results" / "h200" / "20261129T184128Z-400a97.parquet")],
                         capture_output=True, text=True, cwd=root, check=True).stdout
    assert out.startswith("| h_qk/h_v | seqlens |") and "| pub flash_qla ms |" in out
    assert "| 16/32 | 32768 |" in out


# -- item 5: files any tool reads whole ------------------------------------------------------------------

def _mixed_folder(path, make_row):
    from qlabench.store import files as store
    from qlabench.store.schema import METADATA_KEY, SCHEMA_VERSION

    path.mkdir()
    current = store.write_rows(path / "v3.parquet", [make_row(backend="naive-chunk", cpu_threads=1,
                                                              stopped_by="noise_target")])
    v2 = store.rows_to_table([make_row(backend="naive-recurrent", noise_target_met=True)])
    v2 = v2.drop_columns(["stopped_by", "below_min_samples", "cpu_threads"]).replace_schema_metadata(
        {METADATA_KEY: b"2"})
    pq.write_table(v2, path / "v2.parquet")
    v1 = store.rows_to_table([make_row(backend="fla", mode="bwd")]).drop_columns(
        ["stopped_by", "below_min_samples", "cpu_threads", "gate_zero_frac", "gate_scale"])
    pq.write_table(v1.replace_schema_metadata({METADATA_KEY: b"1"}), path / "v1.parquet")
    assert SCHEMA_VERSION == 4 and len(pq.read_schema(current).names) > len(v2.column_names) > len(v1.column_names)
    return path


def test_mixed_version_folder_reads_whole_in_pyarrow_polars_duckdb(tmp_path, make_row):
    import duckdb
    import polars as pl
    import pyarrow.dataset as ds

    from qlabench.store.schema import COLUMNS, arrow_schema

    folder = _mixed_folder(tmp_path / "mixed", make_row)
    table = ds.dataset(folder, format="parquet", schema=arrow_schema()).to_table()
    assert table.num_rows == 3 and table.column_names == list(COLUMNS)
    assert sorted(table.column("cpu_threads").to_pylist(), key=str) == [1, None, None]

    schema = pl.from_arrow(arrow_schema().empty_table()).schema  # the union: the current schema
    df = pl.read_parquet(f"{folder}/*.parquet", schema=schema, missing_columns="insert")
    assert df.height == 3 and set(COLUMNS) <= set(df.columns)
    assert df["cpu_threads"].null_count() == 2 and df["gate_scale"].null_count() == 3

    rel = duckdb.sql(f"SELECT * FROM read_parquet('{folder}/*.parquet', union_by_name = true)")
    assert len(rel.fetchall()) == 3 and set(COLUMNS) <= set(rel.columns)

    # qlabench itself upgrades on read: current columns, and version 1's library `bwd` is `bwd_train`
    res = read_results([folder])
    assert list(res.columns) == list(COLUMNS)
    res = res.set_index("backend")
    assert res.loc["fla", "mode"] == "bwd_train"
    assert res.loc["naive-recurrent", "stopped_by"] == "noise_target"


def test_result_files_respect_the_umask(tmp_path, make_row):
    import os
    import stat

    from qlabench.store.files import write_rows

    old = os.umask(0o022)
    try:
        p = write_rows(tmp_path / "a.parquet", [make_row()])
        assert stat.S_IMODE(p.stat().st_mode) == 0o644
        os.umask(0o077)
        q = write_rows(tmp_path / "b.parquet", [make_row()])
        assert stat.S_IMODE(q.stat().st_mode) == 0o600
    finally:
        os.umask(old)


# -- item 8: no quiet failures --------------------------------------------------------------------------

def test_profile_of_an_unavailable_backend_exits_2_with_its_reason(tmp_path):
    r = CliRunner().invoke(app, ["profile", "--backend", "flash_qla", "--device", "cpu", "--out", str(tmp_path)])
    assert r.exit_code == 2
    assert "backend 'flash_qla' is unavailable: flash-qla is not installed" in " ".join(r.stderr.split())
    assert not any(tmp_path.iterdir())


def test_kernels_prints_a_top_table_and_writes_parquet_only_with_out(tmp_path):
    from pathlib import Path

    h200 = Path(__file__).resolve().parents[1] / "results" / "h200-ncu"
    r = CliRunner().invoke(app, ["kernels", str(h200), "--top", "3"], env={"COLUMNS": "160"})
    assert r.exit_code == 0, r.output
    assert "top 3 of" in r.stdout and "total us" in r.stdout and "wrote" not in r.stdout
    out = tmp_path / "k.parquet"
    r = CliRunner().invoke(app, ["kernels", str(h200), "-o", str(out)])
    assert r.exit_code == 0 and out.is_file() and "kernel launches" in r.stdout


# -- item 12: the Python API ------------------------------------------------------------------------------

def test_run_result_repr_is_one_line_and_progress_is_on_request(tmp_path, data_dir, capsys):
    from qlabench.backends import REGISTRY

    s = _tiny(data_dir)
    res = run_sweep(s, tmp_path, RunOptions(executor=InProcess(REGISTRY)), progress=True)
    text = repr(res)
    assert "\n" not in text and len(text) < 250
    assert text.startswith("RunResult(run_id=") and "rows=2 (2 ok)" in text and "device='cpu'" in text
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and err[0].startswith("[1/2] ok naive-recurrent") and err[1].startswith("[2/2] ok")
    run_sweep(s, tmp_path, RunOptions(executor=InProcess(REGISTRY)))  # silent by default
    assert capsys.readouterr().err == ""


def test_an_older_file_finds_its_suite_baseline_by_the_suite_name(tmp_path, make_row):
    from qlabench.analyze.report import pick_baseline, suite_baselines
    from qlabench.store.files import write_rows

    rows = [make_row(backend="naive-recurrent", median_ms=2.0), make_row(backend="naive-chunk", median_ms=1.0)]
    write_rows(tmp_path / "old.parquet", rows, metadata={"suite_path": "/elsewhere/suites/quick-cpu.toml"})
    assert suite_baselines([tmp_path]) == ["naive-recurrent"]  # suites/quick-cpu.toml's baseline
    import pandas as pd

    df = pd.DataFrame([r.as_dict() for r in rows])
    assert pick_baseline(df, None, suite_baselines([tmp_path])) == "naive-recurrent"
    assert pick_baseline(df) == "naive-chunk"  # no suite known: the naive fallback, as before


def test_an_in_process_sweep_gives_the_caller_its_threads_back(tmp_path, data_dir):
    import torch

    from qlabench.backends import REGISTRY

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        rows = run_sweep(_tiny(data_dir), tmp_path, RunOptions(executor=InProcess(REGISTRY))).rows
        assert {r.cpu_threads for r in rows} == {1}  # measured pinned, as in a worker
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
