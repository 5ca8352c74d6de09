"""Timing one distributed point on one rank: warm-up, kernel capture, synchronised iterations.

Every iteration starts after an L2 flush (CUDA), a barrier and a device synchronisation, so the ranks
start it together; CUDA events (wall clock on CPU) split it into forward and backward. Every rank takes
the same number of samples, so rank 0 can take the end-to-end time of iteration i as the slowest rank's.
"""

from __future__ import annotations

import math
import time

import torch

from qlabench.backends import Backend
from qlabench.core.point import Point
from qlabench.measure.env import physical_index
from qlabench.measure.probes import clocks as gpustate
from qlabench.run.distributed.local import Step
from qlabench.run.distributed.rank import Rank
from qlabench.run.point import kernel_columns


def measure_rank(step: Step, rk: Rank, p: Point, backend: Backend) -> dict:
    """Warm-up, kernel capture (CUDA), then n synchronised iterations; this rank's samples (ms).

    The run's timer plan (`rk.timer`) gives the warm-up, the L2 flush, the sample count's bounds and the
    timing regime: in the sustained one, the iterations first run back to back for its lead-in
    (`plan.preheat_ms`, as run_point's timers do), the same count on every rank.

    Returns {"fwd", "bwd", "total": per-iteration times, "sampling_s"} and on CUDA also this rank's
    "kernel_fields", "provenance" (the backend's kernel-name check) and "gpu_before"/"gpu_after" NVML
    snapshots. Collectives inside: every rank must call it.
    """
    plan = rk.timer
    flush = lambda: None  # noqa: E731
    if rk.on_cuda and plan.l2_flush:
        from qlabench.measure.timing.cuda import L2Flusher

        flush = L2Flusher(True)

    def one() -> tuple[float, float, float]:
        flush()
        rk.barrier()
        if rk.on_cuda:
            e0, e1, e2 = (torch.cuda.Event(enable_timing=True) for _ in range(3))
            e0.record()
            out = step.forward()
            e1.record()
            step.backward(out)
            e2.record()
            torch.cuda.synchronize()
            return e0.elapsed_time(e1), e1.elapsed_time(e2), e0.elapsed_time(e2)
        t0 = time.perf_counter()
        out = step.forward()
        t1 = time.perf_counter()
        step.backward(out)
        t2 = time.perf_counter()
        return (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t2 - t0) * 1e3

    warm = [one()[2] for _ in range(max(1, plan.warmup))]
    res: dict = {}
    if rk.on_cuda:
        rk.barrier()
        num_sms = torch.cuda.get_device_properties(rk.local_rank).multi_processor_count
        kf = kernel_columns(step, num_sms)
        res["kernel_fields"] = kf
        res["provenance"] = backend.provenance_error(list(kf["kernels"]))
        nvml_index = physical_index(rk.local_rank)
        res["gpu_before"] = gpustate.snapshot(nvml_index)
    # The same sample count on every rank: from the slowest rank's warm-up estimate.
    est = max(rk.gather_all(sorted(warm)[len(warm) // 2]))
    n = int(plan.rule.max_time_s * 1e3 / max(est, 1e-6))
    n = max(plan.rule.min_samples, min(plan.rule.max_samples, n))
    for _ in range(lead_in_calls(plan.preheat_ms, est)):  # the regime's lead-in: the GPU kept busy first
        one()
    t0 = time.perf_counter()
    fwd, bwd, total = [], [], []
    for _ in range(n):
        a, b, c = one()
        fwd.append(a)
        total.append(c)
        if p.has_backward:
            bwd.append(b)
    res.update(fwd=fwd, bwd=bwd, total=total, sampling_s=time.perf_counter() - t0)
    if rk.on_cuda:
        res["gpu_after"] = gpustate.snapshot(nvml_index)
    return res


def lead_in_calls(preheat_ms: float, est_ms: float) -> int:
    """Iterations that fill `preheat_ms` at `est_ms` each (none in a burst; at least one in a lead-in)."""
    if preheat_ms <= 0:
        return 0
    return max(1, math.ceil(preheat_ms / max(est_ms, 1e-6)))


def rank0_columns(r0: dict) -> dict:
    """Row fields only rank 0's measurement carries (its kernels, its sampling time)."""
    out = {"sampling_s": r0.get("sampling_s")}
    out.update(r0.get("kernel_fields") or {})
    return out
