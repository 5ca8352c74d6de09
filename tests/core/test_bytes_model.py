"""The serving byte model and the bandwidth limit (core/bytes_model.py)."""

from __future__ import annotations

import pytest

from qlabench.core import bytes_model
from qlabench.core.errors import MeasureError
from qlabench.core.flops import throughput
from qlabench.core.point import Point


def decode(batch=256, T=1, state_dtype="float32", dtype="bfloat16", h=(8, 32)) -> Point:
    return Point(backend="fla-recurrent", mode="decode" if T == 1 else "mtp", layout="dense", batch=batch,
                 seqlens=(T,) * batch, h_qk=h[0], h_v=h[1], dtype=dtype, state_dtype=state_dtype,
                 state_layout="kv", pool=2 * batch)


def test_the_states_dominate_a_decode_step_and_are_counted_both_ways():
    b = bytes_model.step_bytes(decode())
    states = 256 * 32 * 128 * 128 * 4  # 512 MiB read, and again written
    qk, v = 256 * 8 * 128 * 2, 256 * 32 * 128 * 2
    assert b.read == states + 2 * qk + v + 2 * 256 * 32 * 4 + 256 * 4
    assert b.written == states + v
    assert b.moved == b.read + b.written


def test_a_bfloat16_pool_halves_the_state_traffic():
    f32, b16 = bytes_model.step_bytes(decode()), bytes_model.step_bytes(decode(state_dtype="bfloat16"))
    half = 256 * 32 * 128 * 128 * 2
    assert f32.read - b16.read == half and f32.written - b16.written == half


def test_mtp_reads_the_state_once_for_all_its_tokens():
    d, m = bytes_model.step_bytes(decode(T=1)), bytes_model.step_bytes(decode(T=4))
    assert m.read - d.read == 3 * (2 * 256 * 8 * 128 * 2 + 256 * 32 * 128 * 2 + 2 * 256 * 32 * 4)


def test_the_fraction_is_the_limit_over_the_measured_time():
    b = bytes_model.StepBytes(read=4_000_000, written=2_000_000)
    limit = bytes_model.limit_seconds(b, read_tbs=4.0, write_tbs=4.0)
    assert limit == pytest.approx(1.5e-6)
    assert bytes_model.bandwidth_fraction(b, 0.003, 4.0, 4.0) == pytest.approx(0.5)
    assert bytes_model.bandwidth_fraction(b, 0.001, 4.0, 4.0) == pytest.approx(1.5)  # impossible: run/point fails it
    assert bytes_model.bandwidth_fraction(b, 0.003, None, 4.0) is None


def test_bad_inputs_are_refused():
    with pytest.raises(MeasureError, match="decode/mtp points"):
        bytes_model.step_bytes(Point(backend="fla", mode="fwd", layout="dense", batch=1, seqlens=(8,), h_qk=1, h_v=1))
    with pytest.raises(MeasureError, match="peaks must be positive"):
        bytes_model.limit_seconds(bytes_model.StepBytes(1, 1), 0.0, 1.0)


def test_throughput_of_a_serving_point_uses_the_recurrence_and_the_step_bytes():
    p = decode()
    tflops, gbps = throughput(p, 1.0)
    assert gbps == pytest.approx(bytes_model.step_bytes(p).moved / 1e-3 / 1e9)
    assert tflops == pytest.approx(7 * 128 * 128 * 32 * 256 / 1e-3 / 1e12)
