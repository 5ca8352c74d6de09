"""sm_coverage math on synthetic kernel lists, the per-kernel breakdown, and the kernels table on disk."""

from __future__ import annotations

import math

import pandas as pd
import pyarrow as pa
import pytest

from qlabench.store.kernels import kernels_path, read_kernels, write_kernels
from qlabench.core.point import Point
from qlabench.core.kernel_event import KernelEvent
from qlabench.core.sm_coverage import (
    coverage,
    event_blocks,
    kernel_breakdown,
    sm_coverage,
    sm_coverage_waves,
    wave_efficiency,
)
from qlabench.store.kernels import events_from_table, kernels_table, row_keys
from qlabench.store.keys import key_of

H200_SMS = 132


def ev(name, dur_us, grid, block=(128, 1, 1), bps="auto"):
    blocks = grid[0] * grid[1] * grid[2] if grid else None
    if bps == "auto":
        bps = blocks / H200_SMS if blocks is not None else None
    return KernelEvent(name=name, dur_us=dur_us, grid=grid, block=block, blocks_per_sm=bps)


def fla_forward_tp8(BV: int, T: int = 8192, N: int = 1, h_v: int = 8, V: int = 128):
    """FLA's chunk forward kernels at TP8 as Kineto reports them (grids from fla-core 0.6's launchers)."""
    NT = T // 64
    return [
        ev("chunk_local_cumsum_scalar_kernel", 5.0, (NT, h_v, 1)),
        ev("chunk_gated_delta_rule_fwd_kkt_solve_kernel", 30.0, (NT, h_v, 1)),
        ev("recompute_w_u_fwd_kernel", 25.0, (NT, h_v, 1)),
        # the state recurrence: one block per (V tile, sequence, value head), sequential over chunks
        ev("chunk_gated_delta_rule_fwd_kernel_h_blockdim64", 200.0, (math.ceil(V / BV), N * h_v, 1)),
        ev("chunk_fwd_kernel_o", 40.0, (math.ceil(V / BV), NT, h_v)),
    ]


@pytest.mark.parametrize("BV, blocks", [(64, 16), (32, 32)])
def test_fla_state_recurrence_leaves_most_h200_sms_idle(BV, blocks):
    events = fla_forward_tp8(BV)
    rows = {r["name"]: r for r in kernel_breakdown(events, H200_SMS)}
    h = rows["chunk_gated_delta_rule_fwd_kernel_h_blockdim64"]
    assert h["blocks"] == math.ceil(128 / BV) * 1 * 8 == blocks
    assert h["blocks"] < H200_SMS
    assert h["coverage"] == pytest.approx(blocks / H200_SMS)
    # every other kernel fills the GPU
    assert all(r["coverage"] == 1.0 for n, r in rows.items() if n != h["name"])
    # the whole call: time-weighted, the long under-filled kernel dominates
    expected = (5 + 30 + 25 + 40 + 200 * blocks / H200_SMS) / 300
    assert sm_coverage(events, H200_SMS) == pytest.approx(expected)
    assert sm_coverage(events, H200_SMS) < 0.5


def test_coverage_is_one_for_a_full_gpu_and_falls_with_fewer_blocks():
    assert sm_coverage([ev("a", 10.0, (132, 1, 1))], H200_SMS) == 1.0
    assert sm_coverage([ev("a", 10.0, (1000, 1, 1))], H200_SMS) == 1.0
    assert sm_coverage([ev("a", 10.0, (66, 1, 1))], H200_SMS) == pytest.approx(0.5)
    # equal-length kernels at 1.0 and 0.5 average to 0.75; a 3x longer 0.5 kernel pulls it to 0.625
    assert sm_coverage([ev("a", 10.0, (132, 1, 1)), ev("b", 10.0, (66, 1, 1))], H200_SMS) == pytest.approx(0.75)
    assert sm_coverage([ev("a", 10.0, (132, 1, 1)), ev("b", 30.0, (66, 1, 1))], H200_SMS) == pytest.approx(0.625)


def test_wave_efficiency_charges_the_partial_last_wave():
    assert wave_efficiency(132, H200_SMS) == 1.0
    assert wave_efficiency(133, H200_SMS) == pytest.approx(133 / 264)
    assert wave_efficiency(66, H200_SMS) == coverage(66, H200_SMS) == pytest.approx(0.5)
    assert wave_efficiency(1024, H200_SMS) == pytest.approx(1024 / (8 * 132))
    events = fla_forward_tp8(64)
    expected = ((5 + 30 + 25) * 1024 / 1056 + 40 * 2048 / 2112 + 200 * 16 / 132) / 300
    assert sm_coverage_waves(events, H200_SMS) == pytest.approx(expected)
    assert sm_coverage_waves(events, H200_SMS) < sm_coverage(events, H200_SMS)


