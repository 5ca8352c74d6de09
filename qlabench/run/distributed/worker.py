"""One rank of a distributed (context-parallel) sweep: `torchrun ... -m qlabench.run.distributed.worker`.

Started by launch.py with a job file (the suite, the run and the points, pickled), an events file that
rank 0 appends JSON lines to ({"event": "ready" | "start" | "row", ...}) and a stop file whose
existence tells the ranks to start no further point. Every rank runs every point:

1. inputs: the full q, k, v, g, beta, h0, do, dht from the point's seed (qlabench.measure.inputs, the same on
   every rank), then the rank's contiguous slice (layout.py); the full inputs stay on rank 0 only;
2. the backend's CP context (`setup`), then the first call (its wall time, max over ranks: first_call_s
   and, for the first point of a compile group in this launch, compile_s);
3. correctness: the local outputs are gathered to rank 0, stitched back into the whole stream and
   compared with the backend's single-device reference on rank 0 (relative L2 error, the tolerances
   of qlabench.measure.correctness); a failure makes the row `incorrect` and nothing is timed;
4. timing: warm-up, then n iterations, each after a barrier and a device synchronisation; CUDA events
   (wall clock on CPU) split every iteration into forward and backward; the end-to-end time of an
   iteration is the largest over the ranks; each rank's own medians are kept too.
Any exception on any rank is agreed on at the next checkpoint, so all ranks record the same `error` row
and then stop (the launcher starts fresh processes for the rest). A rank that hangs in a collective is
the launcher's to kill (its time limits).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time
import traceback
from typing import NoReturn

from qlabench.run.distributed.safety import apply_to_this_process

EVENTS_ENV = "QLABENCH_CP_EVENTS"


def _emit(path: str, event: str, **payload) -> None:
    with open(path, "a") as f:
        f.write(json.dumps({"event": event, **payload}) + "\n")
        f.flush()
        os.fsync(f.fileno())


def _last_line(e: BaseException) -> str:
    return traceback.format_exception_only(type(e), e)[-1].strip()


def _fatal(rank: int, phase: str, e: BaseException) -> NoReturn:
    """End this rank at once after an exception in a phase with collectives in it.

    The first call, the gathering of the outputs and the timing run collectives (the library's, ours)
    that every rank must enter in the same order. A rank that raised there cannot agree with the
    others: they may be blocked inside a collective it will never join (NCCL waits until its
    timeout), or its next collective would be paired with a different one of theirs (mismatched
    sizes: a hang or garbage). So it prints its error and exits; torchrun then ends the other ranks
    and the launcher records the point in flight as `error` with this line (launch.last_error_line).
    """
    # This line first: the launcher reports the first exception line of the ranks' log.
    print(f"[rank{rank}]: {_last_line(e)} (during {phase}; this rank exits, the launch ends)",
          file=sys.stderr, flush=True)
    traceback.print_exc(file=sys.stderr)
    sys.stderr.flush()
    sys.stdout.flush()
    os._exit(1)


def _compare_lean(got: dict, ref: dict, dtype: str) -> tuple[dict, str | None]:
    """`correctness.compare`, one tensor at a time, each dropped once compared (`got`, `ref` are emptied).

    At 1M tokens with h 16/16 an output is 2^31 elements (4 GiB in bf16) and `rel_l2` makes float64
    copies of both sides (3 x 16 GiB): comparing them all at once on top of the gathered and
    reference tensors would not fit next to each other on rank 0. Same errors and verdict as compare.
    """
    from qlabench.measure.correctness import compare

    errors: dict = {}
    failures: list[str] = []
    missing: list[str] = []
    for name in list(ref):
        r = ref.pop(name)
        g = got.pop(name, None)
        if g is None:
            if name in ("o", "ht"):
                missing.append(name)
            continue
        e, failure = compare({name: g}, {name: r}, dtype)
        del g, r
        errors.update(e)
        if failure:
            failures.append(failure)
    got.clear()
    if missing:
        failures.append("missing outputs: " + ", ".join(missing))
    return errors, ("; ".join(failures) or None)


class _Rank:
    """Everything one rank shares across the points of a launch."""

    def __init__(self, job, device_type: str):
        import torch
        import torch.distributed as dist

        self.torch, self.dist = torch, dist
        self.job = job
        self.suite = job.suite
        self.rank = int(os.environ["RANK"])
        self.world = int(os.environ["WORLD_SIZE"])
        self.local_rank = int(os.environ.get("LOCAL_RANK", self.rank))
        self.on_cuda = device_type == "cuda"
        if self.on_cuda:
            torch.cuda.set_device(self.local_rank)
            self.device = f"cuda:{self.local_rank}"
        else:
            self.device = "cpu"
        from datetime import timedelta

        kwargs = {"backend": "nccl" if self.on_cuda else "gloo",
                  "timeout": timedelta(seconds=max(60.0, job.compile_timeout_s))}
        if self.on_cuda:
            kwargs["device_id"] = torch.device(self.device)
        dist.init_process_group(**kwargs)
        self.group = dist.group.WORLD
        self.groups_seen: set = set()
        self._peaks = None

    # -- collectives over plain Python objects ------------------------------------------------------
    def gather_all(self, obj) -> list:
        out = [None] * self.world
        self.dist.all_gather_object(out, obj, group=self.group)
        return out

    def agree(self, err: str | None) -> str | None:
        """The first rank's error, on every rank (None when no rank failed)."""
        errs = self.gather_all(err)
        for r, e in enumerate(errs):
            if e:
                return e if self.world == 1 else f"rank {r}: {e}"
        return None

    def from_rank0(self, obj):
        box = [obj]
        self.dist.broadcast_object_list(box, src=0, group=self.group)
        return box[0]

    def sync(self) -> None:
        if self.on_cuda:
            self.torch.cuda.synchronize()

    def barrier(self) -> None:
        self.dist.barrier(group=self.group)
        self.sync()

    def gather_tensor(self, t):
        """`t` of every rank, on rank 0 (a list in rank order); None elsewhere. Same shape on every rank."""
        t = t.contiguous()
        parts = [self.torch.empty_like(t) for _ in range(self.world)]
        self.dist.all_gather(parts, t, group=self.group)
        if self.rank != 0:
            del parts
            return None
        return parts


def _local_inputs(p, full, rs, torch):
    """The rank's slice of the full inputs: tokens [start, end); h0/dht per local piece."""
    from qlabench.measure.inputs import GDNInputs

    a, b = rs.token_start, rs.token_end
    sl = lambda x: x[:, a:b].contiguous()  # noqa: E731
    h0 = None
    if full.h0 is not None:
        h0 = torch.stack([full.h0[pc.seq] if pc.starts_here else torch.zeros_like(full.h0[0]) for pc in rs.pieces])
    dht = torch.stack([full.dht[pc.seq] if pc.ends_here else torch.zeros_like(full.dht[0]) for pc in rs.pieces])
    cu = torch.tensor(rs.local_cu, dtype=torch.int32, device=full.q.device)
    return GDNInputs(q=sl(full.q), k=sl(full.k), v=sl(full.v), g=sl(full.g), beta=sl(full.beta), h0=h0,
                     cu_seqlens=cu, scale=full.scale, do=sl(full.do), dht=dht.contiguous())


class _Step:
    """One timed iteration of a point on this rank: forward, and for fwd_bwd the backward by autograd."""

    def __init__(self, backend, state, inp, mode: str, torch):
        self.backend, self.state, self.mode, self.torch = backend, state, mode, torch
        self.inp = inp
        if mode == "fwd":
            self.leaves = {}
            self.ginp = inp
            return
        from qlabench.measure.inputs import GDNInputs

        leaves = {"dq": inp.q, "dk": inp.k, "dv": inp.v, "dg": inp.g, "dbeta": inp.beta, "dh0": inp.h0}
        self.leaves = {n: t.detach().requires_grad_(True) for n, t in leaves.items() if t is not None}
        L = self.leaves
        self.ginp = GDNInputs(q=L["dq"], k=L["dk"], v=L["dv"], g=L["dg"], beta=L["dbeta"], h0=L.get("dh0"),
                              cu_seqlens=inp.cu_seqlens, scale=inp.scale, do=inp.do, dht=inp.dht)

    def forward(self):
        if self.mode == "fwd":
            with self.torch.no_grad():
                return self.backend.forward(self.ginp, self.state)
        return self.backend.forward(self.ginp, self.state)

    def backward(self, out) -> dict:
        o, ht = out
        res = {"o": o.detach()}
        if ht is not None:
            res["ht"] = ht.detach()
        if self.mode == "fwd":
            return res
        outs, grads_in = [o], [self.inp.do.to(o.dtype)]
        if ht is not None:
            outs.append(ht)
            grads_in.append(self.inp.dht.to(ht.dtype))
        names = list(self.leaves)
        grads = self.torch.autograd.grad(outs, [self.leaves[n] for n in names], grads_in, allow_unused=True)
        # A gradient autograd leaves out (an input a rank does not use) is zero: every rank must report the
        # same tensors, since they are gathered name by name.
        res.update({n: g if g is not None else self.torch.zeros_like(self.leaves[n]) for n, g in zip(names, grads)})
        return res

    def __call__(self) -> dict:
        return self.backward(self.forward())


def _stitch(p, rk, local_out: dict, torch) -> dict | None:
    """Rank 0: the whole stream's outputs from every rank's local ones (None on other ranks)."""
    from qlabench.backends.cp_layout import owners

    first, last = owners(p.seqlens, p.cp_world_size)
    got = {}
    for name in ("o", "dq", "dk", "dv", "dg", "dbeta"):
        if name not in local_out:
            continue
        parts = rk.gather_tensor(local_out[name])
        if parts is not None:
            got[name] = torch.cat(parts, dim=1)
        del parts
    for name, where in (("ht", last), ("dh0", first)):
        if name not in local_out:
            continue
        mine = local_out[name].detach().cpu()
        every = rk.gather_all(mine)
        if rk.rank == 0:
            got[name] = torch.stack([every[r][j] for r, j in (where[n] for n in range(p.num_seqs))]).to(rk.device)
    return got if rk.rank == 0 else None


def run_point(p, rk: _Rank) -> dict | None:
    """Measure one distributed point on every rank; rank 0 returns the row's dict, the others None."""
    import torch

    from qlabench.backends import REGISTRY
    from qlabench.core.flops import throughput
    from qlabench.measure.inputs import make_inputs
    from qlabench.run.point import _state_columns
    from qlabench.core.result import CHECKED_TENSORS, Status, make_row
    from qlabench.measure.timing import summarize
    from qlabench.backends.cp import CP_REGISTRY, RankSetup
    from qlabench.backends.cp_layout import local_cu_seqlens, local_sequences, rank_slice

    env = rk.env
    suite = rk.suite
    fields: dict = {}

    def row(status, reason=None, **kw):
        if rk.rank != 0:
            return None
        return make_row(p, run_id=rk.job.run_id, suite=suite.name, env=env, status=status,
                        reason=reason[:500] if reason else None, **{**fields, **kw}).as_dict()

    # -- can it run? (every rank decides the same; rank 0's answer is the one recorded) -----------------
    backend = CP_REGISTRY.get(p.backend)
    verdict = None
    if p.cp_world_size != rk.world:
        verdict = (Status.ERROR, f"point wants {p.cp_world_size} ranks, this launch has {rk.world}")
    elif backend is None:
        verdict = (Status.SKIPPED, f"no context-parallel backend {p.backend!r} (have: {', '.join(CP_REGISTRY)})")
    else:
        ok, why = backend.available()
        if not ok:
            verdict = (Status.SKIPPED, f"backend unavailable: {why}")
        else:
            ok, why = backend.supports(p, "cuda" if rk.on_cuda else "cpu")
            if not ok:
                verdict = (Status.SKIPPED, f"unsupported: {why}")
    verdict = rk.from_rank0(verdict)
    if verdict is not None:
        return row(*verdict)
    os.environ.update(backend.env)

    full = inp = step = state = out = None
    err = None
    # -- 1. inputs, the rank's slice, the CP context -------------------------------------------------
    try:
        start, end = rank_slice(p.total_tokens, rk.world, rk.rank)
        pieces = local_sequences(p.seqlens, rk.world, rk.rank)
        cu = [0]
        for s in p.seqlens:
            cu.append(cu[-1] + s)
        rs = RankSetup(rank=rk.rank, world_size=rk.world, group=rk.group, device=rk.device, pieces=pieces,
                       token_start=start, token_end=end,
                       global_cu=torch.tensor(cu, dtype=torch.int32, device=rk.device),
                       local_cu=local_cu_seqlens(p.seqlens, rk.world, rk.rank))
        full = make_inputs(p, rk.device)
        inp = _local_inputs(p, full, rs, torch)
        if rk.rank != 0 or not rk.job.check:
            full = None
        state = backend.setup(p, rs)
        step = _Step(backend, state, inp, p.mode, torch)
    except Exception as e:
        err = _last_line(e)
    err = rk.agree(err)
    if err:
        return row(Status.ERROR, err)

    # -- 2. first call (JIT compile, autotuning) ----------------------------------------------------------
    # Collectives inside (the library's state exchange): an exception here ends this rank (_fatal).
    try:
        rk.barrier()
        t0 = time.perf_counter()
        out = step()
        rk.sync()
        first_call_s = time.perf_counter() - t0
    except Exception as e:
        _fatal(rk.rank, "the first call", e)
    first_call_s = max(rk.gather_all(first_call_s))
    group = p.compile_group
    compile_s = first_call_s if group not in rk.groups_seen else None
    rk.groups_seen.add(group)
    fields.update(first_call_s=first_call_s, compile_s=compile_s)
    intra = rk.gather_all(backend.intra_active(state))
    if p.cp_mode == "dual" and all(x is not None for x in intra):
        fields["cp_intra"] = all(intra)

    # -- 3. correctness against the single-device reference -------------------------------------------
    verdict = None
    if rk.job.check:
        # Gathering: collectives on every rank (an exception ends the rank). Then rank 0 alone runs the
        # reference and compares (no collectives: its errors are agreed on like the set-up's).
        try:
            got = _stitch(p, rk, out, torch)
        except Exception as e:
            _fatal(rk.rank, "the gathering of the outputs", e)
        out = None  # the local outputs: gathered, no longer needed (memory for the reference on rank 0)
        try:
            if rk.rank == 0:
                ref_backend = REGISTRY[backend.reference]
                ref_inp = full.to(torch.float32) if backend.reference_fp32 else full
                full = None
                os.environ.update(ref_backend.env)
                ref = ref_backend.prepare(p.mode, ref_inp)()
                os.environ.update(backend.env)
                ref_inp = None  # the full inputs: free before the float64 comparison
                if not backend.final_state:
                    ref.pop("ht", None)
                errors, failure = _compare_lean(got, ref, p.dtype)
                rdt = "float32" if backend.reference_fp32 else p.dtype
                verdict = ({f"err_{n}": errors.get(n) for n in CHECKED_TENSORS},
                           f"{backend.reference} {rdt} @{p.total_tokens} tokens (one device, no CP)", failure)
                del ref
        except Exception as e:
            err = f"correctness check failed: {_last_line(e)}"
        got = ref_inp = None
        err = rk.agree(err)
        if err:
            return row(Status.ERROR, err)
        verdict = rk.from_rank0(verdict)
        errs, oracle, failure = verdict
        fields.update(errs, oracle=oracle, check_tokens=p.total_tokens)
        if failure:
            return row(Status.INCORRECT, f"CP vs {backend.reference}: {failure}")
    full = out = None
    if rk.on_cuda:
        torch.cuda.empty_cache()

    # -- 4. timing ---------------------------------------------------------------------------------------
    spec = suite.timing
    try:
        res = _measure(step, rk, spec, p, backend)
    except Exception as e:
        _fatal(rk.rank, "the timing", e)
    per_rank = rk.gather_all(res)
    if rk.rank != 0:
        return None
    n = min(len(r["total"]) for r in per_rank)
    e2e = [max(r["total"][i] for r in per_rank) for i in range(n)]
    s = summarize(e2e)
    med = lambda xs: summarize(xs).median if xs else None  # noqa: E731
    fields.update(res0_fields(per_rank[0]))
    details = {
        "cp": {
            "world_size": rk.world, "mode": p.cp_mode, "local_tokens": p.total_tokens // rk.world,
            "rank_total_ms": [r["total"] for r in per_rank], "rank_fwd_ms": [r["fwd"] for r in per_rank],
            "rank_bwd_ms": [r["bwd"] for r in per_rank], "intra_active": intra,
            "barrier_before_each_iteration": True, "l2_flush": bool(spec.l2_flush and rk.on_cuda),
            "safe_env": {k: os.environ.get(k) for k in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST",
                                                         "NVSHMEM_DISABLE_NVLS")},
        },
        "calls_per_sample": 1,
    }
    fields["tflops"], fields["gbps"] = throughput(p, s.median)
    if rk.on_cuda:
        fields.update(_state_columns(per_rank[0].get("gpu_before"), per_rank[0].get("gpu_after")))
    bad = per_rank[0].get("provenance")
    if bad:
        return row(Status.ERROR, bad)
    return row(Status.OK, None, timer="events" if rk.on_cuda else "wall", samples_ms=e2e, n_samples=s.n,
               median_ms=s.median, mean_ms=s.mean, stdev_ms=s.stdev, min_ms=s.min, p20_ms=s.p20, p80_ms=s.p80,
               iqr_ms=s.iqr, rel_noise=s.rel_noise, noise_target_met=False,
               cp_rank_ms=[med(r["total"]) for r in per_rank], cp_rank_fwd_ms=[med(r["fwd"]) for r in per_rank],
               cp_rank_bwd_ms=[med(r["bwd"]) for r in per_rank] if p.mode != "fwd" else [],
               extra_json=json.dumps(details, sort_keys=True))


