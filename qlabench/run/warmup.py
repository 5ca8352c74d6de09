"""Compile ahead: run every point of a suite once, untimed, with compile groups spread over processes.

JIT compilation (TileLang, Triton autotune) costs 30-100 s per head configuration and is mostly CPU
work (nvcc, ptxas). Running the groups in parallel processes that share one kernel cache turns a sum
of compile times into roughly the longest one; the sweep that follows then finds every kernel cached.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

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


def head_groups(points: tuple[Point, ...]) -> list[list[int]]:
    """Point indices grouped by backend, mode, head configuration, dims and dtype.

    Finer than a compile group on purpose: a backend's forward and backward kernels compile
    independently, so warming them in separate processes uses more cores.
    Groups that compile a backward come first: they take the longest (on the H200, FlashQLA's backward
    groups 140-280 s against 75-190 s for a forward group), and starting the longest jobs first keeps
    the last wave of a parallel warm-up short.
    """
    groups: dict[tuple, list[int]] = {}
    for i, p in enumerate(points):
        groups.setdefault((p.backend, p.mode, p.h_qk, p.h_v, p.K, p.V, p.dtype), []).append(i)
    return sorted(groups.values(), key=lambda idx: points[idx[0]].mode == "fwd")


def warm_points(suite: Suite, indices: list[int], device: str) -> list[tuple[int, str]]:
    """Run each point once at its check size and at full size (no timing); returns (index, status)."""
    import torch

    from qlabench.measure import caches as cache
    from qlabench.backends import REGISTRY
    from qlabench.measure.inputs import make_inputs, reduced_seqlens

    cache.configure()  # before any backend imports its library

    out = []
    for i in indices:
        p = suite.points[i]
        b = REGISTRY.get(p.backend)
        if p.distributed or b is None or not b.available()[0] or not b.supports(p, device)[0]:
            out.append((i, "skipped"))
            continue
        try:
            for lens in {reduced_seqlens(p, suite.check.oracle_max_tokens), p.seqlens}:
                b.prepare(p.mode, make_inputs(p, device, seqlens=lens))()
            if torch.device(device).type == "cuda":
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
            out.append((i, "ok"))
        except Exception as e:  # a warm-up failure is reported; the sweep itself will record it
            out.append((i, f"error: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"))
    return out


def warm_suite(suite_path: str, suite: Suite, jobs: int, device: str | None,
               on_done: Callable[[GroupResult], None] | None = None) -> list[GroupResult]:
    """Warm all compile groups of a suite with up to `jobs` processes at once."""
    groups = head_groups(suite.points)
    pending = list(enumerate(groups))
    running: list[tuple[int, list[int], subprocess.Popen, float]] = []
    results: list[GroupResult] = []
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    while pending or running:
        while pending and len(running) < max(1, jobs):
            gi, idx = pending.pop(0)
            cmd = [sys.executable, "-m", "qlabench", "_warm-group", "--suite", suite_path,
                   "--indices", ",".join(map(str, idx))]
            if device:
                cmd += ["--device", device]
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
            running.append((gi, idx, proc, time.perf_counter()))
        time.sleep(0.2)
        for item in list(running):
            gi, idx, proc, t0 = item
            if proc.poll() is None:
                continue
            running.remove(item)
            log = proc.stdout.read() if proc.stdout else ""
            p = suite.points[idx[0]]
            res = GroupResult(gi, f"{p.backend} {p.mode} h{p.h_qk}/{p.h_v} K{p.K} V{p.V} {p.dtype}", len(idx), proc.returncode,
                              time.perf_counter() - t0, log[-2000:])
            results.append(res)
            if on_done:
                on_done(res)
    return sorted(results, key=lambda r: r.index)
