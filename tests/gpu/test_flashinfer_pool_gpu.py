"""flashinfer-pool on a real CUDA device: FlashInfer 0.7.2's prefill into a state pool through `state_indices`
matches the fp32 recurrence, leaves every other slot of the pool bit for bit, and runs FlashInfer's kernels,
unsplit and split (its CP path takes the indices too).

Run with `pytest -m gpu tests/gpu/test_flashinfer_pool_gpu.py` on a CUDA host with the `flashinfer` extra.
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


@pytest.fixture(scope="module")
def ctx():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    ok, why = REGISTRY["flashinfer-pool"].available()
    if not ok:
        pytest.skip(f"flashinfer-pool unavailable: {why}")
    from qlabench.measure import env

    suite = Suite(name="gpu-flashinfer-pool", path="<test>", points=(), timing=FAST,
                  check=CheckSpec(oracle_max_tokens=512, full_size=False))
    return MeasureContext(suite=suite, device="cuda", env=env.capture("cuda"), run_id="test",
                          timer=TimerPlan.resolve("graph", "cuda", suite.timing), registry=REGISTRY, check=True)


# 1 x 2048 and 8 x 1024 at h 2/8 run unsplit or split by FlashInfer's own choice; 1 x 32768 splits (docs/FLASHINFER.md)
@pytest.mark.parametrize("seqlens", [(2048,), (1024,) * 8, (32768,)])
def test_the_pool_prefill_matches_the_recurrence_and_leaves_the_other_slots(ctx, seqlens):
    from qlabench.backends import flashinfer as fi

    p = Point(backend="flashinfer-pool", mode="fwd", layout="varlen", batch=1, seqlens=seqlens, h_qk=2, h_v=8,
              K=128, V=128, dtype="bfloat16", gate="flashqla", model="qwen3.5-397b", tp=8)
    row = run_point(p, ctx)
    assert row.status == "ok", row.reason
    assert row.err_pool == 0.0 and row.err_o < 0.02 and row.err_ht < 0.02
    assert any(k in name for name in row.kernels for k in fi.KERNELS_07), row.kernels
    packed = run_point(p.with_(backend="flashinfer"), ctx)
    assert packed.status == "ok", packed.reason
    # FlashInfer's CP decision reads sequences x heads, not where the states are: the same path either way
    def split(r):
        return any(fi.CP_KERNEL_07 in k for k in r.kernels)

    assert split(row) == split(packed), (row.kernels, packed.kernels)
