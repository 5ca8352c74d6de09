"""Launching distributed points: W ranks of `qlabench.run.distributed.worker` on this machine (spawn.py).

`CPLauncher` is the executor (run/job.py) of a sweep's distributed points: sweep.py hands it every point
with `cp_world_size` set, in the suite's order, between the single-device executor's runs. For each
world size W it:

- records a `skipped` row, without starting anything, for a point that cannot run at all
  (`Point.cp_problem`: batch > 1, tokens not divisible by W) or when fewer than W GPUs are visible
  (CUDA suites; a CPU suite runs W gloo processes on the CPU);
- starts one launch for the remaining points (spawn.py: torchrun's environment for each rank, but a
  FileStore rendezvous and loopback sockets instead of torchrun's store on every interface), with
  SAFE_ENV (NVLink multicast off) in its environment and
  CUDA_VISIBLE_DEVICES set to the first W visible GPUs. Rank 0 reports through an events file:
  `ready` (process group up), `start i`, `row i`; each row goes to the sweep's sink as it arrives;
- applies the sweep's time limits: start-up (job.START_TIMEOUT_S, for the ranks' imports and process group),
  `compile_timeout_s` for the first point of a compile group in a launch, `point_timeout_s` otherwise.
  A launch that dies or outlives a limit is killed (its whole process group); the point in flight gets
  an `error` row (run/supervised.py's verdict, with the telling line of the ranks' log, `last_error_line`),
  and a fresh launch takes the points
  not yet started. After an `error` row the ranks exit on their own (a CUDA error poisons a process)
  and a fresh launch continues likewise. A launch that never comes up fails all its points (no retry
  loop on a broken host);
- honours the sweep's time budget: once `should_stop()` is true it creates the stop file, and the
  ranks start no further point;
- records the sweep's timer choice: the ranks time every iteration themselves (CUDA events, wall clock
  on CPU; worker.py), so when the sweep asked for another timer (e.g. graph, or auto on CUDA) an ok row
  says so in its extra_json (`timer_requested`, `timer_note`; see `with_timer_note`).

No torch at import: the sweep process counts GPUs through executors.local.visible_gpus only when a
CUDA suite has distributed points.
"""

from __future__ import annotations

import functools
import json
import os
import pickle
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from qlabench.core.point import Point
from qlabench.core.result import ResultRow, Status
from qlabench.measure.timing.plan import TimerPlan
from qlabench.run.job import START_TIMEOUT_S, WORKER_ENV, RowSink, WorkerJob, point_to_dict, unmeasured_row
from qlabench.run.reaper import die_with_parent
from qlabench.run.supervised import Deadline, Supervised, log_tail_lines
from qlabench.run.tempdirs import private_temp_dir
from qlabench.run.distributed.safety import safe_env

WORKER_MODULE = "qlabench.run.distributed.worker"
_LOG_TAIL_BYTES = 16384
_POLL_S = 0.1


@dataclass(frozen=True)
class CPJob:
    """What every rank of one launch needs (pickled into the job file): the sweep's WorkerJob (suite, run,
    timer plan, check, time limits), the launch's device type and its points."""

    job: WorkerJob
    device_type: str  # "cuda" (NCCL, one GPU per rank) or "cpu" (gloo)
    points: tuple[dict, ...]


def torchrun_command(world_size: int, job_path: str, events_path: str, stop_path: str) -> list[str]:
    """The command of one launch on this machine: spawn.py's W ranks, which meet through a FileStore in
    the launch's folder and bind gloo / NCCL to loopback; nothing listens beyond 127.0.0.1 (torchrun's
    own rendezvous store listens on every interface, so it is not used)."""
    from qlabench.run.distributed.spawn import spawn_command

    store = os.path.join(os.path.dirname(job_path) or ".", "store")
    return spawn_command(world_size, store, ["--job", job_path, "--events", events_path, "--stop", stop_path])


def launch_env(device_type: str, gpu_ids: Sequence[str], world_size: int, base: dict | None = None) -> dict:
    """The launch's environment: the caller's, pinned to the first W GPUs, NVLink multicast off (forced)."""
    extra = {WORKER_ENV: "1", "OMP_NUM_THREADS": (base or os.environ).get("OMP_NUM_THREADS", "1"),
             "PYTHONUNBUFFERED": "1"}
    if device_type == "cuda":
        extra["CUDA_VISIBLE_DEVICES"] = ",".join(gpu_ids[:world_size])
    return safe_env(base, **extra)


