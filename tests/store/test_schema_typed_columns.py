"""Schema 5: per-phase seconds and autotune choices are typed columns, read back as they were written;
a version-4 file's `extra_json["phases_s"]` moves into the column."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from qlabench.store import files as store
from qlabench.store.schema import METADATA_KEY

CHOICE = {"kernel": "chunk_fwd_kernel_o", "num_warps": 4, "num_stages": 3, "num_ctas": 1,
          "kwargs": {"BK": "64", "BV": "64"}}


def test_phases_and_autotune_read_back_typed(tmp_path, make_row):
    path = store.write_rows(tmp_path / "r.parquet", [make_row(phases_s={"check": 0.5, "inputs": 0.25},
                                                             autotune=[CHOICE])])
    row, = store.read_rows(path)
    assert row.phases_s == {"check": 0.5, "inputs": 0.25}
    assert row.autotune == (CHOICE,)
    df = store.read_results([path])
    assert dict(df["phases_s"][0]) == {"check": 0.5, "inputs": 0.25}  # no JSON to parse


def test_a_version_4_file_has_its_phases_moved_out_of_extra_json(tmp_path, make_row):
    extra = {"calls_per_sample": 1, "phases_s": {"check": 1.5, "first_call": 0.25}}
    rows = [make_row(extra_json=json.dumps(extra)), make_row(seed=1, extra_json=json.dumps({"l2_flush": True})),
            make_row(seed=2)]
    table = store.rows_to_table(rows).drop_columns(["phases_s", "autotune"])
    pq.write_table(table.replace_schema_metadata({METADATA_KEY: b"4"}), tmp_path / "v4.parquet")
    got = store.read_rows(tmp_path / "v4.parquet")
    assert got[0].phases_s == {"check": 1.5, "first_call": 0.25}
    assert json.loads(got[0].extra_json) == {"calls_per_sample": 1}  # one home for the phases
    assert got[1].phases_s is None and json.loads(got[1].extra_json) == {"l2_flush": True}
    assert got[2].phases_s is None and got[2].extra_json is None
    assert all(r.autotune == () for r in got)
