"""Other projects' timers applied to one call, imported only when used (they exist on the GPU host only).

- `triton_cudagraph`: `triton.testing.do_bench_cudagraph(fn, rep, return_mode)`: one graph of
  int(rep / estimate) calls (the estimate: 5 eager calls), replayed 10 times without an L2 flush; each
  replay's time / calls is a sample. What the FlashQLA study's "triton" figures are.
- `flashinfer_bench`: `flashinfer.testing.bench_gpu_time` with the arguments one of FlashInfer's own
  benchmarks passes (`FLASHINFER_CONFIGS`). Which timing path it really took (CUPTI, CUDA graph or events,
  cold L2 or not) depends on what is installed (CUPTI needs cupti-python >= 13); it warns when it falls
  back, and the warnings are kept with the result.
"""

from __future__ import annotations

import statistics
import warnings
from collections.abc import Callable

# FlashInfer's two GDN prefill benchmarks (flashinfer-ai/flashinfer, benchmarks/):
# - bench_gdn_prefill.py: bench_gpu_time(fn, enable_cupti=False, dry_run_iters=5, repeat_iters=20,
#   use_cuda_graph=False) by default: eager calls with CUDA events, L2 flushed before each (cold_l2_cache's
#   default); it prints the mean.
# - flashinfer_benchmark.py --routine chunk_gated_delta_rule (routines/gdn.py): bench_gpu_time(dry_run_iters=5,
#   repeat_iters=30, enable_cupti=True, use_cuda_graph=True) by default: one call per graph replay, L2
#   flushed before each, the kernels' span read by CUPTI; it prints the median. Without CUPTI it falls
#   back to bench_gpu_time_with_cudagraph: 10 calls per replay, and, fn having no tensor arguments to
#   rotate, a warm L2.
FLASHINFER_CONFIGS: dict[str, dict] = {
    "bench_gdn_prefill": dict(enable_cupti=False, dry_run_iters=5, repeat_iters=20, use_cuda_graph=False),
    "flashinfer_benchmark": dict(enable_cupti=True, dry_run_iters=5, repeat_iters=30, use_cuda_graph=True),
}
FLASHINFER_REPORTS = {"bench_gdn_prefill": "mean", "flashinfer_benchmark": "median"}


def triton_cudagraph(fn: Callable[[], object], rep_ms: float) -> tuple[list[float], dict]:
    """(the 10 per-call samples, details) of triton's do_bench_cudagraph; raises ImportError without triton."""
    import triton.testing

    try:
        times = triton.testing.do_bench_cudagraph(fn, rep=rep_ms, return_mode="all")
        samples = [float(t) for t in times]
    except (AssertionError, ValueError):  # a triton without return_mode="all": its median alone
        samples = [float(triton.testing.do_bench_cudagraph(fn, rep=rep_ms, return_mode="median"))]
    return samples, {"rep_ms": rep_ms, "l2": "warm (never flushed)", "version": getattr(triton, "__version__", None)}


def flashinfer_bench(fn: Callable[[], object], config: str) -> tuple[list[float], dict]:
    """(samples, details) of flashinfer.testing.bench_gpu_time with one of FLASHINFER_CONFIGS; the details say
    the arguments, the statistic that benchmark reports, and the path taken (from bench_gpu_time's warnings)."""
    import flashinfer
    from flashinfer.testing import bench_gpu_time

    kwargs = FLASHINFER_CONFIGS[config]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        samples = [float(t) for t in bench_gpu_time(fn, **kwargs)]
    said = [str(w.message) for w in caught]
    fell_back = any("Falling back" in m or "CUPTI" in m for m in said)
    if kwargs["enable_cupti"] and not fell_back:
        path, l2 = "cupti (one call per sample, kernels' span)", "flushed"
    elif kwargs["use_cuda_graph"]:
        rotated = not any("Cold L2 benchmarking disabled" in m for m in said)
        path, l2 = "cuda graph (10 calls per replay)", "rotating buffers" if rotated else "warm"
    else:
        path, l2 = "cuda events (eager)", "flushed"
    reported = statistics.fmean(samples) if FLASHINFER_REPORTS[config] == "mean" else statistics.median(samples)
    return samples, {"args": kwargs, "path": path, "l2": l2, "reports": FLASHINFER_REPORTS[config],
                     "reported_ms": reported, "warnings": said[:5],
                     "version": getattr(flashinfer, "__version__", None)}
