"""--resume and merge guards (checked rows, a lock, no silent overwrite, plot -o FILE)."""

from __future__ import annotations

import fcntl
from pathlib import Path

import pytest
from typer.testing import CliRunner

from qlabench.run.options import InProcess, RunOptions
from qlabench.cli import app
from qlabench.core.errors import StoreError
from qlabench.core.spec import parse_suite
from qlabench.run.sweep import run_sweep
from qlabench.store.resume import resume_lock

SUITE = {
    "name": "rg", "device": "cpu",
    "sweep": {"backends": ["naive-recurrent"], "modes": ["fwd"], "seqlen": [8, 12],
              "heads": [{"h_qk": 1, "h_v": 1}], "K": 8, "V": 8, "dtype": "float32"},
    "timing": {"timer": "wall", "warmup": 0, "min_samples": 2, "max_samples": 2, "max_time_s": 0.05},
    "check": {"oracle_max_tokens": 32},
}


@pytest.fixture
def suite():
    return parse_suite(SUITE, "rg.toml")


def test_rows_measured_without_the_check_do_not_count_for_a_checked_resume(suite, tmp_path):
    unchecked = run_sweep(suite, tmp_path, RunOptions(executor=InProcess(), check=False))
    assert all(r.status == "ok" and r.oracle is None for r in unchecked.rows)
    again = run_sweep(suite, tmp_path, RunOptions(executor=InProcess(), resume=True))  # checked (the suite's default)
    assert again.resumed == 0 and len(again.rows) == 2 and all(r.oracle for r in again.rows)
    third = run_sweep(suite, tmp_path, RunOptions(executor=InProcess(), resume=True))
    assert third.resumed == 2 and not third.rows
    # an unchecked resume accepts checked rows
    assert run_sweep(suite, tmp_path, RunOptions(executor=InProcess(), check=False, resume=True)).resumed == 2


def test_a_second_concurrent_resume_is_refused(suite, tmp_path):
    with resume_lock(tmp_path, "rg"):
        with pytest.raises(StoreError, match="another --resume"):
            run_sweep(suite, tmp_path, RunOptions(executor=InProcess(), resume=True))
        # a plain sweep into the same folder is still allowed (each writes its own run id)
        assert len(run_sweep(suite, tmp_path, RunOptions(executor=InProcess())).rows) == 2
    assert len(run_sweep(suite, tmp_path, RunOptions(executor=InProcess(), resume=True)).rows) == 0  # released


def test_the_lock_is_an_flock_held_for_the_sweep(suite, tmp_path):
    seen = []

    class Probe:
        def start(self, total):
            f = open(tmp_path / "rg" / ".resume.lock")
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                seen.append("free")
            except BlockingIOError:
                seen.append("held")
            finally:
                f.close()

        def point_started(self, p): ...
        def point_done(self, r): ...

    run_sweep(suite, tmp_path, RunOptions(executor=InProcess(), resume=True), progress=Probe())
    assert seen == ["held"]


def test_merge_into_an_existing_file_is_refused_without_force(suite, tmp_path):
    res = run_sweep(suite, tmp_path / "r", RunOptions(executor=InProcess()))
    into = tmp_path / "merged.parquet"
    into.write_bytes(b"precious")
    r = CliRunner().invoke(app, ["merge", str(res.path), "--into", str(into)])
    assert r.exit_code == 2 and "--force" in r.output and into.read_bytes() == b"precious"
    r = CliRunner().invoke(app, ["merge", str(res.path), "--into", str(into), "--force"])
    assert r.exit_code == 0 and into.read_bytes() != b"precious"


def test_plot_out_a_file_is_a_clean_error(suite, tmp_path):
    res = run_sweep(suite, tmp_path / "r", RunOptions(executor=InProcess()))
    f = tmp_path / "plot.png"
    f.write_text("x")
    for cmd in ("plot", "plot-sm"):
        r = CliRunner().invoke(app, [cmd, str(res.path), "-o", str(f)])
        assert r.exit_code == 2 and "is a file" in r.output, (cmd, r.output)
    r = CliRunner().invoke(app, ["plot", str(res.path), "-o", str(tmp_path / "new.png")])
    assert r.exit_code == 2 and "folder" in r.output
