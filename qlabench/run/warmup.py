"""Compile ahead: run every point of a suite once, untimed, with compile groups spread over processes.

JIT compilation (TileLang, Triton autotune) costs 30-100 s per head configuration and is mostly CPU
work (nvcc, ptxas). Running the groups in parallel processes that share one kernel cache turns a sum
of compile times into roughly the longest one; the sweep that follows then finds every kernel cached.
"""

from __future__ import annotations

import collections
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from qlabench.core import identity
from qlabench.core.point import Point
from qlabench.core.spec import Suite


@dataclass(frozen=True)
class GroupResult:
    index: int
    label: str
    points: int
    returncode: int
    wall_s: float
    log_tail: str


@dataclass(frozen=True)
class BuildResult:
    backend: str
    label: str
    ok: bool
    wall_s: float
    error: str = ""


StepCallback = Callable[[str, int, int, str], None]  # (build label, done, total, what)
PointCallback = Callable[[int, str], None]  # (the point's index in the suite, "ok" / "skipped" / "error: ...")
# How a group's process reports each point as it is warmed (`qlabench _warm-group`): one line per point, read
# as it comes, so that a warm-up of long groups shows its progress point by point.
POINT_LINE = "qlabench-warmed "


def point_line(index: int, status: str) -> str:
    return f"{POINT_LINE}{index} {status}"


def parse_point_line(line: str) -> tuple[int, str] | None:
    """(index, status) of a `point_line`, or None for any other output of the process (a compiler's)."""
    if not line.startswith(POINT_LINE):
        return None
    index, _, status = line[len(POINT_LINE):].rstrip("\n").partition(" ")
    return (int(index), status) if index.isdigit() else None


def jit_builds(points: Sequence[Point], only: set[int] | None = None) -> dict[str, object]:
    """backend name -> its JitBuild, for the backends of these single-device points that have one."""
    from qlabench.backends import REGISTRY

    by_backend: dict[str, list[Point]] = {}
    for i, p in enumerate(points):
        if not p.distributed and (only is None or i in only):
            by_backend.setdefault(p.backend, []).append(p)
    out = {}
    for name, pts in by_backend.items():
        b = REGISTRY.get(name)
        build = b.jit_build(pts) if b is not None else None
        if build is not None:
            out[name] = build
    return out


class _BuildThread(threading.Thread):
    """Runs one JitBuild next to the compile groups (it is a subprocess tree: the GIL is not in its way)."""

    def __init__(self, backend: str, build, on_step: StepCallback | None):
        super().__init__(daemon=True, name=f"build-{backend}")
        self.backend, self.build, self.on_step = backend, build, on_step
        self.result: BuildResult | None = None

    def run(self) -> None:
        t0 = time.perf_counter()
        step = (lambda k, n, what: self.on_step(self.build.label, k, n, what)) if self.on_step else None
        try:
            wall = self.build.run(step)
            self.result = BuildResult(self.backend, self.build.label, True, wall)
        except Exception as e:  # reported, and that backend's groups are not run on a failed build
            self.result = BuildResult(self.backend, self.build.label, False, time.perf_counter() - t0,
                                      f"{type(e).__name__}: {e}")


def head_groups(points: Sequence[Point], only: set[int] | None = None) -> list[list[int]]:
    """Point indices grouped by compile group (backend, head configuration, dims, dtype) and mode.

    Finer than a compile group on purpose: a backend's forward and backward kernels compile
    independently, so warming them in separate processes uses more cores.
    Groups that compile a backward come first: they take the longest (on the H200, FlashQLA's backward
    groups 140-280 s against 75-190 s for a forward group), and starting the longest jobs first keeps
    the last wave of a parallel warm-up short.
    """
    # The compile group's axes and the mode; a distributed point rides with the single-device points
    # of its heads (warm_points skips it: it compiles in its own CP run), so no process is spent on it.
    axes = ("mode",) + tuple(a for a in identity.kernel_axes() if a not in identity.CP_AXES)
    groups: dict[tuple, list[int]] = {}
    for i, p in enumerate(points):
        if only is not None and i not in only:
            continue
        groups.setdefault(identity.values(p, axes), []).append(i)
    return sorted(groups.values(), key=lambda idx: points[idx[0]].mode == "fwd")


