"""Schema 7 (store/schema.py): an older row's timer median becomes its device or eager time, and whether it was
checked at its size is read off what it says it was checked against."""

from __future__ import annotations

import pyarrow as pa

from qlabench.core.result import checked_at_size_of
from qlabench.store.schema import METADATA_KEY, upgrade


def _v6(rows: list[dict]) -> pa.Table:
    t = pa.Table.from_pylist(rows)
    return t.replace_schema_metadata({METADATA_KEY: b"6"})


def test_a_graph_median_is_the_device_time_and_an_events_or_wall_median_the_eager_time():
    t = upgrade(_v6([{"timer": "graph", "median_ms": 0.5, "oracle": "naive-recurrent float32 @256 tokens",
                      "check_tokens": 256, "total_tokens": 32768},
                     {"timer": "events", "median_ms": 3.5, "oracle": "naive-recurrent float32 @256 tokens; naive-chunk "
                      "float32 @32768 tokens", "check_tokens": 256, "total_tokens": 32768},
                     {"timer": "wall", "median_ms": 7.0, "oracle": "naive-recurrent float32 @128 tokens",
                      "check_tokens": 128, "total_tokens": 128}]), "f.parquet")
    assert t.column("device_ms").to_pylist() == [0.5, None, None]
    assert t.column("eager_ms").to_pylist() == [None, 3.5, 7.0]
    assert t.column("host_ms").to_pylist() == [None, None, None]
    assert t.column("checked_at_size").to_pylist() == [False, True, True]


def test_checked_at_size_from_the_tokens_a_row_names():
    assert checked_at_size_of("naive-recurrent float32 @256 tokens", 32768, 256) is False
    assert checked_at_size_of("fp64-full float64 @8192 tokens", 8192, 8192) is True
    assert checked_at_size_of(None, 100, None) is None  # never checked: not known
