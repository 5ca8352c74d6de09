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

from qlabench.core.errors import DeviceError
from qlabench.core.spec import Suite, load_suite
from qlabench.run.options import InProcess, RunOptions
from qlabench.run import sweep as sweeps  # run_sweep read at call time: the one a caller (or test) installed
from qlabench.run.sweep import RunResult, resolve_device, still_to_run
from qlabench.run.warmup import compiling_points, head_groups, warm_suite, warmup_jobs


@dataclass(frozen=True)
class WarmupPlan:
    """What a warm-up ahead of a sweep will do: `jobs` processes (0: none, `why` says why) over `groups` compile
    groups of the points `only` names (indices into the suite file's points)."""

    jobs: int
    groups: int
    points: int
    only: frozenset[int]
    path: str
    why: str = ""


@dataclass(frozen=True)
class Warmed:
    jobs: int
    groups: int
    failed: int  # groups whose process failed (their points' own rows say why, when the sweep measures them)
    wall_s: float


def plan_warmup(suite: Suite, options: RunOptions, want: bool | None = None, jobs: int | None = None,
                cores: int | None = None, remote: bool = False, out: str | Path | None = None) -> WarmupPlan:
    """The warm-up `warm_then_sweep` runs before `suite`: `want` None lets the host decide (`warmup_jobs`), `jobs`
    sets the processes; `remote`: the points run on other machines (Ray), whose caches a warm-up here misses;
    `out`: where a `resume` finds the points already measured, which need no warm-up."""
    if want is False:
        return WarmupPlan(0, 0, 0, frozenset(), str(suite.path), "--no-warmup")
    if isinstance(options.executor, InProcess) or remote:
        return WarmupPlan(0, 0, 0, frozenset(), str(suite.path), "the points run in this process or elsewhere")
    path = Path(str(suite.path))
    if not path.is_file():
        return WarmupPlan(0, 0, 0, frozenset(), str(path), "the suite has no file the warm-up processes can read")
    requested = options.device or suite.device
    # planned for the device asked for, present or not (a dry run on a host without it); the sweep refuses it
    device = resolve_device(requested) if requested in (None, "auto") else requested
    # the warm-up processes read the file: the points of this (perhaps narrowed) suite by their index there
    whole = load_suite(str(path), max_points=options.max_points)
    todo = list(suite.points)
    if options.resume and out is not None:
        try:
            todo = still_to_run(suite, out, options)
        except DeviceError:  # no such device here: nothing runs, and what was done cannot be told
            pass
    mine = {todo[i] for i in compiling_points(todo, device)}
    only = frozenset(i for i, p in enumerate(whole.points) if p in mine)
    groups = len(head_groups(whole.points, set(only)))
    n = warmup_jobs(groups, want, jobs, cores)
    why = "" if n else ("nothing here compiles" if not groups else "no core to spare for it")
    return WarmupPlan(n, groups, len(only), only, str(path), why)


def warm_then_sweep(suite: Suite, out: str | Path, options: RunOptions, plan: WarmupPlan, progress=None,
                    on_warm_point: Callable[[int, str], None] | None = None,
                    on_warm_group: Callable | None = None, sweep_plan=None) -> tuple[RunResult, Warmed | None]:
    """`plan`'s warm-up (none where its jobs are 0), then `run_sweep(suite, out, options, progress)`, or the
    checked `sweep_plan` (run/plan.py) where the caller made one: the suite's checks then run once."""
    warmed = None
    if plan.jobs:
        t0 = time.perf_counter()
        whole = load_suite(plan.path, max_points=options.max_points)
        device = options.device or suite.device
        results = warm_suite(plan.path, whole, plan.jobs, None if device in (None, "auto") else device,
                             only=set(plan.only), on_done=on_warm_group, on_point=on_warm_point)
        warmed = Warmed(plan.jobs, plan.groups, sum(1 for r in results if r.returncode), time.perf_counter() - t0)
    if sweep_plan is not None:
        return sweeps.run_sweep(sweep_plan, out, progress=progress), warmed
    return sweeps.run_sweep(suite, out, options, progress=progress), warmed
