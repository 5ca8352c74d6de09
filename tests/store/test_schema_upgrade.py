"""Schema version 2: version-1 files read with null gate parameters and the library backends' `bwd` as `bwd_train`."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from qlabench.analyze.compare.match import match_rows
from qlabench.core.point import Point
from qlabench.store import files as store
from qlabench.store.files import read_results
from qlabench.store.keys import key_of, point_key
from qlabench.store.resume import done_keys, remaining
from qlabench.store.schema import METADATA_KEY, SCHEMA_VERSION, V1_TRAIN_BWD_BACKENDS


def v1_file(path, rows):
    """A results file as version 1 wrote it: no gate parameter columns, version 1 in the metadata."""
    table = store.rows_to_table(rows).drop_columns(["gate_zero_frac", "gate_scale"])
    table = table.replace_schema_metadata({METADATA_KEY: b"1"})
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return path


def old_rows(make_row):
    return [
        make_row(backend="flash_qla", mode="bwd", env_fingerprint="fp"),
        make_row(backend="flash_qla-forcecp", mode="bwd", status="error", reason="boom"),
        make_row(backend="fla", mode="bwd"),
        make_row(backend="flash_qla", mode="fwd"),
        make_row(backend="flash_qla", mode="fwd_bwd"),
        make_row(backend="naive-chunk", mode="bwd"),  # autograd: bwd kept its meaning
    ]


def test_every_older_version_has_an_upgrade_step():
    from qlabench.store.schema import _UPGRADES

    assert [v for v, _ in _UPGRADES] == list(range(1, SCHEMA_VERSION))


def test_v3_file_reads_with_null_replicate(tmp_path, make_row):
    table = store.rows_to_table([make_row(), make_row(seed=1)]).drop_columns(["replicate"])
    table = table.replace_schema_metadata({METADATA_KEY: b"3"})
    pq.write_table(table, tmp_path / "v3.parquet")
    rows = store.read_rows(tmp_path / "v3.parquet")
    assert [r.replicate for r in rows] == [None, None]


def test_v1_file_upgrades(tmp_path, make_row):
    path = v1_file(tmp_path / "old.parquet", old_rows(make_row))
    assert "gate_zero_frac" not in pq.read_schema(path).names
    rows = store.read_rows(path)
    assert [(r.backend, r.mode) for r in rows] == [
        ("flash_qla", "bwd_train"), ("flash_qla-forcecp", "bwd_train"), ("fla", "bwd_train"),
        ("flash_qla", "fwd"), ("flash_qla", "fwd_bwd"), ("naive-chunk", "bwd")]
    assert all(r.gate_zero_frac is None and r.gate_scale is None for r in rows)
    assert rows[1].status == "error" and rows[1].reason == "boom"
    df = store.read_results([path])
    assert df["gate_zero_frac"].isna().all() and df["gate_scale"].isna().all()


def test_every_library_backend_with_a_changed_bwd_is_renamed():
    from qlabench.backends import REGISTRY

    for name in V1_TRAIN_BWD_BACKENDS:
        assert name in REGISTRY and "bwd_train" in REGISTRY[name].modes


def test_v2_files_are_not_renamed(tmp_path, make_row):
    rows = [make_row(backend="flash_qla", mode="bwd"), make_row(backend="flash_qla", mode="bwd_train",
                                                                gate_zero_frac=0.5, gate_scale=64.0)]
    path = store.write_rows(tmp_path / "new.parquet", rows)
    assert store.read_rows(path) == rows


def test_an_empty_v1_file_upgrades(tmp_path, make_row):
    path = v1_file(tmp_path / "empty.parquet", [])
    assert store.read_rows(path) == []


def test_upgraded_rows_key_like_points_with_null_gate_params(tmp_path, make_row):
    path = v1_file(tmp_path / "old.parquet", old_rows(make_row))
    df = store.read_results([path])
    p = Point(backend="flash_qla", mode="bwd_train", layout="dense", batch=1, seqlens=(64,), h_qk=2, h_v=4, K=16,
              V=16, dtype="float32")
    assert key_of(df.iloc[0]) == point_key(p.key())
    assert key_of(df.iloc[3]) == point_key(p.with_(mode="fwd").key())


def test_old_and_new_runs_pair_point_by_point(tmp_path, make_row):
    old = v1_file(tmp_path / "old.parquet", [make_row(backend="flash_qla", mode="bwd", median_ms=1.0),
                                              make_row(backend="flash_qla", mode="fwd", median_ms=2.0)])
    new = store.write_rows(tmp_path / "new.parquet", [
        make_row(backend="flash_qla", mode="bwd_train", median_ms=1.01, timestamp="2026-01-01T00:00:00+00:00"),
        make_row(backend="flash_qla", mode="bwd", median_ms=1.5, timestamp="2026-01-01T00:00:00+00:00"),
        make_row(backend="flash_qla", mode="fwd", median_ms=2.01, timestamp="2026-01-01T00:00:00+00:00"),
        make_row(backend="flash_qla", mode="fwd", gate_zero_frac=0.0, median_ms=1.2,
                 timestamp="2026-01-01T00:00:00+00:00"),
    ])
    pairs = match_rows(store.read_results([old]), store.read_results([new]))
    both = [(p.base["mode"], p.head["mode"]) for p in pairs if p.base is not None and p.head is not None]
    assert sorted(both) == [("bwd_train", "bwd_train"), ("fwd", "fwd")]
    head_only = [(p.head["mode"], p.head["gate_zero_frac"]) for p in pairs if p.base is None]
    assert sorted(head_only, key=str) == [("bwd", None), ("fwd", 0.0)]


def test_resume_counts_an_old_ok_row_as_done_for_its_new_point(tmp_path, make_row):
    v1_file(tmp_path / "test" / "old.parquet", [make_row(backend="naive-chunk", mode="fwd", env_fingerprint="fp")])
    p = Point(backend="naive-chunk", mode="fwd", layout="dense", batch=1, seqlens=(64,), h_qk=2, h_v=4, K=16, V=16,
              dtype="float32")
    done = done_keys(tmp_path, "test", "fp")
    assert remaining([p, p.with_(gate_zero_frac=0.5)], done) == [p.with_(gate_zero_frac=0.5)]


def test_compacting_parts_of_mixed_versions(tmp_path, make_row):
    writer = store.PartWriter(tmp_path, "suite", "run")
    writer.write([make_row(backend="flash_qla", mode="bwd_train")])
    v1_file(writer.dir / "part-00001.parquet", [make_row(backend="fla", mode="bwd")])
    writer.n_parts = 2
    final = writer.compact()
    table = pq.read_table(final)
    assert table.schema.metadata[METADATA_KEY] == str(SCHEMA_VERSION).encode()
    assert [r.mode for r in store.read_rows(final)] == ["bwd_train", "bwd_train"]
    assert isinstance(pd.DataFrame(table.to_pylist()), pd.DataFrame)
    assert pa.types.is_float64(table.schema.field("gate_scale").type)


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
    assert SCHEMA_VERSION > 2 and len(pq.read_schema(current).names) > len(v2.column_names) > len(v1.column_names)
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



def test_v5_file_reads_as_sensitivity_not_measured(tmp_path, make_row):
    table = store.rows_to_table([make_row(), make_row(seed=1)]).drop_columns(["calls_sensitivity_ms",
                                                                             "calls_sensitive"])
    table = table.replace_schema_metadata({METADATA_KEY: b"5"})
    pq.write_table(table, tmp_path / "v5.parquet")
    rows = store.read_rows(tmp_path / "v5.parquet")
    assert [(r.calls_sensitivity_ms, r.calls_sensitive) for r in rows] == [(None, None), (None, None)]


def test_a_sensitivity_survives_writing_and_reading(tmp_path, make_row):
    row = make_row(calls_sensitivity_ms={"2": 0.716, "1": 0.76, "64": 0.79}, calls_sensitive=True)
    back = store.read_rows(store.write_rows(tmp_path / "s.parquet", [row]))[0]
    assert back.calls_sensitivity_ms == {"2": 0.716, "1": 0.76, "64": 0.79} and back.calls_sensitive is True
