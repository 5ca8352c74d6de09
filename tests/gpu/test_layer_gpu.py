"""Layer backends on a real CUDA device: checked against the fp32 oracle layer, timed under CUDA graphs,
the core's share read from the kernel trace. Run with `pytest -m gpu`; skipped elsewhere."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.gpu

from qlabench.measure.timing import TimerPlan  # noqa: E402
from qlabench.backends import REGISTRY  # noqa: E402
from qlabench.core.point import Point  # noqa: E402
from qlabench.core.spec import CheckSpec, Suite, TimingSpec  # noqa: E402
from qlabench.run.point import MeasureContext, run_point  # noqa: E402

FAST = TimingSpec(timer="graph", warmup=1, min_samples=3, max_samples=10, max_time_s=0.5, target_rel_noise=0.05)


def _ctx(points):
    from qlabench.measure import env

    suite = Suite(name="gpu-layer-test", path="<test>", points=tuple(points), timing=FAST,
                  check=CheckSpec(oracle_max_tokens=256))
    return MeasureContext(suite=suite, device="cuda", env=env.capture("cuda"), run_id="test", registry=REGISTRY,
                          check=True, timer=TimerPlan.resolve("graph", "cuda", suite.timing))


def _point(backend, layout="varlen", batch=1, seqlens=(4096,)):
    return Point(backend=backend, mode="fwd", layout=layout, batch=batch, seqlens=seqlens, h_qk=2, h_v=8, K=128,
                 V=128, dtype="bfloat16", gate="fla", model="qwen3.5-397b", tp=8)


@pytest.mark.parametrize("point", [
    _point("layer:fla"), _point("layer:flash_qla"), _point("layer:naive-chunk", seqlens=(1024,)),
    _point("layer:fla-recurrent", layout="dense", batch=64, seqlens=(1,) * 64),
], ids=lambda p: p.backend + ("-decode" if p.seq_len == 1 else ""))
def test_a_layer_point_is_ok_with_its_cores_share_from_the_kernel_trace(point):
    ok, why = REGISTRY[point.backend].available()
    if not ok:
        pytest.skip(f"{point.backend} unavailable: {why}")
    row = run_point(point, _ctx([point]))
    assert row.status == "ok", row.reason
    assert row.oracle.startswith("layer:naive-recurrent float32")
    layer = json.loads(row.extra_json)["layer"]
    assert layer["core_share_from"] == "kernel trace"
    assert 0 < layer["core_share"] < 1  # the projections take GPU time too
    if REGISTRY[point.backend].expect_kernels:
        assert layer["core_share_prefix"] == pytest.approx(layer["core_share"], abs=0.15)
