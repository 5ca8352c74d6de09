"""The write lock of a file's read-modify-write (store/locks.py): a writer that finds it held says who holds
it and since when, waits a bounded time, and gives up with a clear error instead of waiting forever."""

from __future__ import annotations

import math
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from qlabench.core.errors import QlabenchError, StoreError
from qlabench.store.locks import locked

HOLD = ("import sys, time; from qlabench.store.locks import locked\n"
        "with locked(sys.argv[1]):\n    print('held', flush=True); time.sleep(float(sys.argv[2]))\n")


def hold(target: Path, seconds: float = 120.0) -> subprocess.Popen:
    """Another process holding `target`'s lock for `seconds` (returns once it holds it)."""
    p = subprocess.Popen([sys.executable, "-c", HOLD, str(target), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    return p


def test_a_held_lock_names_its_holder_and_gives_up_after_the_wait(tmp_path):
    target = tmp_path / "b.parquet"
    holder = hold(target)
    notes = []
    try:
        t = time.monotonic()
        with pytest.raises(StoreError) as e:
            with locked(target, wait_s=0.5, on_wait=notes.append):
                pytest.fail("the lock was taken while another process held it")
        assert time.monotonic() - t < 10
    finally:
        holder.kill()
        holder.wait()
    msg = str(e.value)
    assert f"pid {holder.pid}" in msg and socket.gethostname() in msg and "since" in msg and "0.5 s" in msg
    assert len(notes) == 1 and f"pid {holder.pid}" in notes[0]


def test_a_lock_released_within_the_wait_is_taken(tmp_path):
    target = tmp_path / "b.parquet"
    holder = hold(target, seconds=1.0)
    try:
        t = time.monotonic()
        with locked(target, wait_s=60):
            assert time.monotonic() - t >= 0.5  # taken only once the holder let go, after its second
    finally:
        holder.wait()


@pytest.mark.parametrize("wait_s", [-1, math.nan, math.inf, 1e9])
def test_the_wait_is_bounded(tmp_path, wait_s):
    with pytest.raises(QlabenchError, match="lock-wait"):
        with locked(tmp_path / "b.parquet", wait_s=wait_s):
            pass
