"""FlashInfer 0.7.4's new calls on a real CUDA device: the fused-gate prefill (`flashinfer-gate`) against the oracle
with the gate computed outside, vLLM 0.34's exact call (`vllm-flashinfer-prefill`), both running FlashInfer's own
kernels; the training route (`flashinfer-train`) wherever `is_gdn_train_supported` says it runs, and a skipped row
with that answer where it does not (SM90 on 0.7.4).

Run with `pytest -m gpu tests/gpu/test_flashinfer074_gpu.py` on a CUDA host with flashinfer-python 0.7.4.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.gpu

from qlabench.backends import REGISTRY  # noqa: E402
from qlabench.core.point import Point  # noqa: E402
from qlabench.core.spec import CheckSpec, Suite, TimingSpec  # noqa: E402
from qlabench.measure.timing import TimerPlan  # noqa: E402
from qlabench.run.point import MeasureContext, run_point  # noqa: E402

FAST = TimingSpec(timer="graph", warmup=1, min_samples=3, max_samples=10, max_time_s=0.5, target_rel_noise=0.05)


def _ctx(name):
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    ok, why = REGISTRY[name].available()
    if not ok:
        pytest.skip(f"{name} unavailable: {why}")
    from qlabench.measure import env

    suite = Suite(name="gpu-flashinfer074", path="<test>", points=(), timing=FAST,
                  check=CheckSpec(oracle_max_tokens=512, full_size=False))
    return MeasureContext(suite=suite, device="cuda", env=env.capture("cuda"), run_id="test",
                          timer=TimerPlan.resolve("graph", "cuda", suite.timing), registry=REGISTRY, check=True)


def _point(backend, seqlens, mode="fwd", initial_state=True):
    return Point(backend=backend, mode=mode, layout="varlen", batch=1, seqlens=seqlens, h_qk=2, h_v=8, K=128, V=128,
                 dtype="bfloat16", gate="flashqla", model="qwen3.5-397b", tp=8, initial_state=initial_state)


@pytest.mark.parametrize("backend", ["flashinfer-gate", "vllm-flashinfer-prefill"])
@pytest.mark.parametrize("seqlens", [(2048,), (1024,) * 8, (8192,)])
def test_the_new_prefill_calls_match_the_oracle_and_run_flashinfers_kernels(backend, seqlens):
    from qlabench.backends import flashinfer as fi

    ctx = _ctx(backend)
    row = run_point(_point(backend, seqlens), ctx)
    assert row.status == "ok", row.reason
    assert row.err_o < 0.02 and row.err_ht < 0.02
    assert any(k in name for name in row.kernels for k in fi.KERNELS_07), row.kernels
    if backend == "flashinfer-gate":
        assert row.oracle.startswith("naive-recurrent-gate-outside ")
    plain = run_point(_point("flashinfer", seqlens), ctx)
    assert plain.status == "ok", plain.reason

    def split(r):
        return any(fi.CP_KERNEL_07 in k for k in r.kernels)

    if backend == "flashinfer-gate":  # the gate changes the inputs, not FlashInfer's CP decision
        assert split(row) == split(plain), (row.kernels, plain.kernels)


@pytest.mark.parametrize("mode", ["fwd", "fwd_bwd", "bwd_train"])
def test_the_training_route_runs_where_it_says_and_is_skipped_with_its_answer_elsewhere(mode):
    from qlabench.backends import flashinfer_train as ft

    ctx = _ctx("flashinfer-train")
    gt, _ = ft._import()
    row = run_point(_point("flashinfer-train", (4096,), mode=mode, initial_state=False), ctx)
    if gt.is_gdn_train_supported(torch.device("cuda")):
        assert row.status == "ok", row.reason
        assert row.err_o < 0.02 and row.oracle.startswith("naive-recurrent-no-state ")
    else:
        major, minor = torch.cuda.get_device_capability()
        assert row.status == "skipped" and f"not supported on SM{major}{minor} by flashinfer" in row.reason
        assert "is_gdn_train_supported" in row.reason and "returned False" in row.reason
