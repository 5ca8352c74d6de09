"""Schema 8 (store/schema.py): every row carries one version record (`versions`); a file written before it has the
record derived from its version columns when read, whole or projected, and an engine backend's row gets its
engine's name and version where it named qlabench's."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from qlabench.core.versions import versions_of
from qlabench.store import files as store
from qlabench.store.files import read_results, read_rows, write_rows
from qlabench.store.schema import METADATA_KEY, SCHEMA_VERSION

STACK = dict(torch_version="2.11.0", triton_version="3.6.0", tilelang_version="0.1.15", fla_version="0.6.0",
             flash_qla_version="0.1.3", qlabench_version="0.1.0")


def v7_file(path, rows):
    """A results file as schema 7 wrote it: no `versions` column."""
    table = store.rows_to_table(rows).drop_columns(["versions"]).replace_schema_metadata({METADATA_KEY: b"7"})
    pq.write_table(table, path)
    return path


def old_rows(make_row):
    engine = json.dumps({"engine": {"engine": "vllm", "version": "0.33.0", "from": "kernel site"}})
    return [make_row(backend="flash_qla", backend_dist="flash-qla", backend_version="0.1.3", **STACK),
            make_row(backend="fla", backend_dist="fla-core", backend_version="0.6.0", **STACK),
            make_row(backend="vllm-decode", mode="decode", backend_dist="qlabench", backend_version="0.1.0",
                     extra_json=engine, **STACK),
            make_row(backend="their-kernel", backend_dist="their-dist", backend_version="2.0",
                     backend_git_sha="feed", backend_git_dirty=True, **STACK)]


def test_the_schema_is_version_8():
    assert SCHEMA_VERSION == 8


def test_an_older_file_reads_with_each_rows_record_derived(tmp_path, make_row):
    df = read_results([v7_file(tmp_path / "r.parquet", old_rows(make_row))])
    got = {b: versions_of(r) for b, r in zip(df["backend"], df.to_dict("records"))}
    assert got["flash_qla"] == {"flash-qla": "0.1.3", "tilelang": "0.1.15", "torch": "2.11.0"}
    assert got["fla"] == {"fla": "0.6.0", "triton": "3.6.0", "torch": "2.11.0"}
    assert got["vllm-decode"] == {"vllm": "0.33.0", "triton": "3.6.0", "torch": "2.11.0"}
    assert got["their-kernel"] == {"their-dist": "2.0", "torch": "2.11.0", "their-dist commit": "feed+dirty"}
    # the engine's row named qlabench as its code: now its engine, at the version its kernels came from
    engine = df[df["backend"] == "vllm-decode"].iloc[0]
    assert (engine["backend_dist"], engine["backend_version"]) == ("vllm", "0.33.0")
    assert list(df.loc[df["backend"] == "fla", "backend_dist"]) == ["fla-core"]  # the others as they were


def test_a_projected_read_of_an_older_file_derives_the_record_too(tmp_path, make_row):
    df = read_results([v7_file(tmp_path / "r.parquet", old_rows(make_row))], columns=["versions"])
    assert "fla_version" not in df.columns  # what it is derived from is read, and not handed back
    by = dict(zip(df["backend"], (versions_of(r) for r in df.to_dict("records"))))
    assert by["fla"] == {"fla": "0.6.0", "triton": "3.6.0", "torch": "2.11.0"}


def test_a_record_is_written_and_read_back_in_its_order(tmp_path, make_row):
    rec = {"flash-qla": "0.1.3", "tilelang": "0.1.15", "torch": "2.11.0"}
    path = write_rows(tmp_path / "r.parquet", [make_row(backend="flash_qla", versions=rec)])
    (row,) = read_rows(path)
    assert row.versions == rec and list(row.versions) == list(rec)
    df = read_results([path])
    assert list(versions_of(df.iloc[0]).items()) == list(rec.items())