def gpu_shortage(world_size: int, gpu_ids: Sequence[str]) -> str | None:
    if len(gpu_ids) < world_size:
        return (f"needs {world_size} GPUs (cp world_size {world_size}); {len(gpu_ids)} visible "
                f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')})")
    return None


def with_timer_note(row: dict, timer: TimerPlan) -> dict:
    """A rank-0 row (as a dict), noting in its extra_json when it was not timed by the sweep's timer.

    The CP ranks time each iteration themselves, after a barrier, the slowest rank counting (worker.py):
    with CUDA events on CUDA, the wall clock on CPU. The sweep's `--timer` / [timing].timer (resolved once,
    in run_sweep, into `timer`) therefore cannot apply; rows timed otherwise keep `timer` as used and say
    why here.
    """
    used, requested, wanted = row.get("timer"), timer.requested, timer.name
    if used is None or used == wanted:
        return row
    extra = json.loads(row.get("extra_json") or "{}")
    extra["timer_requested"] = requested
    asked = f"timer {requested!r}" + (f" ({wanted} here)" if wanted != requested else "")
    extra["timer_note"] = (f"{asked} not used: distributed (CP) points are timed by the ranks themselves, "
                           f"{used} per iteration after a barrier, slowest rank")
    return {**row, "extra_json": json.dumps(extra, sort_keys=True)}


_BOILERPLATE = ("ChildFailedError", "traceback :", "error_file", "elastic/", "To enable traceback",
                "exitcode", "Sending process", "closing signal", "warnings.warn")


def last_error_line(log_path: str) -> str | None:
    """The most telling line of the ranks' log: a rank's exception, else any error line, else the last."""
    import re

    lines = log_tail_lines(log_path, _LOG_TAIL_BYTES)
    if not lines:
        return None
    lines = [ln for ln in lines if not any(b in ln for b in _BOILERPLATE)] or lines
    exc = re.compile(r"^(\[rank\d+\]:\s*)?[\w.]*(Error|Exception|Interrupt)\b.*:")
    raised = [ln for ln in lines if exc.match(ln)]
    if raised:
        return raised[0][:300]  # the first rank to fail is the cause; the others lost their peer
    marked = [ln for ln in lines if "Error" in ln or "error" in ln or "Fatal" in ln or "Signal" in ln]
    return (marked or lines)[-1][:300]


START_LIMIT = "start-up: torchrun, imports, process group"


@dataclass
class _Launch:
    """One launch of the ranks (a supervised process) and what it has reported so far."""

    points: list[Point]
    proc: Supervised
    dir: str
    events_path: str
    stop_path: str
    log_path: str
    offset: int = 0
    env: dict | None = None  # rank 0's environment fields, from "ready"
    current: int | None = None  # index of the point in flight
    done: set = field(default_factory=set)
    deadline: Deadline = field(default_factory=Deadline)
    stop_sent: bool = False
    buf: str = ""

    def new_events(self) -> list[dict]:
        try:
            with open(self.events_path) as f:
                f.seek(self.offset)
                chunk = f.read()
                self.offset = f.tell()
        except FileNotFoundError:
            return []
        self.buf += chunk
        *lines, self.buf = self.buf.split("\n")
        return [json.loads(ln) for ln in lines if ln.strip()]


class CPLauncher:
    """The executor of a sweep's distributed points (see the module doc)."""

    def __init__(self, job: WorkerJob, device: str, env: dict, *, gpu_ids: Sequence[str] | None = None,
                 start_timeout_s: float | None = None):
        self.job = job
        self.device_type = "cuda" if device.startswith("cuda") else "cpu"
        self.env = env  # the driver's environment fields, for rows written without a launch
        self._gpu_ids = list(gpu_ids) if gpu_ids is not None else None
        self.start_timeout_s = start_timeout_s or job.start_timeout_s or START_TIMEOUT_S
        self.launches = 0
        self._active: _Launch | None = None

    @property
    def gpu_ids(self) -> list[str]:
        if self._gpu_ids is None:
            from qlabench.run.executors.local import visible_gpus

            self._gpu_ids = visible_gpus() if self.device_type == "cuda" else []
        return self._gpu_ids

    def _row(self, p: Point, env: dict | None, status: Status, reason: str) -> ResultRow:
        return unmeasured_row(p, self.job, env or self.env, reason, status)

    def run(self, groups: Sequence[Sequence[Point]], sink: RowSink, should_stop: Callable[[], bool]) -> None:
        """The groups' points, in the order given, in one launch per world size at a time."""
        by_world: dict[int, list[Point]] = {}
        for p in (p for g in groups for p in g):
            by_world.setdefault(p.cp_world_size, []).append(p)
        for ws, pts in by_world.items():
            runnable = []
            for p in pts:
                if should_stop():
                    return
                why = p.cp_problem() or (gpu_shortage(ws, self.gpu_ids) if self.device_type == "cuda" else None)
                if why:
                    sink.started(p)
                    sink.done(p, self._row(p, None, Status.SKIPPED, f"unsupported: {why}"))
                else:
                    runnable.append(p)
            while runnable and not should_stop():
                runnable = self._launch(ws, runnable, sink, should_stop)

    # -- one launch ---------------------------------------------------------------------------------------
    def _start(self, ws: int, pts: list[Point]) -> _Launch:
        d = private_temp_dir("qlabench-cp-")
        job = CPJob(job=self.job, device_type=self.device_type, points=tuple(point_to_dict(p) for p in pts))
        paths = {k: os.path.join(d, k) for k in ("job.pkl", "events.jsonl", "stop", "ranks.log")}
        with open(paths["job.pkl"], "wb") as f:
            pickle.dump(job, f)
        proc = Supervised(torchrun_command(ws, paths["job.pkl"], paths["events.jsonl"], paths["stop"]),
                          who="distributed ranks", log_path=paths["ranks.log"], own_group=True,
                          env=launch_env(self.device_type, self.gpu_ids, ws), last_line=last_error_line,
                          preexec_fn=functools.partial(die_with_parent, os.getpid()))  # no launch outlives the sweep
        self.launches += 1
        la = _Launch(points=list(pts), proc=proc, dir=d, events_path=paths["events.jsonl"],
                     stop_path=paths["stop"], log_path=paths["ranks.log"])
        la.deadline.arm(self.start_timeout_s, START_LIMIT)
        return la

    def _launch(self, ws: int, pts: list[Point], sink: RowSink, should_stop: Callable[[], bool]) -> list[Point]:
        """Run `pts` in one launch; returns the points left for a fresh launch."""
        la = self._active = self._start(ws, pts)
        groups_seen: set = set()
        failure: str | None = None
        try:
            while True:
                for ev in la.new_events():
                    self._handle(la, ev, sink, groups_seen)
                if should_stop() and not la.stop_sent:
                    open(la.stop_path, "w").close()
                    la.stop_sent = True
                if not la.proc.alive():
                    for ev in la.new_events():
                        self._handle(la, ev, sink, groups_seen)
                    if la.proc.wait(0) != 0 or la.current is not None:
                        failure = la.proc.died()
                    break
                if la.deadline.passed():
                    failure = la.proc.timed_out(la.deadline)
                    break
                time.sleep(_POLL_S)
        finally:
            la.proc.kill()
            self._active = None
        started = la.done | ({la.current} if la.current is not None else set())
        if failure is not None:
            if la.env is None:  # never came up: fail every point of the launch, start nothing more
                for i, p in enumerate(la.points):
                    if i not in la.done:
                        sink.started(p)
                        sink.done(p, self._row(p, None, Status.ERROR, f"distributed launch failed to start: {failure}"))
                shutil.rmtree(la.dir, ignore_errors=True)
                return []
            if la.current is not None:
                p = la.points[la.current]
                sink.done(p, self._row(p, la.env, Status.ERROR, failure))
        shutil.rmtree(la.dir, ignore_errors=True)
        if la.stop_sent:
            return []
        if not started:  # came up but ran nothing: do not loop on it
            why = failure or "distributed ranks exited without running a point"
            for p in la.points:
                sink.started(p)
                sink.done(p, self._row(p, la.env, Status.ERROR, why))
            return []
        return la.points[max(started) + 1:]

    def _handle(self, la: _Launch, ev: dict, sink: RowSink, groups_seen: set) -> None:
        kind = ev.get("event")
        if kind == "ready":
            la.env = ev.get("env") or {}
            la.deadline.arm(self.start_timeout_s, START_LIMIT)
        elif kind == "start":
            i = int(ev["index"])
            p = la.points[i]
            la.current = i
            sink.started(p)
            first = p.compile_group not in groups_seen
            groups_seen.add(p.compile_group)
            la.deadline.arm(*self.job.point_limit(first_of_group=first))
        elif kind == "row":
            i = int(ev["index"])
            p = la.points[i]
            row = ResultRow(**with_timer_note(ev["row"], self.job.timer))
            la.done.add(i)
            la.current = None
            sink.done(p, row)
            # the ranks now check the stop file and announce the next point (or exit)
            la.deadline.arm(self.start_timeout_s, START_LIMIT)

    def close(self) -> None:
        if self._active is not None:
            self._active.proc.kill()
            shutil.rmtree(self._active.dir, ignore_errors=True)
            self._active = None


__all__ = ["CPJob", "CPLauncher", "gpu_shortage", "launch_env", "torchrun_command", "with_timer_note"]
