"""What every executor of a sweep shares: the job it is given, where its rows go, the protocol it
implements, and the one row it writes for a point it did not measure.

Executors: the worker pool and the in-process executor (pool.py), Ray's actors
(executors/ray_executor.py), and the distributed launcher (distributed/launch.py) for points with
`cp_world_size` set. A sweep hands an executor its points in groups and a `RowSink`; the executor calls
`sink.started(point)` and then exactly one `sink.done(point, row)` per point it starts, whatever happens
to the point. Writing, progress and resume stay in sweep.py.

A row a point's measurement returned is built where it was measured (point_row.PointRow); every other
row (a point skipped before anything started, or whose process died, timed out or never came up) is
built here, by `unmeasured_row`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from qlabench.core.point import Point
from qlabench.core.result import ResultRow, Status, make_row
from qlabench.core.spec import Suite
from qlabench.measure.timing.plan import TimerPlan

DEFAULT_REGISTRY = "qlabench.backends:REGISTRY"
WORKER_ENV = "QLABENCH_WORKER"  # set in every process a sweep starts to measure in (workers, ranks)
START_TIMEOUT_S = 300.0  # imports + CUDA context creation; generous, a cold start on a busy node is slow
REASON_CHARS = 500


class RowSink(Protocol):
    def started(self, point: Point) -> None: ...
    def done(self, point: Point, row: ResultRow) -> None: ...


class Executor(Protocol):
    def run(self, groups: Sequence[Sequence[Point]], sink: RowSink, should_stop: Callable[[], bool]) -> None:
        """Measure the groups' points, group by group in the order given; start no new point once
        `should_stop()` is true. A group is what one worker takes whole (a compile group), or, for the
        distributed launcher, points kept in the suite's order."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class WorkerJob:
    """What every worker of one sweep needs to build its MeasureContext: plain data, no backend objects."""

    suite: Suite
    run_id: str
    timer: TimerPlan  # resolved once, by the sweep
    check: bool
    registry: str = DEFAULT_REGISTRY  # "module:attribute" of the backend registry, imported in the worker
    # Time limits per worker call; None (the default) takes the suite's [run] table (core/spec.py RunSpec).
    point_timeout_s: float | None = None
    compile_timeout_s: float | None = None
    start_timeout_s: float = START_TIMEOUT_S

    def __post_init__(self) -> None:
        for k in ("point_timeout_s", "compile_timeout_s"):
            if getattr(self, k) is None:
                object.__setattr__(self, k, getattr(self.suite.run, k))

    def point_limit(self, first_of_group: bool) -> tuple[float, str]:
        """The time limit of a point's call and its name in a timeout's reason: the first point of a compile
        group in a process (or launch) includes the JIT compile."""
        if first_of_group:
            return self.compile_timeout_s, "run.compile_timeout_s: first point of a compile group"
        return self.point_timeout_s, "run.point_timeout_s"


def point_to_dict(p: Point) -> dict:
    """A point as it travels to a worker or a rank (pickled or sent as plain data)."""
    return dataclasses.asdict(p)


def unmeasured_row(p: Point, job: WorkerJob, env: dict, reason: str, status: Status = Status.ERROR) -> ResultRow:
    """The row of a point that no measurement answered for: `error` when its process died, timed out or
    failed to start; `skipped` when it could not run here at all. `env`: the environment fields of the
    process that should have measured it, else the driver's."""
    return make_row(p, run_id=job.run_id, suite=job.suite.name, env=env, status=status, reason=reason[:REASON_CHARS])


__all__ = ["DEFAULT_REGISTRY", "START_TIMEOUT_S", "WORKER_ENV", "Executor", "RowSink", "WorkerJob", "point_to_dict",
           "unmeasured_row"]
