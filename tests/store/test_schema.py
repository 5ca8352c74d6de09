"""Result rows, the versioned parquet schema, and atomic reading/writing of result files."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import fields

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from qlabench.store import files as store
from qlabench.core.errors import StoreError
from qlabench.core.result import ResultRow, row_fields
from qlabench.store.schema import COLUMNS, METADATA_KEY, SCHEMA_VERSION, arrow_schema

# -- rows -------------------------------------------------------------------------------------------


def test_row_invariants(make_row):
    with pytest.raises(ValueError, match="finite median_ms"):
        make_row(median_ms=None)
    with pytest.raises(ValueError, match="finite median_ms"):
        make_row(median_ms=float("nan"))
    with pytest.raises(ValueError, match="no reason"):
        make_row(reason="why?")
    for status in ("incorrect", "skipped", "error"):
        assert make_row(status=status).reason == "a reason"
        with pytest.raises(ValueError, match="needs a reason"):
            make_row(status=status, reason=None)
    with pytest.raises(ValueError, match="unknown status"):
        make_row(status="fine")


def test_every_row_field_is_a_documented_column():
    names = [f.name for f in fields(ResultRow)]
    assert list(COLUMNS) == names
    schema = arrow_schema()
    assert schema.names == names
    for name, _kind, doc in row_fields():
        assert doc, name
        assert schema.field(name).metadata[b"doc"] == doc.encode()


# -- parquet round trip ----------------------------------------------------------------------------


def rows(make_row):
    return [
        make_row(),
        make_row(backend="naive-recurrent", median_ms=2.5, err_o=1e-7, err_ht=2e-7, oracle="naive-recurrent",
                 check_tokens=64, compile_s=0.3, kernels=("k1", "k2"), model="qwen3.5-27b", tp=8),
        make_row(layout="varlen", seqlens=(5, 59), num_seqs=2, status="skipped", reason="backend unavailable: x",
                 timer=None, samples_ms=(), n_samples=None),
        make_row(status="error", reason="RuntimeError: boom", initial_state=False, device_index=0),
    ]


def test_write_then_read_gives_the_same_rows(tmp_path, make_row):
    original = rows(make_row)
    path = store.write_rows(tmp_path / "suite" / "r.parquet", original, metadata={"run_id": "run-1"})
    assert path.is_file()
    back = store.read_rows(path)
    assert back == original


def test_schema_version_and_metadata_are_in_the_file(tmp_path, make_row):
    path = store.write_rows(tmp_path / "r.parquet", rows(make_row), metadata={"run_id": "abc"})
    meta = pq.read_schema(path).metadata
    assert meta[METADATA_KEY] == str(SCHEMA_VERSION).encode()
    assert meta[b"qlabench.run_id"] == b"abc"


def test_atomic_write_leaves_no_temp_file(tmp_path, make_row):
    store.write_rows(tmp_path / "r.parquet", rows(make_row))
    assert [p.name for p in tmp_path.iterdir()] == ["r.parquet"]


def test_failed_write_leaves_the_old_file_and_no_temp_file(tmp_path, make_row, monkeypatch):
    path = store.write_rows(tmp_path / "r.parquet", rows(make_row)[:1])

    def broken(table, where, **kw):
        with open(where, "wb") as f:
            f.write(b"PAR1 partial")
        raise OSError("disk full")

    monkeypatch.setattr(store.pq, "write_table", broken)
    with pytest.raises(OSError, match="disk full"):
        store.write_rows(path, rows(make_row))
    assert [p.name for p in tmp_path.iterdir()] == ["r.parquet"]
    monkeypatch.undo()
    assert len(store.read_rows(path)) == 1


def test_file_without_the_version_is_rejected(tmp_path):
    path = tmp_path / "foreign.parquet"
    pq.write_table(pa.table({"backend": ["x"]}), path)
    with pytest.raises(StoreError, match="not a qlabench results file"):
        store.read_rows(path)


def test_newer_schema_version_is_rejected(tmp_path, make_row):
    table = store.rows_to_table(rows(make_row))
    newer = table.replace_schema_metadata({METADATA_KEY: str(SCHEMA_VERSION + 1).encode()})
    path = tmp_path / "future.parquet"
    pq.write_table(newer, path)
    with pytest.raises(StoreError, match=f"schema version {SCHEMA_VERSION + 1} is newer.*upgrade qlabench"):
        store.read_results([path])


def test_missing_columns_read_as_null(tmp_path, make_row):
    table = store.rows_to_table(rows(make_row)[:1]).drop_columns(["sm_coverage", "extra_json"])
    path = tmp_path / "older.parquet"
    pq.write_table(table, path)
    (row,) = store.read_rows(path)
    assert row.sm_coverage is None and row.extra_json is None
    assert row.median_ms == 1.1


def test_not_parquet_is_a_store_error(tmp_path):
    path = tmp_path / "junk.parquet"
    path.write_text("not parquet")
    with pytest.raises(StoreError, match="cannot read parquet"):
        store.read_rows(path)


# -- folders and queries ----------------------------------------------------------------------------


def test_read_results_walks_folders_and_skips_hidden_files(tmp_path, make_row):
    store.write_rows(store.run_path(tmp_path, "a", "r1"), rows(make_row)[:2])
    store.write_rows(store.run_path(tmp_path, "b", "r2"), rows(make_row)[2:])
    (tmp_path / "a" / ".r3.tmp.parquet").write_text("half-written")
    df = store.read_results([tmp_path])
    assert len(df) == 4
    assert list(df.columns) == list(COLUMNS)
    assert sorted(df["status"]) == ["error", "ok", "ok", "skipped"]


def test_a_suite_folder_named_like_a_parquet_file_is_read_as_a_folder(tmp_path, make_row):
    from typer.testing import CliRunner

    from qlabench.cli import app

    store.write_rows(store.run_path(tmp_path, "t.parquet", "r1"), rows(make_row))
    assert store.result_files([tmp_path]) == [store.run_path(tmp_path, "t.parquet", "r1")]
    assert len(store.read_results([tmp_path])) == len(rows(make_row))
    res = CliRunner().invoke(app, ["show", str(tmp_path), "--format", "csv"])
    assert res.exit_code == 0, res.output


def test_read_results_errors(tmp_path):
    with pytest.raises(StoreError, match="no such file"):
        store.read_results([tmp_path / "absent"])
    with pytest.raises(StoreError, match="no result files"):
        store.read_results([tmp_path])


def test_latest_per_point_keeps_the_newest_row(tmp_path, make_row):
    old = [make_row(run_id="old", timestamp="2025-01-01T00:00:00+00:00", median_ms=5.0),
           make_row(run_id="old", timestamp="2025-01-01T00:00:00+00:00", seed=1)]
    new = [make_row(run_id="new", timestamp="2025-02-01T00:00:00+00:00", median_ms=3.0)]
    store.write_rows(tmp_path / "old.parquet", old)
    store.write_rows(tmp_path / "new.parquet", new)
    df = store.latest_per_point(store.read_results([tmp_path]))
    assert len(df) == 2
    seed0 = df[df["seed"] == 0].iloc[0]
    assert (seed0["run_id"], seed0["median_ms"]) == ("new", 3.0)
    assert df[df["seed"] == 1].iloc[0]["run_id"] == "old"


def test_data_model_does_not_import_torch():
    code = ("import sys, qlabench.core.point, qlabench.core.result, qlabench.store.schema, qlabench.core.spec, qlabench.store.files, "
            "qlabench.core.models, qlabench.analyze.kit.speedups, qlabench.analyze.plot.speedups; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