MAX_AUTO_JOBS = 8  # each warm-up process holds its own CUDA context and compiler: more crowd the GPU's memory


def compiling_points(points, device: str) -> set[int]:
    """The indices of the points a warm-up pays for: on a CUDA device, single-device points whose backend's first
    call compiles or tunes (its declaration's `compiles`). On a CPU nothing is compiled ahead (the naive
    backends are plain PyTorch, and the libraries that compile run on CUDA only)."""
    from qlabench.core.backend_decl import find

    if not device.startswith("cuda"):
        return set()
    out = set()
    for i, p in enumerate(points):
        d = find(p.backend)
        if not p.distributed and (d is None or d.compiles):  # a name nothing declares may compile: warmed
            out.add(i)
    return out


def warmup_jobs(groups: int, want: bool | None, jobs: int | None, cores: int | None = None) -> int:
    """How many processes warm `groups` compile groups ahead of a sweep (0: no warm-up). `jobs` (--warmup-jobs)
    is taken as given; `want` False is none; otherwise one per core the sweep leaves free, at most one per group
    and MAX_AUTO_JOBS, and where that is fewer than two (no core to spare) none unless `want` is True: a warm-up
    in one process before a sweep in one process only moves the compiles from one to the other."""
    if groups == 0 or want is False:
        return 0
    if jobs is not None:
        return jobs
    spare = (cores if cores is not None else len(os.sched_getaffinity(0))) - 1
    auto = min(groups, spare, MAX_AUTO_JOBS)
    if auto >= 2:
        return auto
    return max(1, auto) if want else 0


@dataclass(frozen=True)
class WarmupPlan:
    """What a warm-up ahead of a sweep will do: `jobs` processes (0: none, `why` says why) over `groups` compile
    groups of the points `only` names: indices into the points of the suite file at `path`, which the warm-up
    processes read (`qlabench _warm-group`)."""

    jobs: int
    groups: int
    points: int
    only: frozenset[int]
    path: str
    why: str = ""


def plan_warmup(todo: Sequence[Point], source: Sequence[Point], path: str, device: str, want: bool | None = None,
                jobs: int | None = None, cores: int | None = None, elsewhere: bool = False) -> WarmupPlan:
    """The warm-up ahead of a sweep that measures `todo` on `device`: `want` None lets the host decide
    (`warmup_jobs`), `jobs` sets the processes; `elsewhere`: the points run in this process or on other machines
    (Ray), whose caches a warm-up here misses. `source`: the points of the suite file at `path`, in its order."""
    if want is False:
        return WarmupPlan(0, 0, 0, frozenset(), path, "--no-warmup")
    if elsewhere:
        return WarmupPlan(0, 0, 0, frozenset(), path, "the points run in this process or elsewhere")
    path = str(Path(path))
    if not Path(path).is_file():
        return WarmupPlan(0, 0, 0, frozenset(), path, "the suite has no file the warm-up processes can read")
    mine = {todo[i] for i in compiling_points(todo, device)}
    only = frozenset(i for i, p in enumerate(source) if p in mine)
    groups = len(head_groups(source, set(only)))
    n = warmup_jobs(groups, want, jobs, cores)
    why = "" if n else ("nothing here compiles" if not groups else "no core to spare for it")
    return WarmupPlan(n, groups, len(only), only, path, why)


def warm_points(suite: Suite, indices: list[int], device: str,
                on_point: PointCallback | None = None) -> list[tuple[int, str]]:
    """Run each point once at its check size and at full size (no timing); returns (index, status), each
    also handed to `on_point` as soon as the point is done."""
    import torch

    from qlabench.measure import caches as cache
    from qlabench.backends import REGISTRY
    from qlabench.measure.inputs import make_inputs, reduced_seqlens

    cache.configure()  # before any backend imports its library

    out: list[tuple[int, str]] = []

    def done(i: int, status: str) -> None:
        out.append((i, status))
        if on_point:
            on_point(i, status)

    for i in indices:
        p = suite.points[i]
        b = REGISTRY.get(p.backend)
        if p.distributed or b is None or not b.available()[0] or not b.supports(p, device)[0]:
            done(i, "skipped")
            continue
        try:
            for lens in {reduced_seqlens(p, suite.check.oracle_max_tokens), p.seqlens}:
                b.prepare_point(p, make_inputs(p, device, seqlens=lens))()
            if torch.device(device).type == "cuda":
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
            done(i, "ok")
        except Exception as e:  # a warm-up failure is reported; the sweep itself will record it
            done(i, f"error: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}")
    return out


