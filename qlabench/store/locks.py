"""A lock for a file's read-modify-write: `baseline save` and `merge --into` read what is there and
write a new version; two at once would both read the old file and the last rename would lose the
other's rows (both exiting 0).

The lock is an flock on a dot-file beside the target (`.<name>.lock`): it is released when its
process ends, even by kill -9, so a crashed writer never leaves a stale lock behind. Its holder writes
who it is (pid, host, since when) into the file, so a writer that finds the lock held can say who holds
it. Writers wait for it a bounded time (`wait_s`, `--lock-wait`), then give up with that name: a live
holder that never lets go (a stuck process, a second save left in a terminal) is an error, not a hang.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import math
import os
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from qlabench.core.errors import ConfigError, StoreError

DEFAULT_WAIT_S = 60.0  # a save or merge holds the lock for seconds: a minute is many of them
MAX_WAIT_S = 24 * 3600.0
POLL_S = 0.1


def lock_path(target: str | os.PathLike) -> Path:
    target = Path(target)
    return target.parent / f".{target.name}.lock"


def holder(path: str | os.PathLike) -> str:
    """Who holds the lock file `path`, as its holder wrote it: 'pid P on host H since T (N s ago)'."""
    try:
        info = json.loads(Path(path).read_text())
        since = dt.datetime.fromisoformat(info["since"])
        ago = (dt.datetime.now(dt.timezone.utc) - since).total_seconds()
        return f"pid {int(info['pid'])} on host {info['host']} since {info['since']} ({ago:.0f} s ago)"
    except (OSError, ValueError, KeyError, TypeError):  # taken, but its holder has not written itself yet
        return "another process (not yet recorded in the lock file)"


def _try_lock(f) -> bool:
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released by close, or by the kernel when the process dies
        return True
    except BlockingIOError:
        return False


@contextlib.contextmanager
def locked(target: str | os.PathLike, wait_s: float = DEFAULT_WAIT_S,
           on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold the write lock of `target` while the body reads and writes it.

    A lock held by another process is waited for at most `wait_s` seconds (0: not at all); `on_wait` is
    told once who holds it. StoreError, naming the holder, when it is still held after that."""
    if isinstance(wait_s, bool) or not isinstance(wait_s, (int, float)) or not 0 <= wait_s <= MAX_WAIT_S \
            or math.isnan(wait_s):
        raise ConfigError(f"--lock-wait must be between 0 and {MAX_WAIT_S:g} seconds, got {wait_s}")
    path = lock_path(target)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        f = open(path, "a+")
    except OSError as e:
        raise StoreError(f"cannot lock {target}: {e.strerror or e}") from None
    with f:
        if not _try_lock(f):
            if on_wait:
                on_wait(f"{target} is locked by {holder(path)}; waiting up to {wait_s:g} s for it")
            deadline = time.monotonic() + wait_s
            while not _try_lock(f):
                if time.monotonic() >= deadline:
                    raise StoreError(f"{target} is locked by {holder(path)}; gave up after {wait_s:g} s "
                                     f"(--lock-wait); nothing was written. Wait for that process, or end it")
                time.sleep(POLL_S)
        f.truncate(0)  # "a+": every write goes to the end, which is now the start
        f.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                            "since": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}))
        f.flush()
        yield
