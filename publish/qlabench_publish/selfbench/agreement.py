"""Agreement (CUDA only): qlabench's GraphTimer against triton's and tilelang's cudagraph do_bench."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable

import pandas as pd

from qlabench.core.spec import Suite
from qlabench_publish.selfbench.common import FLASHQLA_REP_MS, FLASHQLA_WARMUP_MS, SelfbenchError, point_label

AGREEMENT_TOL = 0.02  # graph timer vs do_bench_cudagraph within 2%


def agreement_unavailable(device: str) -> str | None:
    """Why the agreement benchmark cannot run here, or None."""
    if not device.startswith("cuda"):
        return f"agreement needs CUDA (CUDA graphs, triton.testing.do_bench_cudagraph); device is {device}"
    try:
        import triton.testing  # noqa: F401
    except Exception as e:  # triton missing or broken: a reason, not a crash
        return f"triton.testing is not importable: {type(e).__name__}: {e}"
    return None


def _reason(e: Exception) -> str:
    return f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"


def run_agreement(suite: Suite, device: str, rep_ms: float = FLASHQLA_REP_MS,
                  on_point: Callable[[dict], None] | None = None) -> pd.DataFrame:
    """Per point, in this process: GraphTimer median vs do_bench_cudagraph median (and tilelang's)."""
    why = agreement_unavailable(device)
    if why:
        raise SelfbenchError(why)
    from qlabench.measure import caches as cache

    cache.configure()  # before any backend imports its library
    import torch
    import triton.testing

    from qlabench.backends import REGISTRY
    from qlabench.measure.inputs import make_inputs
    from qlabench.measure.timing import StopRule
    from qlabench.measure.timing.cuda import GraphTimer

    rows = []
    for p in suite.points:
        row: dict = {"point": point_label(dataclasses.asdict(p)), "backend": p.backend,
                     "mode": p.mode, "graph_ms": math.nan, "triton_ms": math.nan, "ratio": math.nan,
                     "agrees": None, "graph_s": math.nan, "triton_s": math.nan, "tilelang_ms": math.nan,
                     "tilelang_s": math.nan, "timer_used": None, "reason": None}
        b = REGISTRY.get(p.backend)
        ok, why = (False, f"unknown backend {p.backend!r}") if b is None else b.available()
        if ok:
            ok, why = b.supports(p, device)
        if not ok:
            row["reason"] = why
            rows.append(row)
            if on_point:
                on_point(row)
            continue
        fn = None
        try:
            fn = b.prepare_point(p, make_inputs(p, device))
            fn()  # compile and autotune outside every timer
            torch.cuda.synchronize()
            t = time.perf_counter()
            m = GraphTimer(StopRule.from_spec(suite.timing), warmup=suite.timing.warmup,
                           l2_flush=suite.timing.l2_flush).measure(fn)
            row["graph_s"] = time.perf_counter() - t
            row["timer_used"] = m.timer
            row["graph_ms"] = float(pd.Series(m.samples_ms).median())
            t = time.perf_counter()
            row["triton_ms"] = float(triton.testing.do_bench_cudagraph(fn, rep=rep_ms, return_mode="median"))
            row["triton_s"] = time.perf_counter() - t
            row["ratio"] = row["graph_ms"] / row["triton_ms"]
            row["agrees"] = abs(row["ratio"] - 1) <= AGREEMENT_TOL
        except Exception as e:  # one point's failure is recorded, the rest still run
            row["reason"] = _reason(e)
        try:
            if fn is None:
                raise RuntimeError("no callable (prepare failed)")
            from tilelang.profiler import do_bench as tl_do_bench

            t = time.perf_counter()
            row["tilelang_ms"] = float(tl_do_bench(fn, warmup=FLASHQLA_WARMUP_MS, rep=FLASHQLA_REP_MS,
                                                   backend="cudagraph"))
            row["tilelang_s"] = time.perf_counter() - t
        except Exception as e:  # tilelang absent or older than its cudagraph backend
            row["reason"] = "; ".join(x for x in (row["reason"], f"tilelang do_bench: {_reason(e)}") if x)
        torch.cuda.empty_cache()
        rows.append(row)
        if on_point:
            on_point(row)
    return pd.DataFrame(rows)
