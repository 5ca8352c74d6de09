"""Baselines: a broken run never replaces good rows silently, and two saves at once both land."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from qlabench.core.errors import StoreError
from qlabench.store.baselines import save_baseline
from qlabench.store.files import read_results, write_rows


def _run(make_row, path, run_id, seeds, status="ok", minute=0):
    rows = [make_row(run_id=run_id, seed=s, status=status, timestamp=f"2025-01-01T00:{minute:02d}:00+00:00")
            for s in seeds]
    return write_rows(path, rows)


def test_a_run_of_error_rows_does_not_replace_an_ok_baseline(make_row, tmp_path):
    good = _run(make_row, tmp_path / "good.parquet", "good", [0, 1])
    path, _, _ = save_baseline([good], "test", tmp_path / "root")
    bad = _run(make_row, tmp_path / "bad.parquet", "bad", [0, 1], status="error", minute=5)
    with pytest.raises(StoreError, match=r"2 point\(s\) with an ok baseline row .*error .*--force"):
        save_baseline([bad], "test", tmp_path / "root")
    assert set(read_results([path])["status"]) == {"ok"}  # nothing was written
    # A new point, even an error one, is only added; with --force the error rows replace the ok ones.
    extra = _run(make_row, tmp_path / "extra.parquet", "extra", [2], status="error", minute=6)
    _, n, replaced = save_baseline([extra], "test", tmp_path / "root")
    assert (n, replaced) == (3, 0)
    _, n, replaced = save_baseline([bad], "test", tmp_path / "root", force=True)
    assert (n, replaced) == (3, 2) and set(read_results([path])["status"]) == {"error"}


def test_baseline_save_without_force_exits_2_on_the_cli(make_row, tmp_path):
    from typer.testing import CliRunner

    from qlabench.cli import app

    good = _run(make_row, tmp_path / "good.parquet", "good", [0])
    bad = _run(make_row, tmp_path / "bad.parquet", "bad", [0], status="error", minute=5)
    root = ["--suite", "test", "--root", str(tmp_path / "root")]
    assert CliRunner().invoke(app, ["baseline", "save", str(good), *root]).exit_code == 0
    r = CliRunner().invoke(app, ["baseline", "save", str(bad), *root])
    assert r.exit_code == 2 and "--force" in r.output
    assert CliRunner().invoke(app, ["baseline", "save", str(bad), *root, "--force"]).exit_code == 0


# Each child waits at a barrier (both ready) so the two saves overlap, and reads slowly, so that without a
# lock both read the same old baseline and the second rename loses the first one's rows.
_CHILD = textwrap.dedent("""
    import sys, time, pathlib
    import qlabench.store.baselines as b
    slow_read = b.read_results
    def read_results(paths):
        df = slow_read(paths)
        time.sleep(1.0)
        return df
    b.read_results = read_results
    ready, other, results, root = map(pathlib.Path, sys.argv[1:5])
    ready.touch()
    deadline = time.time() + 60
    while not other.exists() and time.time() < deadline:
        time.sleep(0.01)
    b.save_baseline([results], "test", root)
""")


def test_two_saves_at_once_both_land(make_row, tmp_path):
    root = tmp_path / "root"
    path, _, _ = save_baseline([_run(make_row, tmp_path / "first.parquet", "first", [0])], "test", root)
    a = _run(make_row, tmp_path / "a.parquet", "a", [1, 2], minute=1)
    b = _run(make_row, tmp_path / "b.parquet", "b", [3, 4], minute=2)
    procs = [subprocess.Popen([sys.executable, "-c", _CHILD, str(tmp_path / f"{me}.ready"),
                               str(tmp_path / f"{other}.ready"), str(res), str(root)], stderr=subprocess.PIPE)
             for me, other, res in (("a", "b", a), ("b", "a", b))]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    assert sorted(read_results([path])["seed"]) == [0, 1, 2, 3, 4]


def test_baseline_save_gives_up_on_a_held_lock_naming_its_holder(make_row, tmp_path):
    from typer.testing import CliRunner

    from qlabench.cli import app
    from qlabench.store.baselines import baseline_path

    good = _run(make_row, tmp_path / "good.parquet", "good", [0])
    root = tmp_path / "root"
    target = baseline_path(root, read_results([good])["device"].iloc[0], "test")
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from qlabench.store.locks import locked\n"
                               "with locked(sys.argv[1]):\n    print('held', flush=True); time.sleep(120)\n",
                               str(target)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        r = CliRunner().invoke(app, ["baseline", "save", str(good), "--suite", "test", "--root", str(root),
                                     "--lock-wait", "1"])
    finally:
        holder.kill()
        holder.wait()
    assert r.exit_code == 2, r.output
    assert f"pid {holder.pid}" in r.output and "gave up after 1 s" in r.output and not target.exists()