def res0_fields(r0: dict) -> dict:
    """Row fields only rank 0's measurement carries (its kernels, its sampling time)."""
    out = {"sampling_s": r0.get("sampling_s")}
    out.update(r0.get("kernel_fields") or {})
    return out


def _measure(step, rk: _Rank, spec, p, backend) -> dict:
    """Warm-up, kernel capture (CUDA), then n synchronised iterations; this rank's samples."""
    torch = rk.torch
    flush = lambda: None  # noqa: E731
    if rk.on_cuda and spec.l2_flush:
        from qlabench.measure.timing.cuda import _L2Flusher

        flush = _L2Flusher(True)

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

    warm = [one()[2] for _ in range(max(1, spec.warmup))]
    res: dict = {}
    if rk.on_cuda:
        from qlabench.measure.probes import clocks as gpustate
        from qlabench.core import sm_coverage as smutil
        from qlabench.core.kernel_event import kernel_fields, provenance_error
        from qlabench.measure.probes.kineto import capture_kernels

        rk.barrier()
        events = capture_kernels(step)
        kf = kernel_fields(events)
        num_sms = torch.cuda.get_device_properties(rk.local_rank).multi_processor_count
        kf.update(num_sms=num_sms, sm_coverage=smutil.sm_coverage(events, num_sms),
                  sm_coverage_waves=smutil.sm_coverage_waves(events, num_sms))
        res["kernel_fields"] = kf
        res["provenance"] = provenance_error(list(kf["kernels"]), backend.expect_kernels, backend.forbid_kernels)
        from qlabench.measure.env import physical_index

        nvml_index = physical_index(rk.local_rank)
        res["gpu_before"] = gpustate.snapshot(nvml_index)
    # The same sample count on every rank: from the slowest rank's warm-up estimate.
    est = max(rk.gather_all(sorted(warm)[len(warm) // 2]))
    n = int(spec.max_time_s * 1e3 / max(est, 1e-6))
    n = max(spec.min_samples, min(spec.max_samples, n))
    t0 = time.perf_counter()
    fwd, bwd, total = [], [], []
    for _ in range(n):
        a, b, c = one()
        fwd.append(a)
        total.append(c)
        if p.mode != "fwd":
            bwd.append(b)
    res.update(fwd=fwd, bwd=bwd, total=total, sampling_s=time.perf_counter() - t0)
    if rk.on_cuda:
        from qlabench.measure.probes import clocks as gpustate

        res["gpu_after"] = gpustate.snapshot(nvml_index)
    return res


def main(argv: list[str] | None = None) -> int:
    apply_to_this_process()  # before torch (and NCCL) are imported
    ap = argparse.ArgumentParser(prog="qlabench.run.distributed.worker")
    ap.add_argument("--job", required=True)
    ap.add_argument("--events", required=True)
    ap.add_argument("--stop", required=True)
    args = ap.parse_args(argv)
    try:  # die with the torchrun agent, whatever kills it
        from qlabench.run.pool import _die_with_parent

        _die_with_parent(os.getppid())
    except Exception:
        pass
    import faulthandler

    faulthandler.enable()
    with open(args.job, "rb") as f:
        job = pickle.load(f)

    from qlabench.measure import caches as cache

    cache.configure()
    rk = _Rank(job, job.device_type)
    from qlabench.measure import env as envmod

    rk.env = envmod.capture(rk.device) if rk.rank == 0 else {}
    if rk.rank == 0:
        _emit(args.events, "ready", env=rk.env)
    from qlabench.core.point import Point

    for i, pd in enumerate(job.points):
        stop = rk.from_rank0(os.path.exists(args.stop) if rk.rank == 0 else None)
        if stop:
            break
        p = Point(**pd)
        if rk.rank == 0:
            _emit(args.events, "start", index=i)
        row = run_point(p, rk)
        if rk.rank == 0:
            _emit(args.events, "row", index=i, row=row)
        sys.stdout.flush()
        status = rk.from_rank0(row["status"] if rk.rank == 0 else None)
        if status == "error":  # a CUDA error may have poisoned this process: the launcher starts fresh ones
            break
    try:
        rk.dist.barrier(group=rk.group)
        rk.dist.destroy_process_group()
    except Exception:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
