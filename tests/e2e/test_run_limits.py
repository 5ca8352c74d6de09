"""`run sweep` flags that would bypass a suite's limits are refused before anything runs (exit 2, one line)."""

from __future__ import annotations

from typer.testing import CliRunner

from qlabench.cli import app


def _sweep(data_dir, tmp_path, *extra):
    return CliRunner().invoke(app, ["run", "sweep", "--suite", str(data_dir / "tiny-cpu.toml"), "--out",
                                    str(tmp_path / "r"), "--max-time", "0", *extra])


def test_replicates_over_the_point_limit_are_refused(tmp_path, data_dir):
    r = _sweep(data_dir, tmp_path, "--replicates", "10000000")
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("error: --replicates 10000000") and r.stderr.count("\n") == 1, r.stderr
    assert not (tmp_path / "r").exists()


def test_points_times_replicates_are_counted_against_max_points(tmp_path, data_dir):
    from qlabench.core.spec import load_suite

    n = len(load_suite(str(data_dir / "tiny-cpu.toml")).points)
    limit = str(2 * n + 1)  # the points fit, and twice over, but not three times
    r = _sweep(data_dir, tmp_path, "--replicates", "3", "--max-points", limit)
    assert r.exit_code == 2, r.output
    assert f"{3 * n} measurements" in r.stderr and "--max-points" in r.stderr
    assert _sweep(data_dir, tmp_path, "--replicates", "2", "--max-points", limit).exit_code == 0


def test_a_cpu_thread_count_no_machine_has_is_refused(tmp_path, data_dir):
    r = _sweep(data_dir, tmp_path, "--cpu-threads", "100000")
    assert r.exit_code == 2 and "--cpu-threads" in r.stderr and "Traceback" not in r.output
