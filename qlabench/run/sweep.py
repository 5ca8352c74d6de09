"""Running a sweep: order the points, hand them to an executor, report progress, write the results.

`run_sweep(suite, out, options, progress)`: how it runs is one RunOptions (options.py). The runner is
UI-free: progress is reported through an optional `Progress` object the CLI supplies. Points run in
worker subprocesses by default (pool.py: isolation and time limits); each row is written as it arrives
(store.PartWriter), so a killed sweep keeps what it measured, and a resume skips what an earlier run
already recorded ok (store/resume.py). See docs/ROBUSTNESS.md.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import torch

from qlabench.measure import env as envmod
from qlabench.store import resume as resumemod
from qlabench.backends import REGISTRY
from qlabench.run.executors.local import local_executor
from qlabench.run.options import InProcess, RunOptions
from qlabench.run.phases import TimeBreakdown
from qlabench.run.plan import SweepPlan, check_sizes, device_memory_bytes, plan_sweep, resolve_device
from qlabench.run.point import MeasureContext
from qlabench.core.errors import ResultsWriteError, SweepInterrupted
from qlabench.core.point import Point
from qlabench.core.result import ResultRow
from qlabench.core.spec import Suite
from qlabench.store.files import PartWriter, check_writable
from qlabench.run.distributed.launch import CPLauncher
from qlabench.run.job import Executor, WorkerJob
from qlabench.run.pool import InlineExecutor

class Progress(Protocol):
    def start(self, total: int) -> None: ...
    def point_started(self, point: Point) -> None: ...
    def point_done(self, row: ResultRow) -> None: ...


@dataclass
class RunResult:
    run_id: str
    path: Path | None  # None when no point was run (all resumed, or no time left)
    rows: list[ResultRow]  # rows measured by this call, not the resumed ones
    device: str
    wall_s: float
    resumed: int = 0  # points skipped because an earlier run recorded them ok
    not_run: int = 0  # points left for a later --resume (the time budget ran out)
    workers_started: int = 0  # worker processes started (0 in-process); more than slots means replacements
    workers: int = 1  # points measured at once (one worker per GPU)

    def time_breakdown(self, warmup_s: float = 0.0) -> TimeBreakdown:
        """Where this run's time went, from its rows' phases: first calls, checks, sampling, other, idle."""
        return TimeBreakdown.of(self.rows, self.wall_s, self.workers, warmup_s)

    @property
    def complete(self) -> bool:
        return self.not_run == 0

    def status_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for r in self.rows:
            counts[r.status] = counts.get(r.status, 0) + 1
        return counts

    def __repr__(self) -> str:  # one line: the rows are in .rows (or read_results([res.path]))
        counts = ", ".join(f"{n} {s}" for s, n in self.status_counts().items()) or "none"
        extra = "".join(f", {k}={v}" for k, v in (("resumed", self.resumed), ("not_run", self.not_run)) if v)
        return (f"RunResult(run_id={self.run_id!r}, path={str(self.path) if self.path else None!r}, "
                f"rows={len(self.rows)} ({counts}), device={self.device!r}, wall_s={self.wall_s:.1f}{extra})")


class TextProgress:
    """Plain progress for library users (`run_sweep(..., progress=True)`): a line per finished point."""

    def __init__(self, file=None):
        self.file = file
        self.total = 0
        self.done = 0

    def start(self, total: int) -> None:
        self.total += total  # gate and selfbench run several sweeps under one progress

    def point_started(self, point: Point) -> None:
        pass

    def point_done(self, row: ResultRow) -> None:
        import sys

        from qlabench.core.identity import layout_label
        from qlabench.core.text import one_line

        self.done += 1
        what = f"{row.median_ms:.4g} ms" if row.ok else row.reason
        # a reason is often a kernel package's own exception message: its control characters shown, never obeyed
        # the case as a suite names it: a token count cannot tell 32768 from 4x8192 packed
        case = layout_label(row.layout, row.batch, row.seqlens)
        print(one_line(f"[{self.done}/{self.total}] {row.status} {row.backend} {row.mode} h{row.h_qk}/{row.h_v} "
                       f"{case}: {what}"), file=self.file or sys.stderr, flush=True)


def _problem_group(p: Point) -> tuple:
    """The compile group without its backend: the backends of one head configuration."""
    return p.compile_group[1:]


def order_points(points: Sequence[Point]) -> list[Point]:
    """Group points by compile group (head config, dims, dtype, backend) so each compiles once, and put
    the backends of one head configuration next to each other: they check against the same oracle
    outputs (oracle_cache.py keeps only the recent ones), and drift during a long sweep then hits the
    backends being compared alike."""
    first_problem: dict[tuple, int] = {}
    first_group: dict[tuple, int] = {}
    for i, p in enumerate(points):
        first_problem.setdefault(_problem_group(p), i)
        first_group.setdefault(p.compile_group, i)
    return sorted(points, key=lambda p: (first_problem[_problem_group(p)], first_group[p.compile_group]))


def group_points(points: Sequence[Point]) -> list[list[Point]]:
    """Ordered points split into their compile groups (the unit a worker takes)."""
    groups: dict[tuple, list[Point]] = {}
    for p in order_points(points):
        groups.setdefault(p.compile_group, []).append(p)
    return list(groups.values())


def segments(points: Sequence[Point], suite_order: Sequence[Point]) -> list[tuple[bool, list[Point]]]:
    """`points` in suite order, cut into maximal runs of distributed / single-device points."""
    todo = set(points)
    out: list[tuple[bool, list[Point]]] = []
    for p in suite_order:
        if p not in todo:
            continue
        todo.discard(p)
        if out and out[-1][0] == p.distributed:
            out[-1][1].append(p)
        else:
            out.append((p.distributed, [p]))
    return out


class _Recorder:
    """The executors' RowSink: writes each row as a part file, then reports progress."""

    def __init__(self, writer: PartWriter, progress: Progress | None):
        self.writer = writer
        self.progress = progress
        self.rows: list[ResultRow] = []
        self.replicate: int | None = None  # stamped on every row while set (runs with replicates)

    def started(self, point: Point) -> None:
        if self.progress:
            self.progress.point_started(point)

    def done(self, point: Point, row: ResultRow) -> None:
        if self.replicate is not None:
            row = dataclasses.replace(row, replicate=self.replicate)
        try:
            self.writer.write([row])
        except OSError as e:  # never a worker fault, never a budget stop: the sweep ends here (exit 1)
            raise ResultsWriteError(
                f"cannot write results to {self.writer.dir}: {e.strerror or e}; the sweep stopped. The row of "
                f"{point.label()} was lost; {len(self.rows)} row(s) written before it are kept as part files in "
                f"{self.writer.dir} (readable as they are; run again with --resume once the output is writable)"
            ) from None
        self.rows.append(row)
        if self.progress:
            self.progress.point_done(row)


