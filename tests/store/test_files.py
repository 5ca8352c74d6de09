"""Incremental, atomic results: part files, compaction, and what readers see at every step."""

from __future__ import annotations

import os
import subprocess
import sys

from part_rows import row as _row
from qlabench.store.files import PartWriter, read_results, read_rows, result_files, run_path, write_rows


def test_parts_are_readable_before_compaction_and_compact_into_one_file(tmp_path):
    w = PartWriter(tmp_path, "s", "run1", metadata={"run_id": "run1"})
    for i in range(3):
        w.write([_row("run1", i)])
    assert len(result_files([tmp_path])) == 3
    assert sorted(read_results([tmp_path])["total_tokens"]) == [1, 2, 3]
    path = w.compact()
    assert path == run_path(tmp_path, "s", "run1")
    assert result_files([tmp_path]) == [path]
    assert not (tmp_path / "s" / "run1").exists()
    assert [r.total_tokens for r in read_rows(path)] == [1, 2, 3]


def test_compaction_with_no_parts_writes_nothing(tmp_path):
    assert PartWriter(tmp_path, "s", "empty").compact() is None
    assert not (tmp_path / "s").exists()


def test_a_crash_between_compaction_and_cleanup_duplicates_nothing(tmp_path):
    w = PartWriter(tmp_path, "s", "run1")
    for i in range(2):
        w.write([_row("run1", i)])
    # The compacted file exists but the parts were not removed (killed in between).
    write_rows(run_path(tmp_path, "s", "run1"), [_row("run1", i) for i in range(2)])
    assert len(read_results([tmp_path])) == 2


def test_temp_files_of_an_interrupted_write_are_ignored(tmp_path):
    w = PartWriter(tmp_path, "s", "run1")
    w.write([_row("run1", 0)])
    (w.dir / ".part-00001.abc.tmp").write_bytes(b"PAR1 half a file")
    (w.dir / ".part-00002.parquet").write_bytes(b"not parquet")
    assert len(read_results([tmp_path])) == 1


CONCURRENT_SUITE = """
name = "concurrent"
device = "cpu"
[sweep]
backends = ["fault"]
modes = ["fwd"]
seqlen = [8, 12, 16]
heads = [{ h_qk = 1, h_v = 1 }]
K = 8
V = [16, 17]
dtype = "float32"
[timing]
timer = "wall"
warmup = 0
min_samples = 2
max_samples = 2
max_time_s = 0.1
target_rel_noise = 0.5
[check]
oracle_max_tokens = 32
"""


def test_two_sweeps_into_one_folder_lose_no_rows(tmp_path):
    suite = tmp_path / "concurrent.toml"
    suite.write_text(CONCURRENT_SUITE)
    out = tmp_path / "results"
    cmd = [sys.executable, "-m", "qlabench", "run", "sweep", "--suite", str(suite), "--out", str(out), "--no-isolate"]
    env = {**os.environ, "COLUMNS": "200"}
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env) for _ in range(2)]
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stdout.read().decode()
    df = read_results([out])
    assert df["run_id"].nunique() == 2
    assert df.groupby("run_id").size().tolist() == [6, 6]
    assert len(result_files([out])) == 2


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



def test_run_ids_are_read_from_the_footer_or_the_column_of_a_file_of_several_runs(tmp_path, make_row):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from qlabench.store.files import run_ids

    one = write_rows(tmp_path / "a.parquet", [make_row(run_id="r1"), make_row(run_id="r1", seed=1)])
    two = write_rows(tmp_path / "b.parquet", [make_row(run_id="r1"), make_row(run_id="r2", seed=1)])
    assert run_ids(one) == {"r1"} and run_ids(two) == {"r1", "r2"}
    pq.write_table(pa.table({"x": [1]}), tmp_path / "c.parquet")
    assert run_ids(tmp_path / "c.parquet") == set()  # no run_id column: no run
