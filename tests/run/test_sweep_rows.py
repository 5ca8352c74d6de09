"""What a sweep's rows record and how a sweep reports: pinned CPU threads, the reason sampling stopped,
a one-line result, progress on request."""

from __future__ import annotations

import dataclasses

from typer.testing import CliRunner

from qlabench.run.options import InProcess, RunOptions
from qlabench.cli import app
from qlabench.core.spec import load_suite
from qlabench.run.sweep import run_sweep
from qlabench.store.files import read_results


def _tiny(data_dir, **run):
    s = load_suite(str(data_dir / "tiny-cpu.toml"))
    s = dataclasses.replace(s, points=s.points[:2])
    return dataclasses.replace(s, run=dataclasses.replace(s.run, **run)) if run else s


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


def test_rows_record_stop_reason_and_a_min_samples_shortfall(tmp_path, data_dir):
    s = _tiny(data_dir)
    s = dataclasses.replace(s, timing=dataclasses.replace(s.timing, min_samples=50, max_samples=100,
                                                          max_time_s=0.0, target_rel_noise=0.0))
    from qlabench.backends import REGISTRY

    rows = run_sweep(s, tmp_path, RunOptions(executor=InProcess(REGISTRY))).rows
    assert all(r.ok for r in rows)
    assert {(r.n_samples, r.stopped_by, r.below_min_samples) for r in rows} == {(1, "max_time", True)}


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

