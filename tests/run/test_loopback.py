"""A single-node run listens on loopback only (no unauthenticated *:PORT)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from netwatch import descendants, is_loopback, listening

from qlabench.core.spec import load_suite

DATA = Path(__file__).resolve().parents[1] / "data"


def test_netwatch_sees_a_wildcard_listener():
    import socket

    s = socket.socket()
    s.bind(("0.0.0.0", 0))
    s.listen()
    try:
        seen = listening([os.getpid()])
        assert any(not is_loopback(a) for a in seen), seen
    finally:
        s.close()


def test_a_distributed_cpu_sweep_listens_on_loopback_only(tmp_path):
    from qlabench.run.sweep import run_sweep

    suite = load_suite(str(DATA / "cp-cpu.toml"))
    result: dict = {}
    t = threading.Thread(target=lambda: result.update(res=run_sweep(suite, tmp_path)))
    t.start()
    seen: set[str] = set()
    while t.is_alive():
        seen |= listening(descendants(os.getpid()))
        time.sleep(0.05)
    t.join()
    assert result["res"].rows and all(r.status == "ok" for r in result["res"].rows)
    assert seen, "the ranks' gloo sockets should have been seen listening"
    assert all(is_loopback(a) for a in seen), f"listening beyond loopback: {sorted(seen)}"


def test_local_ray_is_started_on_loopback_and_a_remote_cluster_needs_multi_node():
    from qlabench.core.errors import QlabenchError
    from qlabench.run.executors.ray_executor import ray_init_kwargs

    assert ray_init_kwargs(None)["_node_ip_address"] == "127.0.0.1"
    assert ray_init_kwargs("127.0.0.1:6379")["address"] == "127.0.0.1:6379"
    assert ray_init_kwargs("auto")["address"] == "auto"
    for remote in ("10.0.0.5:6379", "ray://head.example:10001"):
        with pytest.raises(QlabenchError, match="--multi-node"):
            ray_init_kwargs(remote)
        assert ray_init_kwargs(remote, multi_node=True)["address"] == remote


def test_the_cli_refuses_a_remote_ray_address_without_multi_node(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from qlabench.cli import app

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", str(DATA / "tiny-cpu.toml"), "--out", str(tmp_path),
                                 "--executor", "ray", "--ray-address", "10.0.0.5:6379"])
    assert r.exit_code == 2 and "--multi-node" in r.output
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.5:6379")
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", str(DATA / "tiny-cpu.toml"), "--out", str(tmp_path),
                                 "--executor", "ray", "--dry-run"])
    assert r.exit_code == 2 and "--multi-node" in r.output


DRIVER = """
import os, subprocess, sys, time
from qlabench.run.reaper import children_of, start_reaper
kids = [subprocess.Popen(["sleep", "300"]) for _ in range(2)]
grandchild_parent = subprocess.Popen(["sh", "-c", "sleep 300 & wait"])
time.sleep(0.3)
start_reaper(children_of(os.getpid()))
print(" ".join(str(k.pid) for k in kids + [grandchild_parent]), flush=True)
time.sleep(300)
"""


def test_helpers_of_a_killed_driver_are_reaped(tmp_path):
    """What a local Ray's GCS and raylet get: kill -9 of the sweep leaves none of them behind."""
    import signal
    import subprocess
    import sys

    from qlabench.run.reaper import _tree

    drv = subprocess.Popen([sys.executable, "-c", DRIVER], stdout=subprocess.PIPE, text=True)
    pids = {int(p) for p in drv.stdout.readline().split()}
    tree = _tree(pids)
    assert len(tree) >= 4  # two sleeps, the shell and its sleep
    drv.send_signal(signal.SIGKILL)
    drv.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(os.path.exists(f"/proc/{p}") and "Z" not in _state(p) for p in tree):
        time.sleep(0.1)
    assert not [p for p in tree if os.path.exists(f"/proc/{p}") and "Z" not in _state(p)]


def _state(pid: int) -> str:
    try:
        return next(ln for ln in Path(f"/proc/{pid}/status").read_text().splitlines() if ln.startswith("State:"))
    except (OSError, StopIteration):
        return "Z"
