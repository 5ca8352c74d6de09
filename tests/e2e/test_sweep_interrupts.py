"""Ctrl-C and SIGTERM keep and compact the rows so far and say how to resume; no
temp folder of a sweep outlives it (kill -9: the next sweep removes it)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from qlabench.store.files import read_results

# 60 points: enough that the signal always lands mid-sweep, even on an idle machine (with 8, an idle
# box finished the sweep before the signal arrived).
SLOW = """
name = "slow"
device = "cpu"
[sweep]
backends = ["fault"]
modes = ["fwd"]
seqlen = [8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40, 42, 44, 46, 48, 50, 52, 54, 56, 58, 60, 62, 64, 66, 68, 70, 72, 74, 76, 78, 80, 82, 84, 86, 88, 90, 92, 94, 96, 98, 100, 102, 104, 106, 108, 110, 112, 114, 116, 118, 120, 122, 124, 126]
heads = [{ h_qk = 1, h_v = 1 }]
K = 8
V = 26
dtype = "float32"
[timing]
timer = "wall"
warmup = 0
min_samples = 2
max_samples = 2
max_time_s = 0.1
target_rel_noise = 0.5
[check]
oracle_max_tokens = 32
"""


def _start(tmp_path: Path) -> tuple[subprocess.Popen, Path, Path]:
    suite = tmp_path / "slow.toml"
    suite.write_text(SLOW)
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "qlabench", "run", "sweep", "--suite", str(suite), "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "TMPDIR": str(tmp)},
                            start_new_session=True)
    return proc, out, tmp


def _wait_parts(out: Path, n: int, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if len(list(out.glob("slow/*/part-*.parquet"))) >= n:
            return
        time.sleep(0.05)
    pytest.fail("the sweep did not write its first parts in time")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_sweep_compacts_its_rows_and_says_how_to_resume(tmp_path, sig):
    proc, out, tmp = _start(tmp_path)
    _wait_parts(out, 2, proc)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    err = err.decode()
    assert proc.returncode == 130, err
    assert "interrupted:" in err and "row(s) kept" in err and "--resume" in err
    files = list((out / "slow").glob("*.parquet"))
    assert len(files) == 1 and not [d for d in (out / "slow").iterdir() if d.is_dir()]  # compacted
    assert len(read_results(files)) >= 2
    assert not list(tmp.glob("qlabench-workers-*")), "the workers' temp folder outlived the sweep"


def test_the_temp_folder_of_a_killed_sweep_is_removed_by_the_next(tmp_path):
    proc, out, tmp = _start(tmp_path)
    _wait_parts(out, 1, proc)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    left = list(tmp.glob(f"qlabench-workers-{proc.pid}-*"))
    assert left  # kill -9 cannot clean up after itself
    from qlabench.run.tempdirs import private_temp_dir

    os.environ["TMPDIR"], old = str(tmp), os.environ.get("TMPDIR")
    import tempfile

    tempfile.tempdir = None
    try:
        fresh = private_temp_dir("qlabench-workers-")
    finally:
        tempfile.tempdir = None
        if old is None:
            del os.environ["TMPDIR"]
        else:
            os.environ["TMPDIR"] = old
    assert not any(p.exists() for p in left) and Path(fresh).is_dir()
    Path(fresh).rmdir()