def new_run_id() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:6]


def run_sweep(suite: Suite | SweepPlan, out_root: str | Path = "results", options: RunOptions | None = None,
              progress: Progress | bool | None = None) -> RunResult:
    """Run the points of `suite` (or of a plan, run/plan.py) under `out_root`, writing rows as they come;
    returns the run's file and rows.

    options: how to run (RunOptions: device, timer, check, where points run, resume, time budget,
        replicates, ...); None: the suite's settings, in worker subprocesses. A plan holds its own.
    progress: an object with the Progress protocol (start, point_started, point_done), or True for a
        line per finished point on stderr (TextProgress); None: silent.

    Before anything starts or is written, the suite and its options are checked once, by `plan_sweep` (the size
    of the run, the device, the timer, SM budgets, the kernel cache folder, memory; the backend names too in a
    plan a command made), then the output folder: a QlabenchError (BackendError, DeviceError, TimerError, ConfigError, StoreError,
    SMBudgetError) if they cannot be honoured, e.g. an unknown timer name, graph / events on a CPU
    device, or an `sm_budget` without CUDA green contexts.
    """
    if isinstance(suite, SweepPlan):
        if options is not None:
            raise TypeError("run_sweep(plan): the plan holds its options (plan_sweep(suite, options))")
        plan = suite if suite.on_device else plan_sweep(suite.suite, suite.options)
    else:  # a library caller's suite: its backend names are left to each point's row, as they always were
        plan = plan_sweep(suite, options, names=False)
    return run_plan(plan, out_root, progress)


