"""Result files name their suite relative to the repository (else by name), never by this machine's
absolute path; derived tables marked as such are passed over by folder reads."""

from __future__ import annotations

import pandas as pd
import pyarrow.parquet as pq

from qlabench.core.spec import SUITES_DIR
from qlabench.store import files as store


def _meta(path) -> dict:
    return {k.decode(): v.decode() for k, v in (pq.read_schema(path).metadata or {}).items()}


def test_a_run_records_a_suite_inside_the_repository_relative_to_it(tmp_path, make_row):
    suite = SUITES_DIR / "tiny.toml"  # an absolute path, as `--suite qlabench/suites/tiny.toml` resolves
    w = store.PartWriter(tmp_path, "tiny", "r1", metadata={"suite_path": str(suite), "run_id": "r1"})
    w.write([make_row()])
    final = w.compact()
    assert _meta(final)["qlabench.suite_path"] == "qlabench/suites/tiny.toml"


def test_a_suite_outside_the_repository_is_recorded_by_its_name(tmp_path, make_row):
    path = store.write_rows(tmp_path / "r.parquet", [make_row()],
                            metadata={"suite_path": str(tmp_path / "deep" / "mine.toml")})
    assert _meta(path)["qlabench.suite_path"] == "mine.toml"


def test_merged_parts_are_named_by_run_folder_and_file(tmp_path, make_row):
    parts = ",".join(str(tmp_path / "suite" / "run-7" / f"part-0000{i}.parquet") for i in range(2))
    path = store.write_rows(tmp_path / "m.parquet", [make_row()], metadata={"merged_from": parts})
    assert _meta(path)["qlabench.merged_from"] == "run-7/part-00000.parquet,run-7/part-00001.parquet"


def test_a_folder_read_passes_over_a_marked_derived_table(tmp_path, make_row):
    store.write_rows(tmp_path / "run.parquet", [make_row()])
    store.write_frame(tmp_path / "medians.parquet", pd.DataFrame({"point": ["p"], "median_ms": [1.0]}),
                      table="selfbench-medians")
    assert [f.name for f in store.result_files([tmp_path])] == ["run.parquet"]
    assert len(store.read_results([tmp_path])) == 1
    assert pd.read_parquet(tmp_path / "medians.parquet")["point"].tolist() == ["p"]  # still a plain table
