"""Kernel provenance rules and the per-kernel breakdown stored in result rows."""

import json

import pytest

from qlabench.store.kernels import kernels_from_results, read_kernels, write_kernels
from qlabench.core.kernel_event import (
    KernelEvent,
    events_from_row,
    kernel_fields,
    kernels_from_trace,
    provenance_error,
)

QLA = ["tilelang_chunk_local_cumsum_kernel_kernel", "tilelang_fused_chunk_gdr_fwd_kernel_kernel"]
FLA = ["chunk_local_cumsum_scalar_kernel", "chunk_gated_delta_rule_fwd_kernel_h_blockdim64", "chunk_fwd_kernel_o"]


@pytest.mark.parametrize("names,expect,forbid,ok", [
    (QLA, ("tilelang_",), (), True),
    (FLA, ("tilelang_",), (), False),  # a flash_qla row that launched no TileLang kernel
    (FLA, (), ("tilelang_",), True),
    (FLA + QLA[:1], (), ("tilelang_",), False),  # an fla row that was dispatched to FlashQLA
    (FLA + ["kernel_kernel"], (), ("tilelang_",), True),  # FLA's own TileLang dqkwg kernel is FLA
])
def test_provenance_rule(names, expect, forbid, ok):
    why = provenance_error(names, expect, forbid)
    assert (why is None) == ok
    if not ok:
        assert why.startswith("backend provenance mismatch")


def test_kernels_from_chrome_trace_keeps_launch_shape_and_order():
    trace = {"traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "b", "ts": 20, "dur": 3.5,
         "args": {"grid": [16, 1, 1], "block": [128, 1, 1], "blocks per SM": 0.12}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 5, "dur": 1},
        {"ph": "X", "cat": "kernel", "name": "a", "ts": 10, "dur": 7.0, "args": {"grid": [264, 2, 1]}},
    ]}
    evs = kernels_from_trace(json.loads(json.dumps(trace)))
    assert [e.name for e in evs] == ["a", "b"]
    assert evs[0].blocks == 528 and evs[0].blocks_per_sm is None
    assert evs[1].grid == (16, 1, 1) and evs[1].blocks_per_sm == pytest.approx(0.12)


def test_row_breakdown_round_trips_and_becomes_a_kernels_table(tmp_path, make_row):
    events = [KernelEvent("k1", 10.0, (16, 1, 1), (128, 1, 1), 0.12), KernelEvent("k2", 5.0, None, None, None)]
    fields = kernel_fields(events)
    assert events_from_row(fields) == events
    row = make_row(**fields)
    import pandas as pd

    df = pd.DataFrame([row.as_dict()])
    tables = kernels_from_results(df)
    assert len(tables) == 1 and tables[0].num_rows == 2
    path = write_kernels(tmp_path / "k.kernels.parquet", tables)
    k = read_kernels([path])
    assert list(k["name"]) == ["k1", "k2"] and list(k["blocks"].fillna(-1)) == [16, -1]


def test_rows_without_breakdown_give_no_events(make_row):
    assert events_from_row(make_row()) == []
    # Parallel lists of unequal length are not trusted.
    assert events_from_row({"kernels": ["a", "b"], "kernel_dur_us": [1.0], "kernel_grid": ["1,1,1"],
                            "kernel_block": ["1,1,1"], "kernel_blocks_per_sm": [1.0]}) == []


def test_each_kernel_keeps_the_stream_it_ran_on():
    # Kineto's chrome trace names the stream in args (and as the event's tid); a budget's escape check reads it
    trace = {"traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "a", "ts": 1, "dur": 1, "tid": 13, "args": {"stream": 13}},
        {"ph": "X", "cat": "kernel", "name": "b", "ts": 2, "dur": 1, "tid": 7, "args": {}},
        {"ph": "X", "cat": "kernel", "name": "c", "ts": 3, "dur": 1, "args": {}},
    ]}
    assert [e.stream for e in kernels_from_trace(trace)] == [13, 7, None]
