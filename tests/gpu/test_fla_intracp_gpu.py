"""`fla-intracp` on a real CUDA device: FLA's intra-card CP splits a long packed sequence, the row says so,
and it is timed with events (its call cannot be captured in a CUDA graph).

Run with `pytest -m gpu` on a CUDA host with fla-core 0.6 installed; skipped elsewhere.
"""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.gpu

from qlabench.backends import REGISTRY  # noqa: E402
from qlabench.core.point import Point  # noqa: E402
from qlabench.core.spec import CheckSpec, Suite, TimingSpec  # noqa: E402
from qlabench.measure.correctness import tolerance  # noqa: E402
from qlabench.measure.timing import TimerPlan  # noqa: E402
from qlabench.run.point import MeasureContext, run_point  # noqa: E402

FAST = TimingSpec(timer="graph", warmup=1, min_samples=3, max_samples=10, max_time_s=0.5, target_rel_noise=0.05)


def _ctx(full_size: bool):
    from qlabench.measure import env

    suite = Suite(name="gpu-test", path="<test>", points=(), timing=FAST,
                  check=CheckSpec(oracle_max_tokens=512, full_size=full_size))
    return MeasureContext(suite=suite, device="cuda", env=env.capture("cuda"), run_id="test",
                          timer=TimerPlan.resolve("graph", "cuda", suite.timing), registry=REGISTRY, check=True)


def _point(seqlens):
    return Point(backend="fla-intracp", mode="fwd", layout="varlen", batch=1, seqlens=seqlens, h_qk=2, h_v=8, K=128,
                 V=128, dtype="bfloat16", gate="flashqla", model="qwen3.5-397b", tp=8)


@pytest.fixture(autouse=True)
def _need():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    ok, why = REGISTRY["fla-intracp"].available()
    if not ok:
        pytest.skip(f"fla-intracp unavailable: {why}")


def test_a_long_packed_sequence_is_split_checked_and_timed_with_events():
    # full_size: the 32k outputs of the split call against naive-chunk (the oracle check's 512 tokens run unsplit)
    row = run_point(_point((32768,)), _ctx(full_size=True))
    assert row.status == "ok", row.reason
    assert row.err_o <= tolerance("bfloat16", "o") and row.err_ht <= tolerance("bfloat16", "ht")
    assert row.timer == "events"
    extra = json.loads(row.extra_json)
    assert extra["timer_requested"] == "graph" and "cannot be captured in a CUDA graph" in extra["timer_note"]
    cp = extra["intracard_cp"]
    assert cp["engaged"] is True, cp
    assert cp["note"].startswith("intra-card CP engaged") and cp["plan"]["subsequences"] >= 2
    assert any(k.startswith("chunk_cp_fwd_kernel_h") for k in row.kernels)
    assert not any(k.startswith("tilelang_") for k in row.kernels)  # FLA's own kernels, not FlashQLA's


def test_a_short_sequence_runs_unsplit_and_the_row_says_so():
    row = run_point(_point((4096,)), _ctx(full_size=False))
    assert row.status == "ok", row.reason
    cp = json.loads(row.extra_json)["intracard_cp"]
    assert cp["engaged"] is False and cp["note"].startswith("intra-card CP did not engage")
    assert cp["plan"]["subsequences"] == 0
    assert not any(k.startswith("chunk_cp_") for k in row.kernels)
