"""Serving steps (decode, mtp) on a real CUDA device: each available library step matches the fp32
recurrence from the same pool states, leaves the other slots alone, and stays under the bandwidth limit.

Run with `pytest -m gpu` on a CUDA host; backends whose library is missing skip with their reason.
"""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.gpu

from qlabench.backends import REGISTRY  # noqa: E402
from qlabench.core.point import Point  # noqa: E402
from qlabench.core.spec import CheckSpec, Suite, TimingSpec  # noqa: E402
from qlabench.measure.timing import TimerPlan  # noqa: E402
from qlabench.run.point import MeasureContext, run_point  # noqa: E402

FAST = TimingSpec(timer="graph", warmup=1, min_samples=3, max_samples=20, max_time_s=0.3, target_rel_noise=0.05)
CASES = [  # (backend, mode, T, state dtype, layout)
    ("naive-step", "decode", 1, "float32", "kv"),
    ("fla-recurrent", "decode", 1, "float32", "kv"),
    ("fla-recurrent", "decode", 1, "bfloat16", "vk"),
    ("fla-recurrent", "mtp", 4, "float32", "kv"),
    ("flashinfer-decode", "decode", 1, "float32", "kv"),
    ("flashinfer-decode-pt", "decode", 1, "float32", "vk"),
    ("flashinfer-decode-pt", "decode", 1, "bfloat16", "vk"),
    ("flashinfer-decode-pt", "mtp", 4, "bfloat16", "vk"),
    ("flashinfer-mtp", "mtp", 4, "float32", "vk"),
    # the engines' own kernels (a kernel site from scripts/engine-kernels-site.sh, or the engine installed)
    ("vllm-decode", "decode", 1, "float32", "vk"),
    ("vllm-decode", "decode", 1, "bfloat16", "vk"),
    ("vllm-mtp", "mtp", 4, "float32", "vk"),
    ("sglang-decode", "decode", 1, "float32", "vk"),
    ("sglang-decode", "decode", 1, "bfloat16", "vk"),
    ("sglang-mtp", "mtp", 4, "float32", "vk"),
]


@pytest.fixture(scope="module")
def ctx():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    from qlabench.measure import env

    suite = Suite(name="gpu-serving", path="<test>", points=(), timing=FAST, check=CheckSpec())
    return MeasureContext(suite=suite, device="cuda", env=env.capture("cuda"), run_id="test",
                          timer=TimerPlan.resolve("graph", "cuda", suite.timing), registry=REGISTRY, check=True)


@pytest.mark.parametrize("backend, mode, T, state_dtype, layout", CASES)
def test_a_serving_step_matches_the_recurrence_and_respects_the_limit(ctx, backend, mode, T, state_dtype, layout):
    ok, why = REGISTRY[backend].available()
    if not ok:
        pytest.skip(f"{backend} unavailable: {why}")
    B = 64
    p = Point(backend=backend, mode=mode, layout="dense", batch=B, seqlens=(T,) * B, h_qk=2, h_v=8, K=128, V=128,
              dtype="bfloat16", gate="fla", model="qwen3.5-397b", tp=8, state_dtype=state_dtype,
              state_layout=layout, pool=4 * B)
    row = run_point(p, ctx)
    assert row.status == "ok", row.reason
    assert row.err_pool == 0.0  # the slots outside the batch came back bit for bit
    assert row.bytes_moved > 0 and row.hbm_frac is not None and 0 < row.hbm_frac <= 1.0
    assert json.loads(row.extra_json)["pool_rotations"] == 4
