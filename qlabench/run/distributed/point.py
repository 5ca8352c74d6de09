"""Measuring one distributed (context-parallel) point on every rank: rank 0 returns its one row.

Every rank runs every phase:

1. inputs: the full q, k, v, g, beta, h0, do, dht from the point's seed, then the rank's slice
   (local.py); the full inputs stay on rank 0 only. Then the backend's CP context (`cp_setup`);
2. the first call (its wall time, max over ranks: first_call_s and, for the first point of a compile
   group in this launch, compile_s);
3. correctness (check.py): a failure makes the row `incorrect` and nothing is timed;
4. timing (timing.py); the end-to-end time of an iteration is the largest over the ranks; each rank's
   own medians are kept too.
An exception outside collectives is agreed on at the next checkpoint (`Rank.agree`), so all ranks record
the same `error` row; one inside a phase with collectives ends the rank (`rank.fatal`).
"""

from __future__ import annotations

import os
import time

import torch

from qlabench.backends import REGISTRY
from qlabench.core.point import Point
from qlabench.core.result import Status
from qlabench.measure.inputs import make_inputs
from qlabench.measure.timing import summarize
from qlabench.run.distributed.check import gather_outputs, reference_check
from qlabench.run.distributed.local import Step, local_inputs, rank_setup
from qlabench.run.distributed.rank import Rank, fatal
from qlabench.run.distributed.timing import measure_rank, rank0_columns
from qlabench.run.point import PointRow, error_line, refusal


def run_cp_point(p: Point, rk: Rank) -> dict | None:
    """Measure one distributed point on every rank; rank 0 returns the row's dict, the others None."""
    record = PointRow(p, rk)

    def row(status, reason=None):
        return record.done(status, reason).as_dict() if rk.rank == 0 else None

    # -- can it run? (every rank decides the same; rank 0's answer is the one recorded) -----------------
    backend = REGISTRY.get(p.backend)
    verdict = rk.from_rank0(refusal(p, backend, "cuda" if rk.on_cuda else "cpu", world=rk.world))
    if verdict is not None:
        return row(*verdict)
    record.backend(backend)
    os.environ.update(backend.env)

    full = step = ctx = out = None
    err = None
    # -- 1. inputs, the rank's slice, the CP context -------------------------------------------------
    try:
        rs = rank_setup(p, rk)
        full = make_inputs(p, rk.device)
        inp = local_inputs(full, rs)
        if rk.rank != 0 or not rk.job.check:
            full = None
        ctx = backend.cp_setup(p, rs)
        step = Step(backend, ctx, inp, p.mode)
    except Exception as e:
        err = error_line(e)
    err = rk.agree(err)
    if err:
        return row(Status.ERROR, err)

    # -- 2. first call (JIT compile, autotuning) ----------------------------------------------------------
    # Collectives inside (the library's state exchange): an exception here ends this rank (fatal).
    try:
        rk.barrier()
        t0 = time.perf_counter()
        out = step()
        rk.sync()
        first_call_s = time.perf_counter() - t0
    except Exception as e:
        fatal(rk.rank, "the first call", e)
    record.first_call(max(rk.gather_all(first_call_s)))
    intra = rk.gather_all(backend.cp_intra_active(ctx))
    if p.cp_mode == "dual" and all(x is not None for x in intra):
        record.fields["cp_intra"] = all(intra)

    # -- 3. correctness against the single-device reference -------------------------------------------
    if rk.job.check:
        # Gathering: collectives on every rank (an exception ends the rank). Then rank 0 alone runs the
        # reference and compares (no collectives: its errors are agreed on like the set-up's).
        try:
            got = gather_outputs(p, rk, out)
        except Exception as e:
            fatal(rk.rank, "the gathering of the outputs", e)
        out = None  # the local outputs: gathered, no longer needed (memory for the reference on rank 0)
        verdict = None
        try:
            if rk.rank == 0:
                verdict = reference_check(p, backend, got, full)
        except Exception as e:
            err = f"correctness check failed: {error_line(e)}"
        got = full = None
        err = rk.agree(err)
        if err:
            return row(Status.ERROR, err)
        errors, oracle, failure = rk.from_rank0(verdict)
        record.checked(errors, oracle, p.total_tokens)
        if failure:
            return row(Status.INCORRECT, f"CP vs {backend.cp_reference}: {failure}")
    full = out = None
    if rk.on_cuda:
        torch.cuda.empty_cache()

    # -- 4. timing ---------------------------------------------------------------------------------------
    try:
        res = measure_rank(step, rk, p, backend)
    except Exception as e:
        fatal(rk.rank, "the timing", e)
    per_rank = rk.gather_all(res)
    if rk.rank != 0:
        return None
    n = min(len(r["total"]) for r in per_rank)
    e2e = [max(r["total"][i] for r in per_rank) for i in range(n)]
    med = lambda xs: summarize(xs).median if xs else None  # noqa: E731
    r0 = rank0_columns(per_rank[0])
    sampling_s = r0.pop("sampling_s")
    record.kernels(r0)
    if bad := per_rank[0].get("provenance"):  # launched kernels the backend must not: no time is believed
        return row(Status.ERROR, bad)
    # the regime of the run's timer plan, as run_point records it: resume then finds this row for the run
    record.sampled("events" if rk.on_cuda else "wall", e2e, sampling_s, noise_target_met=False,
                   regime=rk.timer.regime)
    record.fields.update(cp_rank_ms=[med(r["total"]) for r in per_rank],
                         cp_rank_fwd_ms=[med(r["fwd"]) for r in per_rank],
                         cp_rank_bwd_ms=[med(r["bwd"]) for r in per_rank] if p.has_backward else [])
    record.details.update(cp={
        "world_size": rk.world, "mode": p.cp_mode, "local_tokens": p.total_tokens // rk.world,
        "rank_total_ms": [r["total"] for r in per_rank], "rank_fwd_ms": [r["fwd"] for r in per_rank],
        "rank_bwd_ms": [r["bwd"] for r in per_rank], "intra_active": intra,
        "barrier_before_each_iteration": True, "l2_flush": bool(rk.timer.l2_flush and rk.on_cuda),
        "safe_env": {k: os.environ.get(k) for k in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST",
                                                     "NVSHMEM_DISABLE_NVLS")},
    }, calls_per_sample=1)
    if rk.on_cuda:
        record.gpu_state(per_rank[0].get("gpu_before"), per_rank[0].get("gpu_after"))
    return row(Status.OK)
