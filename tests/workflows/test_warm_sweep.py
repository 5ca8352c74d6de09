"""A sweep's warm-up (workflows/warm_sweep.py; planned by run/plan.py with run/warmup.py): how many processes the
host can spare, which points compile, and a warm-up that runs before the sweep's first point."""

from __future__ import annotations

import dataclasses

from qlabench.core.point import Point
from qlabench.core.spec import load_suite
from qlabench.run.options import InProcess, RunOptions
from qlabench.run.plan import Warmup, plan_sweep
from qlabench.run.warmup import WarmupPlan, compiling_points, warmup_jobs
from qlabench.workflows.warm_sweep import warm_then_sweep


def _p(backend: str, distributed: bool = False) -> Point:
    extra = {"cp_world_size": 2, "cp_mode": "inter"} if distributed else {}
    return Point(backend=backend, mode="fwd", layout="dense", batch=1, seqlens=(64,), h_qk=1, h_v=2, K=16, V=16,
                 dtype="float32", **extra)


def test_the_host_warms_with_its_spare_cores_and_never_where_it_has_none():
    assert warmup_jobs(groups=12, want=None, jobs=None, cores=16) == 8  # at most 8 processes
    assert warmup_jobs(groups=3, want=None, jobs=None, cores=16) == 3  # at most one per group
    assert warmup_jobs(groups=12, want=None, jobs=None, cores=2) == 0  # one spare core: a warm-up saves nothing
    assert warmup_jobs(groups=12, want=True, jobs=None, cores=2) == 1  # unless asked for
    assert warmup_jobs(groups=12, want=None, jobs=5, cores=2) == 5
    assert warmup_jobs(groups=12, want=False, jobs=None, cores=64) == 0
    assert warmup_jobs(groups=0, want=True, jobs=4, cores=64) == 0  # nothing compiles: nothing to warm


def test_only_points_of_compiling_backends_on_cuda_are_warmed():
    points = (_p("naive-chunk"), _p("fla"), _p("flash_qla"), _p("naive-recurrent"), _p("some.module:fn"))
    assert compiling_points(points, "cuda") == {1, 2, 4}  # a name nothing declares may compile
    assert compiling_points(points, "cuda:1") == {1, 2, 4}
    assert compiling_points(points, "cpu") == set()  # the libraries that compile run on CUDA only


def test_a_cpu_sweep_of_the_naive_backends_plans_no_warm_up(data_dir):
    suite = str(data_dir / "tiny-cpu.toml")
    plan = plan_sweep(suite, RunOptions(device="cpu"), warmup=Warmup(cores=64)).warmup
    assert plan.jobs == 0 and plan.why == "nothing here compiles"
    assert plan_sweep(suite, RunOptions(executor=InProcess()), warmup=Warmup(want=True)).warmup.jobs == 0
    assert plan_sweep(suite, RunOptions(), warmup=Warmup(want=False)).warmup.why == "--no-warmup"


def test_the_warm_up_runs_before_the_sweep_and_the_sweep_measures_every_point(data_dir, tmp_path):
    """On a CPU nothing is planned; a plan made by hand runs the same machinery: the warm-up's processes warm the
    points, then the sweep measures them, and the warm-up's seconds are its own."""
    path = str(data_dir / "tiny-cpu.toml")
    suite = load_suite(path)
    plan = plan_sweep(dataclasses.replace(suite, points=suite.points[:2]), RunOptions(device="cpu"))
    plan = dataclasses.replace(plan, source=suite.points,
                               warmup=WarmupPlan(jobs=2, groups=2, points=2, only=frozenset({0, 1}), path=path))
    order = []

    class Heard:
        def start(self, total):
            order.append(("sweep", total))

        def point_started(self, p):
            pass

        def point_done(self, row):
            pass

    res, warmed = warm_then_sweep(plan, tmp_path, progress=Heard(),
                                  on_warm_point=lambda i, status: order.append(("warm", i, status)))
    assert sorted(order[:2]) == [("warm", 0, "ok"), ("warm", 1, "ok")] and order[2] == ("sweep", 2)
    assert warmed is not None and warmed.failed == 0 and warmed.wall_s > 0 and warmed.jobs == 2
    assert [r.status for r in res.rows] == ["ok", "ok"]
    assert res.time_breakdown(warmed.wall_s).total_s > res.wall_s


def test_a_resumed_sweep_warms_only_what_it_still_measures(data_dir, tmp_path):
    from qlabench.run.plan import still_to_run
    from qlabench.run.sweep import run_sweep

    suite = load_suite(str(data_dir / "tiny-cpu.toml"))
    run_sweep(dataclasses.replace(suite, points=suite.points[:2]), tmp_path, RunOptions(device="cpu"))
    left = still_to_run(suite, tmp_path, RunOptions(device="cpu", resume=True))
    assert left == list(suite.points[2:])
    assert still_to_run(suite, tmp_path, RunOptions(device="cpu")) == list(suite.points)


def test_a_gpu_suite_is_planned_on_a_host_without_one(tmp_path):
    """A dry run prices a GPU suite on a CPU box: its warm-up is planned for the device the suite asks for (the
    sweep itself refuses a device that is not there)."""
    suite = load_suite("h200-smoke")
    plan = plan_sweep("h200-smoke", RunOptions(), on_device=False, warmup=Warmup(cores=16)).warmup
    compiling = [p for p in suite.points if not p.backend.startswith("naive")]
    assert plan.points == len(compiling) and 0 < plan.groups <= plan.points and plan.jobs == min(plan.groups, 8)
    resumed = plan_sweep("h200-smoke", RunOptions(resume=True), on_device=False, warmup=Warmup(cores=16), out=tmp_path)
    assert resumed.warmup.points == plan.points
