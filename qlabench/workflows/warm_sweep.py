"""A sweep whose compiles are paid once, in parallel, before its first point is timed: `warm_then_sweep`.

The warm-up is run/warmup.py's (`qlabench warmup`): every compile group of the points whose backend compiles or
tunes (a declaration's `compiles`) runs once, untimed, in a process of its own, several at once where the host
has cores to spare, all into the one kernel cache the sweep's workers read. The sweep then times points whose
kernels are cached: the compiles cost the longest group instead of their sum. Nothing is warmed on a CPU, for
points that compile nothing (the naive backends), in-process or on a Ray cluster (its workers have caches of their
own), or for a suite with no file to hand the warm-up processes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from qlabench.run import sweep as sweeps  # run_plan read at call time: the one a caller (or test) installed
from qlabench.run.plan import SweepPlan
from qlabench.run.sweep import RunResult
from qlabench.run.warmup import warm_suite


@dataclass(frozen=True)
class Warmed:
    jobs: int
    groups: int
    failed: int  # groups whose process failed (their points' own rows say why, when the sweep measures them)
    wall_s: float


def warm_then_sweep(plan: SweepPlan, out: str | Path, progress=None,
                    on_warm_point: Callable[[int, str], None] | None = None,
                    on_warm_group: Callable | None = None) -> tuple[RunResult, Warmed | None]:
    """The plan's warm-up (none where its jobs are 0: `plan_sweep(..., warmup=...)` plans it), then the plan's
    sweep (`run_plan`), with `progress`."""
    warmed = None
    warm = plan.warmup
    if warm.jobs:
        t0 = time.perf_counter()
        results = warm_suite(warm.path, plan.source, warm.jobs, plan.device, only=set(warm.only),
                             on_done=on_warm_group, on_point=on_warm_point)
        warmed = Warmed(warm.jobs, warm.groups, sum(1 for r in results if r.returncode), time.perf_counter() - t0)
    return sweeps.run_plan(plan, out, progress=progress), warmed
