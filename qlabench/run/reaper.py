"""No orphans: processes a sweep starts die with it.

Worker subprocesses, distributed launches and their ranks ask Linux to kill them with their parent
(`die_with_parent`: PR_SET_PDEATHSIG, the one helper for it), but processes started by a library (Ray's
local cluster: its GCS and raylet) do not. `start_reaper(pids)` starts a small watcher process that polls the
sweep's process; once the sweep is gone, by any death including `kill -9`, it kills the given
processes and everything below them. A clean shutdown stops the reaper first (`stop_reaper`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def die_with_parent(parent_pid: int | None = None) -> None:
    """Ask Linux to SIGKILL this process when its parent dies (even by kill -9).

    parent_pid: the parent expected; if it is already gone (it died before the request took effect),
    exit at once. Also usable as a `preexec_fn`, with the starting process's pid bound."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if parent_pid is not None and os.getppid() != parent_pid:
        os._exit(1)


def children_of(pid: int) -> set[int]:
    """Direct children of `pid` (from /proc)."""
    out = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.add(int(d.name))
            except (OSError, IndexError, ValueError):
                pass
    return out


def _tree(roots: set[int]) -> set[int]:
    out, frontier = set(), set(roots)
    while frontier:
        out |= frontier
        frontier = set().union(*(children_of(p) for p in frontier)) - out
    return out


def _start_time(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def start_reaper(pids: set[int], owner: int | None = None) -> subprocess.Popen | None:
    """Watch `owner` (default: this process); when it dies, kill `pids` and their descendants."""
    if not pids:
        return None
    owner = owner or os.getpid()
    spec = ",".join(f"{p}:{_start_time(p)}" for p in sorted(pids))
    code = f"from qlabench.run.reaper import main; main({owner}, {_start_time(owner)!r}, {spec!r})"
    return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def stop_reaper(proc: subprocess.Popen | None) -> None:
    if proc is not None and proc.poll() is None:
        proc.kill()
        proc.wait()


def main(owner: int, owner_start: str | None, spec: str, poll_s: float = 0.5) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    watched = {int(p): s for p, s in (item.split(":", 1) for item in spec.split(",") if item)}
    while _start_time(owner) == owner_start and owner_start is not None:
        time.sleep(poll_s)
    alive = {p for p, s in watched.items() if _start_time(p) == s}  # not a reused pid
    for pid in _tree(alive):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
