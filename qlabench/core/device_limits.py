"""What no device can beat: the fastest a call of a point could possibly run, from the FLOP and byte models
(core/flops.py `work`) and the device's datasheet peaks. Pure Python, no torch.

A stored time below that floor was not measured (an edited file, a kernel that skipped its work, a timer
that read nothing); a time above `SLOWEST_MS` is no call of a GDN kernel either. The evidence layer refuses
both (analyze/evidence/belief.py), so no view ranks and no gate passes them.

The floor is deliberately loose, a physical bound and not a performance model: the work is counted at the
device's datasheet peaks (dense bf16 tensor-core FLOP/s, HBM bytes/s), which no kernel reaches, divided by
`SLACK` (the FLOP model counts dense tiles a kernel may skip, and a small call's compulsory bytes may stay
in L2 between calls), and by the ranks of a context-parallel point (each device does its share). On the
committed H200 evidence the fastest rows reach 53% of the FLOP peak and 85% of the HBM peak at SLACK 1.
A device the table does not know is bounded by `ANY_DEVICE`, faster than any made.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from qlabench.core.flops import work
from qlabench.core.point import Point


@dataclass(frozen=True)
class DeviceLimits:
    tflops: float  # dense bf16 tensor-core TFLOP/s (datasheet, SXM where there are several)
    hbm_tbs: float  # memory bandwidth, TB/s


# By a name fragment of the device (`device` column, e.g. 'NVIDIA H200'); the longest fragment found wins
# ('H200' before 'H20').
DEVICES: dict[str, DeviceLimits] = {
    "H200": DeviceLimits(989.0, 4.8),
    "H100": DeviceLimits(989.0, 3.35),
    "H800": DeviceLimits(989.0, 3.35),
    "H20": DeviceLimits(148.0, 4.0),
    "GH200": DeviceLimits(989.0, 4.9),
    "A100": DeviceLimits(312.0, 2.04),
    "A800": DeviceLimits(312.0, 2.04),
    "B200": DeviceLimits(2250.0, 8.0),
    "B300": DeviceLimits(2500.0, 8.0),
    "L40S": DeviceLimits(362.0, 0.864),
}
ANY_DEVICE = DeviceLimits(5000.0, 16.0)  # beyond every device the table names
SLACK = 2.0
SLOWEST_MS = 3_600_000.0  # an hour for one call: no GDN call of any size takes that


def limits_of(device: str | None) -> DeviceLimits:
    """The datasheet peaks of a device by its recorded name; ANY_DEVICE when the table does not know it."""
    name = (device or "").upper()
    hits = [k for k in DEVICES if k in name]
    return DEVICES[max(hits, key=len)] if hits else ANY_DEVICE


def fastest_ms(point: Point, device: str | None) -> float:
    """The floor of one call of `point` on `device`, in ms: its work at the device's peaks over SLACK, each
    rank of a context-parallel point doing its share."""
    flop, moved = work(point)
    lim = limits_of(device)
    ranks = point.cp_world_size or 1
    seconds = max(flop / (lim.tflops * 1e12), moved / (lim.hbm_tbs * 1e12)) / SLACK / ranks
    return seconds * 1e3


def impossible_time(point: Point, device: str | None, median_ms: float, floor_ms: float | None = None) -> str | None:
    """Why `median_ms` cannot be a time of one call of `point` on `device`; None when it can. `floor_ms`: the
    point's `fastest_ms` when the caller already has it (a table repeats its points)."""
    if not (math.isfinite(median_ms) and median_ms > 0):
        return f"{median_ms!r} ms is not a time"
    if median_ms > SLOWEST_MS:
        return f"{median_ms:g} ms is over an hour for one call"
    floor = fastest_ms(point, device) if floor_ms is None else floor_ms
    if median_ms < floor:
        flop, moved = work(point)
        return (f"{median_ms:.3g} ms is faster than the device allows: {flop:.3g} FLOP and {moved:.3g} bytes take at "
                f"least {floor:.3g} ms at {SLACK:g}x the peaks of {device or 'any device'}")
    return None
