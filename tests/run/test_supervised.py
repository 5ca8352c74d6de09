"""The one verdict on why a supervised child ended (run/supervised.py), and the two places that start
children, the worker pool and the distributed launcher, giving a point that verdict word for word."""

from __future__ import annotations

import itertools
import os
import sys
import time
from pathlib import Path

import pytest

from qlabench.core.spec import load_suite
from qlabench.measure.timing import TimerPlan
from qlabench.run import supervised
from qlabench.run.supervised import Deadline, Supervised, death_words

DATA = Path(__file__).resolve().parents[1] / "data"
START_S = 3.0  # the fake children's start-up limit: long enough for an interpreter on a loaded box

# A child's program -> the verdict on it, after "<who> " (the hang's is a timeout, see below).
EXIT = "import sys; print('ValueError: bad input', file=sys.stderr, flush=True); sys.exit(3)"
SEGV = "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"
SIGKILL = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
HANG = "import sys, time; print('waiting on the kernel', file=sys.stderr, flush=True); time.sleep(600)"


def _child(code: str, tmp_path, **kw) -> Supervised:
    return Supervised([sys.executable, "-c", code], who="child", log_path=str(tmp_path / "child.log"),
                      env=dict(os.environ), **kw)


def _ended(s: Supervised) -> None:
    deadline = time.monotonic() + 60
    while s.alive() and time.monotonic() < deadline:
        time.sleep(0.02)


# -- the verdicts -------------------------------------------------------------------------------------

def test_an_exit_code_is_told_with_the_logs_telling_line(tmp_path):
    s = _child(EXIT, tmp_path)
    _ended(s)
    assert s.died() == "child exited with code 3 (ValueError: bad input)"


def test_a_signal_is_told_by_name(tmp_path):
    s = _child(SEGV, tmp_path)
    _ended(s)
    assert s.died() == "child died: SIGSEGV"


def test_a_child_that_still_runs_stopped_answering(tmp_path):
    s = _child(HANG, tmp_path)
    try:
        assert s.died(wait_s=0.2) == "child stopped answering (waiting on the kernel)"
    finally:
        s.kill()
    assert not s.alive()


def test_a_hang_is_killed_and_named_by_its_limit(tmp_path):
    s = _child(HANG, tmp_path)
    d = Deadline()
    d.arm(0.5, "a test's limit")
    while not d.passed():
        time.sleep(0.05)
    assert s.timed_out(d) == ("timeout: no result within 0.5s (a test's limit); child killed "
                              "(last: waiting on the kernel)")
    assert not s.alive()


def test_a_group_is_killed_with_what_it_started(tmp_path):
    """A launch is killed with its ranks: nothing it started outlives the timeout."""
    pid_file = tmp_path / "grandchild.pid"
    code = ("import subprocess, sys, time; "
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']);"
            f" open({str(pid_file)!r}, 'w').write(str(p.pid)); time.sleep(600)")
    s = _child(code, tmp_path, own_group=True)
    while not pid_file.exists() or not pid_file.read_text():
        time.sleep(0.05)
    grandchild = int(pid_file.read_text())
    s.timed_out(Deadline())
    for _ in range(100):  # reaped by init once killed; /proc shows it until then, as a zombie at most
        state = Path(f"/proc/{grandchild}/stat")
        if not state.exists() or state.read_text().rsplit(")", 1)[1].split()[0] == "Z":
            break
        time.sleep(0.05)
    else:
        pytest.fail("the child's own child survived the kill")


@pytest.mark.parametrize("rose, words", [(True, "died: SIGKILL, out of memory (the kernel's OOM killer fired in its "
                                                 "memory cgroup meanwhile)"),
                                         (False, "died: SIGKILL")])
def test_a_sigkill_is_an_oom_kill_only_when_the_oom_killer_fired(tmp_path, monkeypatch, rose, words):
    counts = itertools.count() if rose else itertools.repeat(7)
    monkeypatch.setattr(supervised, "oom_kill_count", lambda: next(counts))
    s = _child(SIGKILL, tmp_path)
    _ended(s)
    assert s.died() == f"child {words}"


@pytest.mark.parametrize("code, rose, words", [
    (-11, True, "died: SIGSEGV"),  # the OOM killer sends SIGKILL alone: another signal is never called one
    (1, True, "exited with code 1"),
    (None, True, "stopped answering"),
    (-9, False, "died: SIGKILL"),
    (-99, False, "died: signal 99"),  # no such signal: its number
])
def test_death_words(code, rose, words):
    assert death_words(code, oom_kills_rose=rose) == words


def test_an_unreadable_counter_claims_no_oom_kill(tmp_path, monkeypatch):
    monkeypatch.setattr(supervised, "oom_kill_count", lambda: None)
    s = _child(SIGKILL, tmp_path)
    _ended(s)
    assert s.died() == "child died: SIGKILL"


