"""The worker pool: points measured in worker subprocesses (isolated), or in this process.

Both are executors (job.py: what a sweep hands an executor, and what it must answer).

`WorkerPool` runs one worker subprocess per `Slot` (a device plus environment, e.g. one per GPU),
each a fresh interpreter (no fork: no CUDA state is inherited; no multiprocessing 'spawn': the
caller's __main__ is not re-imported), supervised by supervised.Supervised. A slot takes a whole
compile group and keeps its worker across the group's points, so kernels compile once per worker.
A worker is replaced:
  - when it dies (segfault, abort, SIGKILL from the OOM killer): the point gets
    `error: worker died: SIGSEGV (<last error line of its stderr>)`;
  - when a point outlives its time limit (a hung kernel): the worker is killed and the point gets
    `error: timeout ...`;
  - after any `error` row, since an error such as a CUDA illegal address poisons the CUDA context
    for every later point of that process.
The first point of a compile group on a worker gets `compile_timeout_s` (it includes the JIT),
later ones `point_timeout_s`. Worker start-up (imports, CUDA init) is not counted against either.

`InlineExecutor` runs points in this process: no isolation and no time limits, but it accepts any
registry object (tests pass their own backends).

This module imports no torch at top level: a worker must set its environment (CUDA_VISIBLE_DEVICES)
before torch is imported.
"""

from __future__ import annotations

import collections
import importlib
import os
import shutil
import signal
import socket
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait

from qlabench.core.errors import ConfigError
from qlabench.core.point import Point
from qlabench.core.result import ResultRow, Status
from qlabench.run.job import WORKER_ENV, RowSink, WorkerJob, point_to_dict, unmeasured_row
from qlabench.run.supervised import Deadline, Supervised
from qlabench.run.tempdirs import private_temp_dir


@dataclass(frozen=True)
class Slot:
    """One place a worker runs: the device it measures on and extra environment for its process."""

    device: str
    env: dict[str, str] = field(default_factory=dict)  # e.g. {"CUDA_VISIBLE_DEVICES": "3"}
    name: str = "worker"


def take_next(slot_state, pending: collections.deque, should_stop: Callable[[], bool]) -> Point | None:
    """The next point for an idle slot: the rest of its compile group first, then a whole new group.

    None when nothing is left or the sweep should stop (then everything not started is dropped).
    """
    if not slot_state.queue and pending:
        slot_state.queue.extend(pending.popleft())
    if slot_state.queue and should_stop():
        slot_state.queue.clear()
        pending.clear()
    return slot_state.queue.popleft() if slot_state.queue else None


# -- the worker process ------------------------------------------------------------------------

def worker_main(fd: int, parent_pid: int) -> None:
    """Entry point of a worker process: receive the job, then points (as dicts); answer with rows."""
    from qlabench.run.reaper import die_with_parent

    die_with_parent(parent_pid)
    import faulthandler

    faulthandler.enable()  # a fatal signal leaves "Fatal Python error: Segmentation fault" in the log
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it then stops us
    conn = Connection(fd)
    job, device = conn.recv()

    from qlabench.measure import env as envmod
    from qlabench.run.point import MeasureContext, run_point

    module, _, attr = job.registry.partition(":")
    registry = getattr(importlib.import_module(module), attr)
    env = envmod.capture(device)
    ctx = MeasureContext(suite=job.suite, device=device, env=env, run_id=job.run_id, timer=job.timer,
                         registry=registry, check=job.check)
    conn.send(("ready", env))
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        row = run_point(Point(**msg), ctx)
        sys.stdout.flush()
        conn.send(("row", row.as_dict()))


def worker_command(fd: int, parent_pid: int) -> list[str]:
    """A worker's command line: a fresh interpreter that runs `worker_main` on the socket `fd`."""
    return [sys.executable, "-c", f"from qlabench.run.pool import worker_main; worker_main({fd}, {parent_pid})"]


# -- the parent's view of one worker -----------------------------------------------------------

class _Worker:
    """A worker subprocess, started with a fresh interpreter (`python -c`), not fork and not
    multiprocessing's spawn: nothing of the parent (CUDA state, the caller's __main__) is inherited."""

    def __init__(self, job: WorkerJob, slot: Slot, log_dir: str):
        fd, log_path = tempfile.mkstemp(prefix=f"{slot.name}-", suffix=".log", dir=log_dir)
        os.close(fd)
        ours, theirs = socket.socketpair()
        from qlabench.run.distributed.safety import SAFE_ENV

        env = {**os.environ, **slot.env, WORKER_ENV: "1", **SAFE_ENV}  # NVLink multicast off, always
        try:
            self.proc = Supervised(worker_command(theirs.fileno(), os.getpid()), who="worker", log_path=log_path,
                                   env=env, pass_fds=[theirs.fileno()])
        except BaseException:
            ours.close()
            os.unlink(log_path)
            raise
        finally:
            theirs.close()
        self.conn = Connection(ours.detach())
        self.conn.send((job, slot.device))
        self.env: dict | None = None  # set by the worker's "ready" message
        self.groups_seen: set[tuple] = set()

    @property
    def ready(self) -> bool:
        return self.env is not None

    def alive(self) -> bool:
        return self.proc.alive()

    def stop(self, graceful: bool) -> None:
        if graceful and self.alive():
            try:
                self.conn.send(None)
                self.proc.wait(5.0)
            except (OSError, ValueError):
                pass
        self.proc.kill()
        self.conn.close()
        try:
            os.unlink(self.proc.log_path)
        except OSError:
            pass


