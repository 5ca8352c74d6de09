"""`qlabench merge`: one row per point out of shard outputs; missing, duplicated and foreign points fail it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from typer.testing import CliRunner

from qlabench.measure.timing import TimerPlan
from qlabench.cli import app
from qlabench.core.errors import QlabenchError
from qlabench.core.point import Point
from qlabench.run.executors.shard import partition
from qlabench.store.merge import merge_results, write_merged
from qlabench.core.spec import load_suite
from qlabench.store.files import read_rows, write_rows
from qlabench.run.job import WorkerJob, unmeasured_row

SUITE_PATH = str(Path(__file__).resolve().parents[1] / "data" / "tiny-cpu.toml")
ENV = {k: None for k in ("device_index", "git_sha", "python_version", "torch_version", "triton_version",
                         "tilelang_version", "fla_version", "flash_qla_version", "cuda_version", "driver_version")}
ENV.update(host="node-a", device="cpu", env_fingerprint="fp", qlabench_version="0")


@pytest.fixture(scope="module")
def suite():
    return load_suite(SUITE_PATH)


def rows_for(suite, points, run_id, status="ok", second=0, host="node-a"):
    job = WorkerJob(suite=suite, run_id=run_id, timer=TimerPlan.resolve("wall", "cpu", suite.timing), check=True)
    out = []
    for p in points:
        r = unmeasured_row(p, job, {**ENV, "host": host}, "boom")
        r = dataclasses.replace(r, timestamp=f"2026-01-01T00:00:{second:02d}+00:00")
        if status == "ok":
            r = dataclasses.replace(r, status="ok", reason=None, median_ms=1.0)
        out.append(r)
    return out


def write_shards(tmp_path, suite, n=3, drop=0):
    """Shard outputs as a sweep with --shard would write them, each on its own host; `drop` points lost."""
    for i, share in enumerate(partition(suite.points, n)):
        pts = share[:-drop] if (drop and i == 0) else share
        write_rows(tmp_path / f"shard{i}" / suite.name / f"run{i}.parquet", rows_for(suite, pts, f"run{i}",
                                                                                   host=f"node-{i}"))


def test_complete_shards_merge_to_one_row_per_point(tmp_path, suite):
    write_shards(tmp_path, suite)
    report = merge_results([tmp_path], suite)
    assert report.ok, report.problems()
    assert sorted(map(repr, (Point.from_row(r) for r in report.rows))) == sorted(map(repr, suite.points))
    path = write_merged(report, tmp_path / "merged.parquet")
    rows = read_rows(path)
    assert len(rows) == len(suite.points)
    assert {r.host for r in rows} == {"node-0", "node-1", "node-2"}  # each row keeps where it ran


def test_missing_points_are_reported_and_nothing_is_written(tmp_path, suite):
    write_shards(tmp_path, suite, drop=2)
    report = merge_results([tmp_path], suite)
    assert not report.ok and len(report.missing) == 2
    assert merge_results([tmp_path]).ok  # without the suite, gaps cannot be seen
    with pytest.raises(QlabenchError, match="2 point"):
        write_merged(report, tmp_path / "merged.parquet")
    assert not (tmp_path / "merged.parquet").exists()


def test_a_point_measured_twice_is_a_duplicate(tmp_path, suite):
    write_shards(tmp_path, suite)
    again = partition(suite.points, 3)[1][:3]  # shard 1 run a second time, in part
    write_rows(tmp_path / "again" / suite.name / "run9.parquet", rows_for(suite, again, "run9", second=9))
    report = merge_results([tmp_path], suite)
    assert not report.ok
    assert set(report.duplicated) == set(again) and set(report.duplicated.values()) == {2}


def write_replicated_shards(root, suite, run_ids=("run0", "run1"), replicates=3):
    """Two shards of a `--replicates` run: every point has one ok row per replicate, all of one run."""
    for i, (share, run_id) in enumerate(zip(partition(suite.points, 2), run_ids)):
        rows = [dataclasses.replace(r, replicate=k) for k in range(replicates) for r in rows_for(suite, share, run_id)]
        write_rows(root / f"shard{i}" / suite.name / f"{run_id}.parquet", rows)


def test_replicates_of_one_run_are_not_duplicates(tmp_path, suite):
    write_replicated_shards(tmp_path, suite)
    report = merge_results([tmp_path], suite)
    assert report.ok, report.problems()
    assert report.points == len(suite.points) and len(report.rows) == 3 * len(suite.points)
    into = tmp_path / "merged.parquet"
    res = CliRunner().invoke(app, ["merge", str(tmp_path), "--into", str(into), "--suite", SUITE_PATH])
    assert res.exit_code == 0, res.output
    assert sorted(r.replicate for r in read_rows(into)) == sorted(list(range(3)) * len(suite.points))


def test_a_replicated_run_measured_twice_is_a_duplicate(tmp_path, suite):
    write_replicated_shards(tmp_path / "a", suite)
    write_replicated_shards(tmp_path / "b", suite, run_ids=("run2", "run3"))
    report = merge_results([tmp_path], suite)
    assert not report.ok and set(report.duplicated) == set(suite.points)


def test_error_then_ok_after_resume_is_not_a_duplicate(tmp_path, suite):
    pts = suite.points
    write_rows(tmp_path / suite.name / "first.parquet", rows_for(suite, pts[:4], "first", status="error", second=1))
    write_rows(tmp_path / suite.name / "resumed.parquet", rows_for(suite, pts, "resumed", second=2))
    report = merge_results([tmp_path], suite)
    assert report.ok, report.problems()
    assert report.rows_read == len(pts) + 4 and len(report.rows) == len(pts)
    assert report.status_counts == {"ok": len(pts)}


def test_rows_of_points_outside_the_suite_are_unexpected(tmp_path, suite):
    write_shards(tmp_path, suite)
    stranger = suite.points[0].with_(seed=99)
    write_rows(tmp_path / "x" / suite.name / "runx.parquet", rows_for(suite, [stranger], "runx"))
    report = merge_results([tmp_path], suite)
    assert report.unexpected == [stranger] and not report.ok


def test_cli_merge_exit_codes(tmp_path, suite):
    runner = CliRunner()
    write_shards(tmp_path / "good", suite)
    into = tmp_path / "merged.parquet"
    res = runner.invoke(app, ["merge", str(tmp_path / "good"), "--into", str(into), "--suite", SUITE_PATH])
    assert res.exit_code == 0, res.output
    assert into.is_file() and len(read_rows(into)) == len(suite.points)

    write_shards(tmp_path / "gap", suite, drop=1)
    into2 = tmp_path / "merged2.parquet"
    res = runner.invoke(app, ["merge", str(tmp_path / "gap"), "--into", str(into2), "--suite", SUITE_PATH])
    assert res.exit_code == 1
    assert "1 point(s) of suite 'tiny-cpu' have no row" in res.output and "missing:" in res.output
    assert not into2.exists()

    res = runner.invoke(app, ["merge", str(tmp_path / "nothing-here"), "--into", str(into2)])
    assert res.exit_code == 2 and "no such file" in res.output


def test_a_folder_given_twice_is_one_measurement(tmp_path, suite):
    write_shards(tmp_path, suite)
    report = merge_results([tmp_path, tmp_path, tmp_path / "shard0"], suite)
    assert report.ok, report.problems()  # was: every point "duplicated"
    assert len(report.files) == 3 and report.rows_read == len(suite.points)


def test_a_row_that_is_no_row_names_its_file(tmp_path, suite):
    write_shards(tmp_path, suite)
    f = next((tmp_path / "shard1").rglob("*.parquet"))
    _edit(f, "reason", ["CUDA error: boom"] * len(read_rows(f)))
    with pytest.raises(QlabenchError, match=rf"^{f}: row 1 \(.*\): an ok row carries no reason, but this one has "
                                            r"'CUDA error: boom'"):
        merge_results([tmp_path], suite)


def _edit(f, column, values):
    """Rewrite one column of a result file, as a hand edit would (a file can hold what a ResultRow refuses)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pq.read_table(f)
    i = t.column_names.index(column)
    pq.write_table(t.set_column(i, t.schema.field(i), pa.array(values, t.schema.field(i).type)), f)


