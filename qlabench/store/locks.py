"""A lock for a file's read-modify-write: `baseline save` and `merge --into` read what is there and
write a new version; two at once would both read the old file and the last rename would lose the
other's rows (both exiting 0).

The lock is an flock on a dot-file beside the target (`.<name>.lock`): it is released when its
process ends, even by kill -9, so a crashed writer never leaves a stale lock behind. Writers wait
for it; they do not fail.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from qlabench.core.errors import StoreError


def lock_path(target: str | os.PathLike) -> Path:
    target = Path(target)
    return target.parent / f".{target.name}.lock"


@contextlib.contextmanager
def locked(target: str | os.PathLike) -> Iterator[None]:
    """Hold the write lock of `target` (waiting for any other holder) while the body reads and writes it."""
    path = lock_path(target)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        f = open(path, "a+")
    except OSError as e:
        raise StoreError(f"cannot lock {target}: {e.strerror or e}") from None
    with f:
        fcntl.flock(f, fcntl.LOCK_EX)  # released by close, or by the kernel when the process dies
        yield