def test_unknown_shapes_fall_back_to_blocks_per_sm_or_are_left_out():
    from_bps = KernelEvent("a", 10.0, grid=None, block=None, blocks_per_sm=0.5)
    assert event_blocks(from_bps, H200_SMS) == 66
    unknown = KernelEvent("b", 90.0, grid=None, block=None, blocks_per_sm=None)
    # the unknown launch is in neither sum: coverage is that of the known one alone
    assert sm_coverage([from_bps, unknown], H200_SMS) == pytest.approx(0.5)
    assert sm_coverage([unknown], H200_SMS) is None
    assert sm_coverage([], H200_SMS) is None
    row = kernel_breakdown([unknown], H200_SMS)[0]
    assert row["blocks"] is None and row["coverage"] is None and row["time_frac"] == 1.0


def test_num_sms_must_be_positive():
    with pytest.raises(ValueError):
        sm_coverage(fla_forward_tp8(64), 0)


def test_breakdown_fields():
    rows = kernel_breakdown(fla_forward_tp8(64), H200_SMS)
    assert [r["index"] for r in rows] == list(range(5))
    assert sum(r["time_frac"] for r in rows) == pytest.approx(1.0)
    o = rows[4]
    assert o["blocks"] == 2048 and o["waves"] == pytest.approx(2048 / 132)
    assert o["grid"] == (2, 128, 8) and o["block"] == (128, 1, 1)


# -- kernels table --------------------------------------------------------------------------------
def _point(**kw) -> Point:
    base = dict(backend="fla", mode="fwd", layout="dense", batch=1, seqlens=(8192,), h_qk=2, h_v=8,
                model="qwen3-next", tp=8)
    base.update(kw)
    return Point(**base)


def _results_frame(points) -> pd.DataFrame:
    """A results DataFrame as read_results returns it (arrow -> pandas: nullable ints become floats)."""
    from dataclasses import asdict

    from qlabench.core.identity import key_axes

    recs = [{k: asdict(p)[k] for k in key_axes()} for p in points]
    schema = pa.schema([("backend", pa.string()), ("mode", pa.string()), ("model", pa.string()),
                        ("tp", pa.int64()), ("layout", pa.string()), ("batch", pa.int64()),
                        ("seqlens", pa.list_(pa.int64())), ("h_qk", pa.int64()), ("h_v", pa.int64()),
                        ("K", pa.int64()), ("V", pa.int64()), ("dtype", pa.string()), ("gate", pa.string()),
                        ("seed", pa.int64()), ("initial_state", pa.bool_())])
    return pa.Table.from_pylist(recs, schema=schema).to_pandas()


def test_point_key_matches_a_results_frame_even_with_null_tp():
    pts = [_point(), _point(model=None, tp=None, h_qk=4, h_v=4), _point(layout="varlen", seqlens=(100, 900))]
    df = _results_frame(pts)
    assert df["tp"].dtype == float  # the trap: pandas reads tp 8 back as 8.0
    assert list(row_keys(df)) == [key_of(p) for p in pts]
    assert len(set(row_keys(df))) == 3


def test_kernels_table_round_trip(tmp_path):
    p = _point()
    events = fla_forward_tp8(64) + [KernelEvent("memset", 1.0, grid=None, block=None, blocks_per_sm=None)]
    t = kernels_table("run-1", p, events)
    assert t.num_rows == 6
    results = tmp_path / "suite" / "run-1.parquet"
    path = write_kernels(kernels_path(results), [t, kernels_table("run-1", p.with_(mode="fwd_bwd"), events[:2])])
    assert path.name == "run-1.kernels.parquet"
    assert not list(path.parent.glob(".*"))  # no temp file left behind
    df = read_kernels([tmp_path])
    assert len(df) == 8
    mine = df[(df["run_id"] == "run-1") & (df["point_key"] == key_of(p)) & (df["mode"] == "fwd")]
    back = events_from_table(mine)
    assert back == events  # names, durations, grids, blocks and blocks_per_sm survive, in order
    assert sm_coverage(back, H200_SMS) == sm_coverage(events, H200_SMS)


def test_read_kernels_of_a_results_file_and_empty(tmp_path):
    results = tmp_path / "run-2.parquet"
    assert read_kernels([results.parent]).empty
    write_kernels(kernels_path(results), [kernels_table("run-2", _point(), fla_forward_tp8(32))])
    results.write_bytes(b"")  # only its name matters: the kernels file is found beside it
    assert len(read_kernels([results])) == 5


def test_results_readers_skip_the_kernels_file_beside_a_run(tmp_path, make_row):
    from qlabench.store.files import read_results, run_path, write_rows

    row = make_row(backend="fla", model="qwen3-next", tp=8, h_qk=2, h_v=8, seqlens=(8192,), total_tokens=8192)
    results = write_rows(run_path(tmp_path, "suite", "run-1"), [row])
    write_kernels(kernels_path(results), [kernels_table("run-1", row, fla_forward_tp8(64))])
    df = read_results([tmp_path])
    assert len(df) == 1
    k = read_kernels([tmp_path])
    linked = k.merge(df.assign(point_key=row_keys(df))[["run_id", "point_key", "median_ms"]],
                     on=["run_id", "point_key"])
    assert len(linked) == 5  # every kernel finds its row
