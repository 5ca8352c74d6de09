"""SM budgets on a real GPU (measure/sm_budget.py, docs/SM-BUDGET.md): a green context really holds a call to
its SMs, a point's row records the SMs granted and its extra device memory, and a library call that launches
work outside the budget's stream is caught. Run with `pytest -m gpu` on a CUDA host (torch with green
contexts, driver 12.8+); skipped elsewhere."""

from __future__ import annotations

import json
import statistics

import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.gpu

from qlabench.backends import REGISTRY  # noqa: E402
from qlabench.backends.naive import NaiveChunk  # noqa: E402
from qlabench.core.point import Point  # noqa: E402
from qlabench.core.spec import CheckSpec, Suite, TimingSpec  # noqa: E402
from qlabench.measure import sm_budget  # noqa: E402
from qlabench.measure.timing import TimerPlan  # noqa: E402
from qlabench.run.point import MeasureContext, run_point  # noqa: E402

FAST = TimingSpec(timer="graph", warmup=2, min_samples=5, max_samples=20, max_time_s=0.5, target_rel_noise=0.02)


@pytest.fixture(autouse=True)
def _green_contexts():
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    if why := sm_budget.support_problem():
        pytest.skip(why)


def _ctx(points, registry=REGISTRY, timer="graph"):
    from qlabench.measure import env

    suite = Suite(name="sm-budget-test", path="<test>", points=tuple(points), timing=FAST,
                  check=CheckSpec(oracle_max_tokens=256))
    return MeasureContext(suite=suite, device="cuda", env=env.capture("cuda"), run_id="test",
                          timer=TimerPlan.resolve(timer, "cuda", suite.timing), registry=registry, check=True)


def _point(backend="naive-chunk", seqlen=8192, budget=None, **kw):
    return Point(backend=backend, mode="fwd", layout="varlen", batch=1, seqlens=(seqlen,), h_qk=2, h_v=8, K=128,
                 V=128, dtype="bfloat16", gate="flashqla", model="qwen3.5-397b", tp=8, sm_budget=budget, **kw)


def _matmul_ms(grant) -> float:
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    with sm_budget.held_to(grant):
        m = TimerPlan.resolve("graph", "cuda", FAST).make("cuda").measure(lambda: a @ b)
    return statistics.median(m.samples_ms)


def test_a_matmul_held_to_16_sms_is_several_times_slower_than_on_the_whole_gpu():
    idx = torch.cuda.current_device()
    whole = _matmul_ms(None)
    held = _matmul_ms(sm_budget.grant(16, idx))
    sms = torch.cuda.get_device_properties(idx).multi_processor_count
    # an SM-bound matmul at 16 of 132 SMs: ~8x; 3x leaves room for clocks and the partition's overhead
    assert held > 3 * whole, (whole, held, sms)


def test_the_grant_records_the_sms_the_driver_gave():
    idx = torch.cuda.current_device()
    g = sm_budget.grant(16, idx)
    assert g.partitioned and g.granted == 16 and g.granted_from in ("driver", "rule")
    whole = sm_budget.grant(torch.cuda.get_device_properties(idx).multi_processor_count, idx)
    assert not whole.partitioned and whole.granted_from == "device"
    assert sm_budget.grant(16, idx) is g  # one green context per (device, budget) per process


@pytest.mark.parametrize("backend", ["naive-chunk", "flash_qla"])
def test_a_point_held_to_16_sms_is_slower_and_its_row_says_so(backend):
    """Every row held to a budget records it and its memory; a kernel that fills the GPU (FlashQLA's split call)
    is slower at 16 SMs."""
    ok, why = REGISTRY[backend].available()
    if not ok:
        pytest.skip(f"{backend} unavailable: {why}")
    seqlen = 32768 if backend == "flash_qla" else 8192
    points = [_point(backend, seqlen, b) for b in (None, 64, 16)]
    ctx = _ctx(points)
    rows = [run_point(p, ctx) for p in points]
    for r in rows:
        assert r.status == "ok", r.reason
        assert r.extra_mem_mib is not None and r.extra_mem_mib >= 0
        assert r.outside_mem_mib is not None and r.outside_mem_mib >= 0
    whole, at64, at16 = rows
    assert whole.sm_budget is None and whole.sm_granted is None
    assert (at64.sm_budget, at64.sm_granted, at16.sm_budget, at16.sm_granted) == (64, 64, 16, 16)
    assert json.loads(at16.extra_json)["sm_budget"]["escape_check"].startswith("all ")
    if backend == "naive-chunk":
        # the PyTorch reference is a chain of small launches that fill few SMs: on the H200 (2026-12-02) it read
        # 37.7 ms at 16 SMs against 45.7 on the whole GPU, so its time says nothing about the partition; its
        # rows are held to the budget all the same (granted, and every kernel on the budget's stream, above)
        return
    # held to 16 of the device's SMs the kernels have an eighth of the SMs: slower by well over 1.5x
    assert at16.median_ms > 1.5 * whole.median_ms and at64.median_ms < at16.median_ms, [r.median_ms for r in rows]


class _Escaping(NaiveChunk):
    """naive-chunk whose call runs on a stream of its own: outside any green context the caller holds."""

    name = "escaping-naive-chunk"

    def prepare_point(self, point, inp):
        fn = super().prepare_point(point, inp)
        side = torch.cuda.Stream()

        def call():
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                out = fn()
            torch.cuda.current_stream().wait_stream(side)
            return out

        return call


def test_a_backend_that_launches_on_another_stream_escapes_its_budget():
    registry = {**REGISTRY, _Escaping.name: _Escaping()}
    held, whole = _point(_Escaping.name, 2048, 32), _point(_Escaping.name, 2048, None)
    ctx = _ctx([held, whole], registry)
    row = run_point(held, ctx)
    assert row.status == "error" and "escaped the SM budget of 32" in row.reason, row.reason
    assert row.sm_granted == 32
    assert run_point(whole, ctx).status == "ok"  # without a budget there is nothing to escape


def test_a_point_at_a_count_the_device_cannot_grant_is_an_error_row_and_the_sweep_refuses_it():
    from qlabench.core.errors import SMBudgetError

    p = _point(budget=12)  # not a multiple of 8 on SM90 (nor of 2 below it: 12 is, so use 13 there)
    if torch.cuda.get_device_capability()[0] < 9:
        p = _point(budget=13)
    ctx = _ctx([p])
    row = run_point(p, ctx)
    assert row.status == "error" and "grants" in row.reason, row.reason
    with pytest.raises(SMBudgetError, match="grants"):
        sm_budget.check_budgets([p], "cuda")
