"""A child process under supervision, and the one verdict on why it ended: exit code, signal, OOM kill,
no answer, or a time limit passed.

Both places a sweep starts processes to measure in, the worker pool (pool.py: one interpreter per slot)
and the distributed launcher (distributed/launch.py: a launch of W ranks), start them through
`Supervised` and give a point that lost its process the reason it returns, so a death reads alike
whichever executor saw it:

- `died()`: `<who> exited with code N`, `<who> died: SIGSEGV`, `<who> died: SIGKILL, out of memory (...)`
  when the kernel's OOM killer fired in this memory cgroup while the child lived (a SIGKILL alone is not
  taken for one), or `<who> stopped answering` when its channel closed but it still runs; then the
  telling line of its log in parentheses;
- `timed_out(deadline)`: the child is killed and the verdict names the limit it passed
  (`timeout: no result within 5s (run.point_timeout_s); <who> killed (last: <line>)`).

Which line of a log tells most is the caller's (`last_line`): a worker's log is one interpreter's, a
launch's holds every rank and the spawner's own messages. No torch here.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

LOG_TAIL_BYTES = 8192
ANSWER_WAIT_S = 5.0  # a child whose channel closed is given this long to end before "stopped answering"
KILL_WAIT_S = 30.0


def exit_description(code: int) -> str:
    """A finished process's return code in words: 'died: SIGKILL' for a signal, else 'exited with code N'."""
    if code < 0:
        try:
            return f"died: {signal.Signals(-code).name}"
        except ValueError:
            return f"died: signal {-code}"
    return f"exited with code {code}"


def log_tail_lines(path: str, tail_bytes: int = LOG_TAIL_BYTES) -> list[str] | None:
    """The non-blank lines of the last `tail_bytes` of a log, stripped; None when it cannot be read."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - tail_bytes))
            return [ln.strip() for ln in f.read().decode(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return None


def last_marked_line(log_path: str) -> str | None:
    """The last line of a log that names an error (or a fatal signal), else its last line."""
    lines = log_tail_lines(log_path)
    if not lines:
        return None
    marked = [ln for ln in lines if "Error" in ln or "error" in ln or "Fatal" in ln]
    return (marked or lines)[-1][:300]


def oom_kill_count() -> int | None:
    """How many processes the kernel's OOM killer has ended in this process's memory cgroup (cgroup v2
    memory.events, else v1 memory.oom_control); None where neither can be read."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    paths = {ctrl: path.lstrip("/") for _, ctrl, path in (ln.split(":", 2) for ln in lines if ln.count(":") >= 2)}
    candidates = []
    if "" in paths:
        candidates += [Path("/sys/fs/cgroup", paths[""], "memory.events"), Path("/sys/fs/cgroup/memory.events")]
    if "memory" in paths:
        candidates += [Path("/sys/fs/cgroup/memory", paths["memory"], "memory.oom_control"),
                       Path("/sys/fs/cgroup/memory/memory.oom_control")]  # a container sees its own as the root
    for f in candidates:
        try:
            for ln in f.read_text().splitlines():
                key, _, value = ln.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            continue
    return None


def death_words(code: int | None, *, oom_kills_rose: bool = False) -> str:
    """Why a child ended, in words, from its return code (None: it still runs although its channel closed).

    oom_kills_rose: the OOM killer fired in the child's memory cgroup while it lived; only a SIGKILL is
    then called an OOM kill (the OOM killer sends nothing else)."""
    if code is None:
        return "stopped answering"
    words = exit_description(code)
    if code == -signal.SIGKILL and oom_kills_rose:
        words += ", out of memory (the kernel's OOM killer fired in its memory cgroup meanwhile)"
    return words


