"""The Ray executor on a local Ray cluster with two fake GPUs: same rows as the local executor, and a
Ray worker killed mid-sweep costs only its in-flight point, which --resume then measures."""

from __future__ import annotations

import functools
import os
import signal
from pathlib import Path

import pytest

from qlabench.run.options import RunOptions
from qlabench.run.executors.ray_executor import actor_options, cluster_slots, default_resources
from qlabench.store.keys import key_of
from qlabench.run.sweep import run_sweep
from qlabench.core.spec import load_suite
from qlabench.store.files import read_rows

ray = pytest.importorskip("ray")
from qlabench.run.executors.ray_executor import RayExecutor

TINY = Path(__file__).resolve().parents[1] / "data" / "tiny-cpu.toml"
FAKE_GPUS = 2


def test_actor_resources():
    assert default_resources("cuda:0") == {"GPU": 1.0} and default_resources("cpu") == {"CPU": 1.0}
    opts = actor_options({"GPU": 1, "gpu_slot": 2})
    assert opts["num_gpus"] == 1 and opts["resources"] == {"gpu_slot": 2} and opts["max_restarts"] == 0
    assert cluster_slots({"GPU": 8.0, "CPU": 64.0}, {"GPU": 1}) == 8
    assert cluster_slots({"CPU": 2.0}, {"GPU": 1}) == 0


@pytest.fixture(scope="module")
def cluster():
    # A CPU-only machine may still declare GPUs to Ray's scheduler: these are the fake GPUs.
    ray.init(num_cpus=2, num_gpus=FAKE_GPUS, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def suite():
    return load_suite(str(TINY))


@pytest.fixture(scope="module")
def local_rows(suite, tmp_path_factory):
    return run_sweep(suite, tmp_path_factory.mktemp("local")).rows


def keys_statuses(rows):
    return {(key_of(r), r.status) for r in rows}


def test_ray_gives_the_same_rows_as_the_local_executor(cluster, suite, local_rows, tmp_path):
    made = []

    def make(job, device, env):
        made.append(RayExecutor(job, device, env, resources={"GPU": 1}))
        return made[0]

    res = run_sweep(suite, tmp_path, RunOptions(executor=make))
    assert made[0].n_slots == FAKE_GPUS and res.workers_started == FAKE_GPUS
    assert keys_statuses(res.rows) == keys_statuses(local_rows)
    assert keys_statuses(read_rows(res.path)) == keys_statuses(local_rows)  # written through the same store


class KillOneWorker:
    """Progress that SIGKILLs the Ray actor of a busy slot when the first row arrives."""

    def __init__(self):
        self.executor = None
        self.before_kill = []
        self.killed = False

    def start(self, total):
        pass

    def point_started(self, point):
        pass

    def point_done(self, row):
        if self.killed:
            return
        self.before_kill.append(row)
        busy = [i for i, st in enumerate(self.executor.slots) if st.current is not None]
        pid = self.executor.actor_pids()[busy[0]]
        os.kill(pid, signal.SIGKILL)
        self.killed = True


def test_a_killed_ray_worker_costs_only_its_point_and_resume_finishes(cluster, suite, local_rows, tmp_path):
    prog = KillOneWorker()

    def make(job, device, env):
        prog.executor = RayExecutor(job, device, env, resources={"GPU": 1})
        return prog.executor

    res = run_sweep(suite, tmp_path, RunOptions(executor=make), progress=prog)
    assert prog.killed
    lost = [r for r in res.rows if r.status == "error"]
    assert len(lost) == 1 and lost[0].reason.startswith("ray worker lost")
    assert prog.executor.actors_lost == 1
    assert len(res.rows) == len(suite.points)  # the lost actor's group went on, on a fresh actor
    written = {(key_of(r), r.status, r.timestamp) for r in read_rows(res.path)}
    assert {(key_of(r), r.status, r.timestamp) for r in prog.before_kill} <= written

    again = run_sweep(suite, tmp_path, RunOptions(executor=functools.partial(RayExecutor, resources={"GPU": 1}), resume=True))
    assert again.resumed == len(suite.points) - 1 and len(again.rows) == 1
    assert keys_statuses(r for r in res.rows + again.rows if r.status == "ok") == keys_statuses(local_rows)
