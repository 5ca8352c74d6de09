"""SM utilisation from launch shapes: the per-kernel breakdown of one call and its `sm_coverage`.

Input is the Kineto kernel list of one call (`qlabench.core.kernel_event.KernelEvent`). Pure Python. A kernel whose grid has fewer
blocks than the GPU has SMs leaves SMs idle for its whole duration, whatever its occupancy: FLA's
state recurrence `chunk_gated_delta_rule_fwd_kernel_h*` launches cdiv(V, BV) * N * h_v blocks, 16 or
32 at TP8 with one sequence, on a 132-SM H200. `sm_coverage` weights each kernel's share of SMs
given a block by its duration. Definitions and their limits: docs/METRICS.md.

The kernels table on disk (one parquet row per launch) is `qlabench.store.kernels`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from qlabench.core.errors import MeasureError
from qlabench.core.kernel_event import KernelEvent


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
        raise MeasureError(f"num_sms must be positive, got {num_sms}")


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