@pytest.mark.parametrize("median", [-1.0, 0.0])
def test_an_ok_row_without_a_positive_time_is_refused_naming_its_file(tmp_path, suite, median):
    write_shards(tmp_path, suite)
    f = next((tmp_path / "shard1").rglob("*.parquet"))
    _edit(f, "median_ms", [median] + [1.0] * (len(read_rows(f)) - 1))
    with pytest.raises(QlabenchError, match=rf"^{f}: row 1 .*an ok row needs a positive, finite median_ms"):
        merge_results([tmp_path], suite)  # was: merged, and written


def test_an_ok_row_the_views_would_not_believe_is_not_merged(tmp_path, suite):
    write_shards(tmp_path, suite)
    f = next((tmp_path / "shard1").rglob("*.parquet"))
    _edit(f, "median_ms", [1e29] + [1.0] * (len(read_rows(f)) - 1))  # over an hour a call
    into = tmp_path / "m.parquet"
    res = CliRunner().invoke(app, ["merge", str(tmp_path), "--into", str(into), "--suite", SUITE_PATH])
    assert res.exit_code == 1 and not into.exists()
    assert "1 ok row(s) cannot be believed" in res.output and "over an hour for one call" in res.output
    assert f"not believed: {f}: " in res.output.replace("\n", "")
