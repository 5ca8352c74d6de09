"""Running a sweep: order the points, measure each (measure.py), report progress, write the results.

The runner is UI-free: progress is reported through an optional `Progress` object the CLI supplies.
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import torch

from . import env as envmod
from .backends import REGISTRY, Backend
from .measure import MeasureContext, run_point
from .point import Point
from .result import ResultRow
from .spec import Suite
from .store import run_path, write_rows


class Progress(Protocol):
    def start(self, total: int) -> None: ...
    def point_started(self, point: Point) -> None: ...
    def point_done(self, row: ResultRow) -> None: ...


@dataclass
class RunResult:
    run_id: str
    path: Path
    rows: list[ResultRow]
    device: str
    wall_s: float


def resolve_device(requested: str | None) -> str:
    if requested in (None, "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {requested!r} asked for, but CUDA is not available here")
    return requested


def order_points(points: Sequence[Point]) -> list[Point]:
    """Group points by compile group (head config, dims, dtype, backend) so each compiles once."""
    first_seen: dict[tuple, int] = {}
    for i, p in enumerate(points):
        first_seen.setdefault(p.compile_group, i)
    return sorted(points, key=lambda p: first_seen[p.compile_group])


def new_run_id() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:6]


def run_sweep(
    suite: Suite,
    out_root: str | Path = "results",
    *,
    device: str | None = None,
    timer: str | None = None,
    check: bool | None = None,
    registry: dict[str, Backend] | None = None,
    progress: Progress | None = None,
    run_id: str | None = None,
) -> RunResult:
    """Run every point of `suite` and write one parquet file; returns its path and rows."""
    t0 = time.perf_counter()
    device = resolve_device(device or suite.device)
    ctx = MeasureContext(
        suite=suite, device=device, env=envmod.capture(device), run_id=run_id or new_run_id(),
        timer_name=timer or suite.timing.timer, registry=registry or REGISTRY,
        check=suite.check.enabled if check is None else check,
    )
    points = order_points(suite.points)
    if progress:
        progress.start(len(points))
    rows = []
    for p in points:
        if progress:
            progress.point_started(p)
        row = run_point(p, ctx)
        rows.append(row)
        if progress:
            progress.point_done(row)
    path = write_rows(run_path(out_root, suite.name, ctx.run_id), rows,
                      metadata={"suite_path": suite.path, "run_id": ctx.run_id})
    return RunResult(ctx.run_id, path, rows, device, time.perf_counter() - t0)


