"""The physical floor of a call: a time below what the device's peaks allow, or over an hour, is no time."""

from __future__ import annotations

import math

import pytest

from qlabench.core.device_limits import ANY_DEVICE, DEVICES, SLACK, SLOWEST_MS, fastest_ms, impossible_time, limits_of
from qlabench.core.flops import work
from qlabench.core.point import Point

H200 = "NVIDIA H200"


def prefill(tokens=8192, **kw) -> Point:
    base = dict(backend="fla", mode="fwd", layout="dense", batch=1, seqlens=(tokens,), h_qk=16, h_v=32, K=128, V=128,
                dtype="bfloat16")
    base.update(kw)
    return Point(**base)


def test_the_longest_name_fragment_wins_and_an_unknown_device_gets_the_bound_of_any():
    assert limits_of(H200) == DEVICES["H200"]  # not H20's
    assert limits_of("NVIDIA H20") == DEVICES["H20"]
    assert limits_of("AMD EPYC 9654") == limits_of(None) == ANY_DEVICE


def test_the_floor_is_the_work_at_the_peaks_over_the_slack():
    p = prefill()
    flop, moved = work(p)
    lim = DEVICES["H200"]
    want = max(flop / (lim.tflops * 1e12), moved / (lim.hbm_tbs * 1e12)) / SLACK * 1e3
    assert fastest_ms(p, H200) == pytest.approx(want)
    # a context-parallel point's ranks each do their share
    cp = prefill(cp_world_size=2, cp_mode="inter")
    assert fastest_ms(cp, H200) == pytest.approx(want / 2)


@pytest.mark.parametrize("ms", [2.4e-7, 1e-5, 0.0, -1.0, math.inf, math.nan, 1e29, SLOWEST_MS * 2])
def test_an_impossible_time_is_named(ms):
    assert impossible_time(prefill(), H200, ms) is not None


@pytest.mark.parametrize("ms", [0.08, 0.3, 4887.0])  # the H200's fastest fla forward at 8192 tokens is ~0.12 ms
def test_a_measured_time_is_believed(ms):
    assert impossible_time(prefill(), H200, ms) is None


def test_a_serving_step_is_bounded_by_its_state_traffic():
    p = Point(backend="fla-recurrent", mode="decode", layout="dense", batch=256, seqlens=(1,) * 256, h_qk=16,
              h_v=32, dtype="bfloat16", state_dtype="float32", state_layout="kv", pool=512)
    floor = fastest_ms(p, H200)
    assert floor == pytest.approx(work(p)[1] / (4.8e12 * SLACK) * 1e3)  # memory-bound: the bytes decide
    assert impossible_time(p, H200, floor / 2) and impossible_time(p, H200, floor * 2) is None
