"""SM utilisation from launch shapes: the per-kernel breakdown of one call and its `sm_coverage`.

Input is the Kineto kernel list of one call (profiling.KernelEvent). A kernel whose grid has fewer
blocks than the GPU has SMs leaves SMs idle for its whole duration, whatever its occupancy: FLA's
state recurrence `chunk_gated_delta_rule_fwd_kernel_h*` launches cdiv(V, BV) * N * h_v blocks, 16 or
32 at TP8 with one sequence, on a 132-SM H200. `sm_coverage` weights each kernel's share of SMs
given a block by its duration. Definitions and their limits: docs/METRICS.md.

Also here: the kernels table (one parquet row per kernel launch), linked to its result row by
run_id and a point key string that reads the same from a Point and from a results DataFrame.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import pandas as pd
import pyarrow as pa

from .frames import KEY_COLUMNS, get_field, key_of, key_series
from .profiling import KernelEvent



# -- per-kernel quantities ----------------------------------------------------------------------
def event_blocks(ev: KernelEvent, num_sms: int) -> int | None:
    """Blocks of a launch: from its grid, else from Kineto's `blocks per SM` x SM count, else None."""
    if ev.blocks is not None:
        return ev.blocks
    if ev.blocks_per_sm is not None:
        return round(ev.blocks_per_sm * num_sms)
    return None


def coverage(blocks: int, num_sms: int) -> float:
    """Fraction of SMs that get at least one block: min(1, blocks / num_sms)."""
    return min(1.0, blocks / num_sms)


def wave_efficiency(blocks: int, num_sms: int) -> float:
    """Fraction of SM-waves doing work, one block in flight per SM: blocks / (ceil(blocks/num_sms) num_sms).

    Equals `coverage` below one wave; above it, charges the idle SMs of the last, partial wave
    (133 blocks on 132 SMs run as 2 waves, the second with one busy SM: 133/264).
    """
    if blocks <= 0:
        return 0.0
    return blocks / (math.ceil(blocks / num_sms) * num_sms)


def _check_sms(num_sms: int) -> None:
    if num_sms < 1:
        raise ValueError(f"num_sms must be positive, got {num_sms}")


def kernel_breakdown(events: Sequence[KernelEvent], num_sms: int) -> list[dict]:
    """One dict per launch, in launch order: name, dur_us, time_frac, grid, block, blocks,
    blocks_per_sm, waves (blocks / num_sms), coverage and wave_eff (None where blocks are unknown)."""
    _check_sms(num_sms)
    total = sum(e.dur_us for e in events)
    rows = []
    for i, e in enumerate(events):
        b = event_blocks(e, num_sms)
        rows.append({
            "index": i, "name": e.name, "dur_us": e.dur_us,
            "time_frac": e.dur_us / total if total > 0 else None,
            "grid": e.grid, "block": e.block, "blocks": b,
            "blocks_per_sm": e.blocks_per_sm if e.blocks_per_sm is not None else (b / num_sms if b is not None else None),
            "waves": b / num_sms if b is not None else None,
            "coverage": coverage(b, num_sms) if b is not None else None,
            "wave_eff": wave_efficiency(b, num_sms) if b is not None else None,
        })
    return rows


# -- whole-call summaries -----------------------------------------------------------------------
def _time_weighted(events: Iterable[KernelEvent], num_sms: int, per_kernel) -> float | None:
    _check_sms(num_sms)
    num = den = 0.0
    for e in events:
        b = event_blocks(e, num_sms)
        if b is None or e.dur_us <= 0:
            continue  # a launch of unknown shape says nothing about coverage; leave it out of both sums
        num += e.dur_us * per_kernel(b, num_sms)
        den += e.dur_us
    return num / den if den > 0 else None


def sm_coverage(events: Iterable[KernelEvent], num_sms: int) -> float | None:
    """sum_k dur_k * min(1, blocks_k / num_sms) / sum_k dur_k over the call's kernels (None if none)."""
    return _time_weighted(events, num_sms, coverage)


def sm_coverage_waves(events: Iterable[KernelEvent], num_sms: int) -> float | None:
    """The wave-aware refinement: as sm_coverage with each kernel's `wave_efficiency` as its weight."""
    return _time_weighted(events, num_sms, wave_efficiency)


def low_coverage_kernels(events: Sequence[KernelEvent], num_sms: int, below: float = 1.0) -> list[dict]:
    """Breakdown rows of launches that leave SMs idle (coverage < `below`), longest first."""
    rows = [r for r in kernel_breakdown(events, num_sms) if r["coverage"] is not None and r["coverage"] < below]
    return sorted(rows, key=lambda r: -r["dur_us"])


# -- the kernels table --------------------------------------------------------------------------
def point_key(row) -> str:
    """Key string of a Point, ResultRow or mapping over KEY_COLUMNS (backend + workload axes)."""
    return key_of(row)


def row_keys(df: pd.DataFrame) -> pd.Series:
    """`point_key` of every row of a results DataFrame: join with a kernels table on (run_id, point_key)."""
    if df.empty:
        return pd.Series([], dtype=object, index=df.index)
    return key_series(df, KEY_COLUMNS)


KERNELS_SCHEMA = pa.schema([
    pa.field("run_id", pa.string()),
    pa.field("backend", pa.string()),
    pa.field("mode", pa.string()),
    pa.field("point_key", pa.string()),
    pa.field("kernel_index", pa.int64()),
    pa.field("name", pa.string()),
    pa.field("dur_us", pa.float64()),
    pa.field("grid_x", pa.int64()), pa.field("grid_y", pa.int64()), pa.field("grid_z", pa.int64()),
    pa.field("block_x", pa.int64()), pa.field("block_y", pa.int64()), pa.field("block_z", pa.int64()),
    pa.field("blocks", pa.int64()),
    pa.field("blocks_per_sm", pa.float64()),
], metadata={b"qlabench.kernels_version": b"1"})


def kernels_table(run_id: str, row, events: Sequence[KernelEvent]) -> pa.Table:
    """One row per kernel launch of `row` (a Point, ResultRow or mapping with the key columns)."""
    key, backend, mode = point_key(row), get_field(row, "backend"), get_field(row, "mode")
    recs = []
    for i, e in enumerate(events):
        g = e.grid or (None, None, None)
        b = e.block or (None, None, None)
        recs.append({
            "run_id": run_id, "backend": backend, "mode": mode, "point_key": key, "kernel_index": i,
            "name": e.name, "dur_us": e.dur_us, "grid_x": g[0], "grid_y": g[1], "grid_z": g[2],
            "block_x": b[0], "block_y": b[1], "block_z": b[2], "blocks": e.blocks,
            "blocks_per_sm": e.blocks_per_sm,
        })
    return pa.Table.from_pylist(recs, schema=KERNELS_SCHEMA)


def events_from_table(df: pd.DataFrame) -> list[KernelEvent]:
    """KernelEvents back from kernels-table rows (of one call), in kernel_index order."""

    def triple(r, p):
        vals = [r[f"{p}_{a}"] for a in "xyz"]
        return None if any(v is None or pd.isna(v) for v in vals) else tuple(int(v) for v in vals)

    out = []
    for _, r in df.sort_values("kernel_index").iterrows():
        bps = r["blocks_per_sm"]
        out.append(KernelEvent(name=r["name"], dur_us=float(r["dur_us"]), grid=triple(r, "grid"),
                               block=triple(r, "block"), blocks_per_sm=None if pd.isna(bps) else float(bps)))
    return out