class _Group:
    """A running group process whose output is read as it comes: point lines go to `on_point`, the rest is
    kept for the log tail (a thread per process: a pipe left unread would stall a chatty compiler)."""

    def __init__(self, index: int, idx: list[int], proc: subprocess.Popen, on_point: PointCallback | None):
        self.index, self.idx, self.proc, self.t0 = index, idx, proc, time.perf_counter()
        self.lines: collections.deque[str] = collections.deque(maxlen=400)
        self.on_point = on_point
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout or ():
            self.lines.append(line)
            if self.on_point and (parsed := parse_point_line(line)):
                self.on_point(*parsed)

    def log_tail(self) -> str:
        self.reader.join(timeout=10)
        return "".join(self.lines)[-2000:]


def warm_suite(suite_path: str, points: Sequence[Point], jobs: int, device: str | None, only: set[int] | None = None,
               on_done: Callable[[GroupResult], None] | None = None,
               on_build_step: StepCallback | None = None,
               on_build_done: Callable[[BuildResult], None] | None = None,
               on_point: PointCallback | None = None) -> list[GroupResult]:
    """Warm all compile groups of the suite file `suite_path`, whose `points` they are (or of the points `only`
    names), with up to `jobs` processes at once; `on_done` hears of each group as it ends, `on_point` of each point
    as its group's process warms it. The processes read the file and warm its points by their index there.

    A backend with a JitBuild (FlashInfer) builds first, in a thread beside the other groups; its own
    groups start when the build is done, and are reported failed without running if it failed."""
    groups = head_groups(points, only)
    builds = {name: _BuildThread(name, b, on_build_step) for name, b in jit_builds(points, only).items()}
    for t in builds.values():
        t.start()
    reported: set[str] = set()
    pending = list(enumerate(groups))
    running: list[_Group] = []
    results: list[GroupResult] = []
    env = dict(os.environ, PYTHONUNBUFFERED="1")

    def waiting(idx: list[int]) -> bool:
        t = builds.get(points[idx[0]].backend)
        return t is not None and t.is_alive()

    def report_builds() -> None:
        for name, t in builds.items():
            if not t.is_alive() and name not in reported:
                reported.add(name)
                if on_build_done and t.result:
                    on_build_done(t.result)

    while pending or running or any(t.is_alive() for t in builds.values()):
        report_builds()
        ready = []
        for gi, idx in [g for g in pending if not waiting(g[1])]:
            t = builds.get(points[idx[0]].backend)
            if t is None or t.result is None or t.result.ok:
                ready.append((gi, idx))
                continue
            pending.remove((gi, idx))  # its build failed: reported, not run
            res = GroupResult(gi, _label(points[idx[0]]), len(idx), 1, 0.0,
                              f"not run: error: {t.result.label} failed: {t.result.error}")
            results.append(res)
            if on_done:
                on_done(res)
        while ready and len(running) < max(1, jobs):
            gi, idx = ready.pop(0)
            pending.remove((gi, idx))
            cmd = [sys.executable, "-m", "qlabench", "_warm-group", "--suite", suite_path,
                   "--indices", ",".join(map(str, idx))]
            if device:
                cmd += ["--device", device]
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
            running.append(_Group(gi, idx, proc, on_point))
        time.sleep(0.2)
        for group in list(running):
            if group.proc.poll() is None:
                continue
            running.remove(group)
            res = GroupResult(group.index, _label(points[group.idx[0]]), len(group.idx),
                              group.proc.returncode, time.perf_counter() - group.t0, group.log_tail())
            results.append(res)
            if on_done:
                on_done(res)
    report_builds()
    return sorted(results, key=lambda r: r.index)


def _label(p: Point) -> str:
    return f"{p.backend} {p.mode} {identity.heads_label(p.h_qk, p.h_v)} K{p.K} V{p.V} {p.dtype}"