# -- both call sites give a point the helper's verdict ---------------------------------------------------

class _Sink:
    def __init__(self):
        self.seen, self.rows = [], []

    def started(self, p):
        self.seen.append(p)

    def done(self, p, row):
        self.rows.append(row)


def _job(suite):
    from qlabench.run.job import WorkerJob

    return WorkerJob(suite=suite, run_id="r", timer=TimerPlan.resolve("wall", "cpu", suite.timing), check=False,
                     start_timeout_s=START_S)


def _pool_reason(code: str, monkeypatch) -> str:
    """The reason the worker pool writes for a point whose worker runs `code` instead of a worker."""
    from qlabench.run import pool

    monkeypatch.setattr(pool, "worker_command", lambda fd, parent: [sys.executable, "-c", code])
    suite = load_suite(str(DATA / "tiny-cpu.toml"))
    sink = _Sink()
    ex = pool.WorkerPool(_job(suite), [pool.Slot("cpu")])
    try:
        ex.run([[suite.points[0]]], sink, lambda: False)
    finally:
        ex.close()
    (row,) = sink.rows
    assert row.status == "error" and sink.seen == [suite.points[0]]
    return row.reason


def _launch_reason(code: str, monkeypatch) -> str:
    """The reason the distributed launcher writes for a point whose launch runs `code` instead of the ranks."""
    from qlabench.run.distributed import launch

    monkeypatch.setattr(launch, "torchrun_command", lambda *a: [sys.executable, "-c", code])
    suite = load_suite(str(DATA / "cp-cpu.toml"))
    p = next(p for p in suite.points if p.distributed)
    sink = _Sink()
    ex = launch.CPLauncher(_job(suite), "cpu", {"host": "h"})
    try:
        ex.run([[p]], sink, lambda: False)
    finally:
        ex.close()
    (row,) = sink.rows
    assert row.status == "error" and sink.seen == [p] and ex.launches == 1
    return row.reason


@pytest.mark.parametrize("code, words", [(EXIT, "exited with code 3 (ValueError: bad input)"),
                                         (SEGV, "died: SIGSEGV")])
def test_a_death_reads_alike_from_the_pool_and_the_launcher(code, words, monkeypatch):
    assert _pool_reason(code, monkeypatch) == f"worker failed to start: worker {words}"
    assert _launch_reason(code, monkeypatch) == f"distributed launch failed to start: distributed ranks {words}"


def test_an_oom_kill_reads_alike_from_the_pool_and_the_launcher(monkeypatch):
    counts = itertools.count()
    monkeypatch.setattr(supervised, "oom_kill_count", lambda: next(counts))
    words = death_words(-9, oom_kills_rose=True)
    assert _pool_reason(SIGKILL, monkeypatch) == f"worker failed to start: worker {words}"
    assert _launch_reason(SIGKILL, monkeypatch) == f"distributed launch failed to start: distributed ranks {words}"


def test_a_hang_reads_alike_from_the_pool_and_the_launcher(monkeypatch):
    tail = "killed (last: waiting on the kernel)"
    assert _pool_reason(HANG, monkeypatch) == f"timeout: no result within {START_S:g}s (worker start-up); worker {tail}"
    assert _launch_reason(HANG, monkeypatch) == (
        "distributed launch failed to start: timeout: no result within "
        f"{START_S:g}s (start-up: torchrun, imports, process group); distributed ranks {tail}")


def _gone(pid: int, within_s: float = 5.0) -> bool:
    import os
    import time

    end = time.monotonic() + within_s
    while time.monotonic() < end:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(")")[-1].split()[0] == "Z":  # a zombie is ended; its parent reaps it
                    return True
        except OSError:
            return True
        time.sleep(0.05)
    return not os.path.exists(f"/proc/{pid}")


def test_a_childs_helper_in_a_session_of_its_own_ends_with_it(tmp_path):
    # was: a plugin's helper started with setsid (start_new_session) outlived the worker that started it
    import os
    import sys

    from qlabench.run.supervised import Supervised

    pid_file = tmp_path / "helper.pid"
    code = ("import subprocess, sys, time; p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], "
            f"start_new_session=True); open({str(pid_file)!r}, 'w').write(str(p.pid)); time.sleep(120)")
    for child_exits_first in (False, True):
        pid_file.unlink(missing_ok=True)
        s = Supervised([sys.executable, "-c", code], who="worker", log_path=str(tmp_path / "log"),
                       env=dict(os.environ))
        while not pid_file.exists() or not pid_file.read_text():
            assert s.alive()
        helper = int(pid_file.read_text())
        assert os.getsid(helper) != os.getsid(s.pid)  # out of reach of any process-group kill
        if child_exits_first:  # the worker died on its own: the helper is an orphan now
            os.kill(s.pid, 9)
            s.wait(5)
        s.kill()
        assert _gone(helper), f"helper {helper} outlived the worker"