class Deadline:
    """The time limit a supervised child is under now, and its name in a timeout's reason."""

    def __init__(self) -> None:
        self.at = float("inf")
        self.seconds = 0.0
        self.name = ""

    def arm(self, seconds: float, name: str) -> None:
        self.at, self.seconds, self.name = time.monotonic() + seconds, seconds, name

    def passed(self) -> bool:
        return time.monotonic() >= self.at

    def left_s(self) -> float:
        return max(0.0, self.at - time.monotonic())


class Supervised:
    """One child process, its output in `log_path`, told in words when it ends (see the module doc).

    who: how a reason names it ("worker", "distributed ranks"). own_group: the child leads a new session
    and is killed with everything it started (a launch and its ranks)."""

    def __init__(self, argv: Sequence[str], *, who: str, log_path: str, env: dict, own_group: bool = False,
                 pass_fds: Sequence[int] = (), preexec_fn: Callable[[], None] | None = None,
                 last_line: Callable[[str], str | None] = last_marked_line):
        self.who, self.log_path, self.own_group, self.last_line = who, log_path, own_group, last_line
        self._oom_before = oom_kill_count()
        # Every process the child starts inherits this mark, even one in a session of its own (a plugin's helper
        # started with setsid, which no process-group kill reaches); `kill` ends them all by it.
        self.mark = f"{os.getpid()}-{uuid.uuid4().hex}"
        env = {**env, MARK_VAR: self.mark}
        with open(log_path, "ab") as log:
            self.proc = subprocess.Popen(list(argv), env=env, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, pass_fds=tuple(pass_fds),
                                         start_new_session=own_group, preexec_fn=preexec_fn)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait(self, timeout_s: float) -> int | None:
        """The return code once the child ends within `timeout_s`, else None."""
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def _with_last(self, words: str, fmt: str) -> str:
        last = self.last_line(self.log_path)
        return words + (fmt.format(last) if last else "")

    def died(self, wait_s: float = ANSWER_WAIT_S) -> str:
        """The verdict on a child that ended, or whose channel closed (given `wait_s` to end)."""
        code = self.wait(wait_s)
        after = oom_kill_count() if code == -signal.SIGKILL else None
        rose = None not in (self._oom_before, after) and after > self._oom_before
        return self._with_last(f"{self.who} {death_words(code, oom_kills_rose=rose)}", " ({})")

    def timed_out(self, deadline: Deadline) -> str:
        """Kill the child for passing `deadline`; the verdict names the limit."""
        self.kill()
        return self._with_last(f"timeout: no result within {deadline.seconds:g}s ({deadline.name}); "
                               f"{self.who} killed", " (last: {})")

    def kill(self) -> None:
        """SIGKILL the child (and its group, for `own_group`), then reap it; then every process it started, wherever
        it went (a new session, or orphaned when the child died first): they carry the child's mark."""
        try:
            self._kill()
        finally:
            kill_marked(MARK_VAR, self.mark)

    def _kill(self) -> None:
        if self.proc.poll() is None:
            try:
                if self.own_group:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                else:
                    self.proc.kill()
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
        try:
            self.proc.wait(timeout=KILL_WAIT_S)
        except subprocess.TimeoutExpired:
            pass


MARK_VAR = "QLABENCH_SUPERVISED"


def kill_marked(var: str, mark: str) -> int:
    """SIGKILL every process of this user whose environment holds `var=mark` (read from /proc; none where there is
    no /proc); returns how many were signalled. A process that changed its environment escapes it: a cgroup would
    not, but a sweep has no cgroup of its own to give each worker."""
    needle = f"{var}={mark}".encode() + b"\0"
    me, n = os.getpid(), 0
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as f:
                if needle not in f.read() + b"\0":
                    continue
            os.kill(int(entry.name), signal.SIGKILL)
            n += 1
        except OSError:  # gone meanwhile, or another user's
            continue
    return n


__all__ = ["Deadline", "MARK_VAR", "Supervised", "death_words", "exit_description", "kill_marked", "last_marked_line",
           "log_tail_lines", "oom_kill_count"]