def run_plan(plan: SweepPlan, out_root: str | Path = "results", progress: Progress | bool | None = None) -> RunResult:
    """Execute a plan made on its device (`plan_sweep`): nothing is planned or checked again, but the output folder
    (a bad one fails before any worker starts) and, under a resume's lock, the points already recorded ok."""
    if not plan.on_device:
        raise TypeError("run_plan(plan): a plan made without its device (a dry run's) is priced, never run")
    t0 = time.perf_counter()
    suite, opts, device, timer, check = plan.suite, plan.options, plan.device, plan.timer, plan.check
    caller_threads = torch.get_num_threads()  # given back at the end: an in-process sweep pins them
    if progress is True:
        progress = TextProgress()
    elif progress is False:
        progress = None
    env = envmod.capture(device)
    run_id = opts.run_id or new_run_id()
    points = order_points(suite.points)
    job = WorkerJob(suite=suite, run_id=run_id, timer=timer, check=check)

    def new_executors() -> dict[bool, Executor]:
        """A round's executors, by whether they take distributed points: those run through launches of their
        ranks (distributed/launch.py) wherever the others run, and never alongside them."""
        if isinstance(opts.executor, InProcess):
            single = InlineExecutor(MeasureContext(suite=suite, device=device, env=env, run_id=run_id, timer=timer,
                                                   registry=opts.executor.registry or REGISTRY, check=check))
        else:
            single = (opts.executor or local_executor)(job, device, env)
        return {False: single, True: CPLauncher(job, device, env)}

    writer = PartWriter(out_root, suite.name, run_id, metadata={"suite_path": suite.path, "run_id": run_id,
                                                                "baseline": suite.baseline or ""})
    check_writable(writer)  # before any worker starts: a bad --out fails here (exit 2), not after measuring
    resumed = 0
    # A --resume holds the suite folder's lock: two at once would measure the same points twice; what is done is
    # read under it, so a resume that finished meanwhile is not measured again.
    with resumemod.resume_lock(out_root, suite.name) if opts.resume else contextlib.nullcontext():
        if opts.resume:
            done = resumemod.done_keys(out_root, suite.name, env, checked=check, cpu_threads=plan.resume_threads,
                                       reference=suite.check.reference, regime=suite.timing.regime)
            todo = resumemod.remaining(points, done)
            resumed = len(points) - len(todo)
            points = todo

        recorder = _Recorder(writer, progress)

        def out_of_time() -> bool:
            return opts.max_time_s is not None and time.perf_counter() - t0 >= opts.max_time_s

        replicates = opts.replicates
        if progress:
            progress.start(len(points) * replicates)
        workers_started = 0
        workers = 1
        interrupted = False
        try:
            for rnd in range(replicates):
                if out_of_time():
                    break
                recorder.replicate = rnd if replicates > 1 else None
                executors = new_executors()  # fresh ones per round: every replicate in fresh worker processes
                try:
                    _run_round(points, suite.points, executors, recorder, out_of_time)
                finally:
                    for ex in executors.values():
                        ex.close()
                    workers_started += getattr(executors[False], "workers_started", 0)
                    workers = max(workers, len(getattr(executors[False], "states", ())))
        except KeyboardInterrupt:  # Ctrl-C (or SIGTERM, which the CLI turns into one): keep what was measured
            interrupted = True
        finally:
            torch.set_num_threads(caller_threads)  # an in-process sweep pinned this process's threads (point.py)
        try:
            path = writer.compact()
        except OSError as e:
            raise ResultsWriteError(f"the sweep ended, but compacting the parts into {writer.final_path} "
                                    f"failed: {e.strerror or e}; all {len(recorder.rows)} row(s) are kept as part "
                                    f"files in {writer.dir}, which readers read as they are") from None
        not_run = len(points) * replicates - len(recorder.rows)
        if interrupted:
            raise SweepInterrupted(f"interrupted: {len(recorder.rows)} row(s) kept in {path or writer.dir}, "
                                   f"{not_run} point(s) not measured; run the same command with --resume to continue")
        return RunResult(run_id, path, recorder.rows, device, time.perf_counter() - t0, resumed=resumed,
                         not_run=not_run, workers_started=workers_started, workers=workers)


def _run_round(points: list[Point], suite_order: Sequence[Point], executors: dict[bool, Executor],
               recorder: _Recorder, out_of_time) -> None:
    """Measure every point once. The suite's order of distributed and single-device points is kept: each
    run of one kind goes to its executor (`executors[p.distributed]`), the single-device points in compile
    groups, the distributed ones as one group in the suite's order."""
    runs = segments(points, suite_order) if any(p.distributed for p in points) else [(False, points)]
    for distributed, seg in runs:
        if out_of_time():
            break
        executors[distributed].run([seg] if distributed else group_points(seg), recorder, out_of_time)
