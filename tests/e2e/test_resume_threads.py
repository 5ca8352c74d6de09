"""`--resume` matches the CPU thread count: a row timed with 1 thread is no answer for a run asking for 2."""

from __future__ import annotations

from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.store.files import read_results


def test_resume_with_other_cpu_threads_measures_again(tmp_path, data_dir):
    base = ["run", "sweep", "--suite", str(data_dir / "tiny-cpu.toml"), "--out", str(tmp_path), "--no-isolate",
            "--backends", "naive-chunk", "--modes", "fwd"]
    first = CliRunner().invoke(app, base)
    assert first.exit_code == 0, first.output
    n = len(read_results([tmp_path / "tiny-cpu"]))
    same = CliRunner().invoke(app, base + ["--resume"])
    assert same.exit_code == 0 and "no points run" in same.output, same.output  # the same setting: all done
    other = CliRunner().invoke(app, base + ["--resume", "--cpu-threads", "2"])
    assert other.exit_code == 0, other.output
    df = read_results([tmp_path / "tiny-cpu"])
    assert len(df) == 2 * n and sorted(set(df["cpu_threads"])) == [1, 2]
