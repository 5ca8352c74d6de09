"""Other projects' timers (measure/timing/external.py), with stand-ins for triton and flashinfer (GPU-host only):
the arguments FlashInfer's benchmarks pass, and the path its timer says it took."""

from __future__ import annotations

import sys
import types
import warnings

import pytest

from qlabench.measure.timing import external as ext


@pytest.fixture
def fake_flashinfer(monkeypatch):
    calls = []

    def install(warn: list[str]):
        def bench_gpu_time(fn, **kwargs):
            calls.append(kwargs)
            for w in warn:
                warnings.warn(w, UserWarning, stacklevel=2)
            return [1.0, 2.0, 6.0]

        pkg, testing = types.ModuleType("flashinfer"), types.ModuleType("flashinfer.testing")
        pkg.__version__, testing.bench_gpu_time, pkg.testing = "0.7.2.post1", bench_gpu_time, testing
        monkeypatch.setitem(sys.modules, "flashinfer", pkg)
        monkeypatch.setitem(sys.modules, "flashinfer.testing", testing)
        return calls

    return install


def test_bench_gdn_prefill_is_timed_as_that_script_calls_it_and_reports_the_mean(fake_flashinfer):
    calls = fake_flashinfer([])
    samples, d = ext.flashinfer_bench(lambda: None, "bench_gdn_prefill")
    assert calls == [dict(enable_cupti=False, dry_run_iters=5, repeat_iters=20, use_cuda_graph=False)]
    assert samples == [1.0, 2.0, 6.0] and d["reported_ms"] == 3.0 and d["reports"] == "mean"
    assert d["path"] == "cuda events (eager)" and d["l2"] == "flushed" and d["version"] == "0.7.2.post1"


def test_the_routine_with_cupti_reports_the_median_of_one_cold_call(fake_flashinfer):
    calls = fake_flashinfer([])
    _, d = ext.flashinfer_bench(lambda: None, "flashinfer_benchmark")
    assert calls[0]["enable_cupti"] and calls[0]["use_cuda_graph"] and calls[0]["repeat_iters"] == 30
    assert d["path"].startswith("cupti") and d["l2"] == "flushed" and d["reported_ms"] == 2.0


def test_without_cupti_its_fallback_is_recorded_with_a_warm_l2(fake_flashinfer):
    fake_flashinfer(["CUPTI is not installed. Try 'pip install -U cupti-python'. Falling back to CUDA events "
                     "for benchmarking.", "cold_l2_cache=True but no GPU tensors found in input_args/input_kwargs. "
                     "Cold L2 benchmarking disabled."])
    _, d = ext.flashinfer_bench(lambda: None, "flashinfer_benchmark")
    assert d["path"] == "cuda graph (10 calls per replay)" and d["l2"] == "warm"
    assert d["warnings"][0].startswith("CUPTI is not installed")


def test_triton_gives_its_ten_replays_or_its_median(monkeypatch):
    seen = []

    def do_bench_cudagraph(fn, rep, return_mode):
        seen.append((rep, return_mode))
        if return_mode == "all":
            raise AssertionError("an older triton")
        return 0.79

    pkg, testing = types.ModuleType("triton"), types.ModuleType("triton.testing")
    testing.do_bench_cudagraph, pkg.testing, pkg.__version__ = do_bench_cudagraph, testing, "3.6.0"
    monkeypatch.setitem(sys.modules, "triton", pkg)
    monkeypatch.setitem(sys.modules, "triton.testing", testing)
    samples, d = ext.triton_cudagraph(lambda: None, 200.0)
    assert samples == [0.79] and seen == [(200.0, "all"), (200.0, "median")] and d["rep_ms"] == 200.0