@dataclass
class _SlotState:
    slot: Slot
    worker: _Worker | None = None
    queue: collections.deque = field(default_factory=collections.deque)
    current: Point | None = None
    deadline: Deadline = field(default_factory=Deadline)  # start-up, compile or point limit


class WorkerPool:
    """One worker subprocess per slot; each slot takes whole compile groups (see the module doc)."""

    def __init__(self, job: WorkerJob, slots: Sequence[Slot]):
        if not slots:
            raise ConfigError("a worker pool needs at least one slot")
        self.job = job
        self.states = [_SlotState(s) for s in slots]
        self._log_dir = private_temp_dir("qlabench-workers-")
        self.workers_started = 0

    # -- scheduling -----------------------------------------------------------------------------
    def run(self, groups: Sequence[Sequence[Point]], sink: RowSink, should_stop: Callable[[], bool]) -> None:
        pending = collections.deque(list(g) for g in groups if g)
        while True:
            for st in self.states:
                if st.current is None:
                    p = take_next(st, pending, should_stop)
                    if p is not None:
                        self._begin(st, p, sink)
            busy = [st for st in self.states if st.current is not None]
            if not busy:
                return
            timeout = min(st.deadline.left_s() for st in busy)
            waitables = [st.worker.conn for st in busy]  # a dying worker's socket reads as EOF
            wait(waitables, timeout=timeout)
            for st in busy:
                self._poll(st, sink)

    def _begin(self, st: _SlotState, p: Point, sink: RowSink) -> None:
        sink.started(p)
        st.current = p
        if st.worker is not None and not st.worker.alive():  # died while idle: not this point's fault
            st.worker.stop(graceful=False)
            st.worker = None
        if st.worker is None:
            st.worker = _Worker(self.job, st.slot, self._log_dir)
            self.workers_started += 1
            st.deadline.arm(self.job.start_timeout_s, "worker start-up")
        else:
            self._send(st)

    def _send(self, st: _SlotState) -> None:
        st.deadline.arm(*self.job.point_limit(first_of_group=st.current.compile_group not in st.worker.groups_seen))
        try:
            st.worker.conn.send(point_to_dict(st.current))
        except (OSError, ValueError):
            pass  # it died; _poll sees the dead process and fails the point with the reason

    def _poll(self, st: _SlotState, sink: RowSink) -> None:
        w = st.worker
        broken = False
        while st.current is not None:
            try:  # only the socket: an error of the sink (a failed write) is no worker fault and goes up
                if not w.conn.poll():
                    break
                kind, payload = w.conn.recv()
            except (EOFError, OSError):
                broken = True  # the process is dead or dying: its socket closed
                break
            if kind == "ready":
                w.env = payload
                self._send(st)
            elif kind == "row":
                row = ResultRow(**payload)
                w.groups_seen.add(st.current.compile_group)
                if row.status == Status.ERROR.value:
                    self._replace(st, graceful=False)
                self._finish(st, row, sink)
        if st.current is None:
            return
        if broken or not w.alive():
            reason = w.proc.died()
            self._fail(st, reason if w.ready else "worker failed to start: " + reason, sink)
        elif st.deadline.passed():
            self._fail(st, w.proc.timed_out(st.deadline), sink)

    def _fail(self, st: _SlotState, reason: str, sink: RowSink) -> None:
        env = st.worker.env or _fallback_env(st.slot.device)
        row = unmeasured_row(st.current, self.job, env, reason)
        self._replace(st, graceful=False)
        self._finish(st, row, sink)

    def _finish(self, st: _SlotState, row: ResultRow, sink: RowSink) -> None:
        p, st.current = st.current, None
        sink.done(p, row)

    def _replace(self, st: _SlotState, graceful: bool) -> None:
        if st.worker is not None:
            st.worker.stop(graceful)
            st.worker = None  # the next point starts a fresh one

    def close(self) -> None:
        for st in self.states:
            self._replace(st, graceful=True)
        shutil.rmtree(self._log_dir, ignore_errors=True)


def _fallback_env(device: str) -> dict:
    """Environment fields for a row whose worker never reported its own (it failed to start)."""
    from qlabench.measure import env as envmod

    return envmod.capture(device)


class InlineExecutor:
    """Points measured in this process, one after another: no isolation, no time limits."""

    def __init__(self, ctx):
        self.ctx = ctx  # a measure.MeasureContext

    def run(self, groups: Sequence[Sequence[Point]], sink: RowSink, should_stop: Callable[[], bool]) -> None:
        from qlabench.run.point import run_point

        for g in groups:
            for p in g:
                if should_stop():
                    return
                sink.started(p)
                sink.done(p, run_point(p, self.ctx))

    def close(self) -> None:
        pass


__all__ = ["InlineExecutor", "Slot", "WorkerPool", "take_next", "worker_main"]
