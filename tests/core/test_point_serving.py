"""Serving points (modes decode and mtp): their shape rules, state-pool axes and labels."""

from __future__ import annotations

import pytest

from qlabench.core import identity
from qlabench.core.errors import PointError
from qlabench.core.point import Point


def serving(**kw) -> Point:
    base = dict(backend="naive-step", mode="decode", layout="dense", batch=4, seqlens=(1,) * 4, h_qk=2, h_v=4,
                state_dtype="float32", state_layout="kv", pool=8)
    base.update(kw)
    if "batch" in kw and "seqlens" not in kw:
        base["seqlens"] = (base["seqlens"][0],) * kw["batch"]
    return Point(**base)


def test_a_decode_point_is_a_batch_of_one_token_steps_against_a_pool():
    p = serving()
    assert p.is_serving and p.tokens_per_seq == 1 and p.pool == 8
    assert "state=float32/kv pool=8" in p.label()


@pytest.mark.parametrize("kw, words", [
    (dict(seqlens=(2,) * 4), "decode is one token per sequence"),
    (dict(mode="mtp"), "mtp verifies 2..16 tokens"),
    (dict(mode="mtp", seqlens=(17,) * 4), "mtp verifies 2..16 tokens"),
    (dict(pool=3), "pool must be an integer number of state slots >= batch (4)"),
    (dict(pool=None), "pool must be an integer"),
    (dict(state_dtype="float16"), "state_dtype 'float16' not in"),
    (dict(state_layout="kvk"), "state_layout 'kvk' not in"),
    (dict(initial_state=False), "always starts from its sequences' states"),
    (dict(layout="varlen", batch=1, seqlens=(1, 1)), "points are dense"),
])
def test_an_impossible_serving_point_is_refused_with_its_reason(kw, words):
    with pytest.raises(PointError, match=words.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        serving(**kw)


def test_pool_fields_on_a_prefill_point_are_refused():
    with pytest.raises(PointError, match="apply to serving modes"):
        Point(backend="fla", mode="fwd", layout="dense", batch=1, seqlens=(64,), h_qk=1, h_v=1,
              state_dtype="float32", pool=4)


def test_the_pool_axes_key_the_point_apart():
    a, b = serving(), serving(state_dtype="bfloat16")
    assert a.key() != b.key() and a.workload_key() != b.workload_key()
    assert serving(state_layout="vk").workload_key() != a.workload_key()
    assert serving(pool=16).workload_key() != a.workload_key()
    assert {"state_dtype", "state_layout", "pool", "beta_regime"} <= set(identity.key_axes())


def test_the_check_applies_the_less_precise_of_input_and_state_dtype():
    assert serving(dtype="float32", state_dtype="bfloat16").tolerance_dtype == "bfloat16"
    assert serving(dtype="bfloat16", state_dtype="float32").tolerance_dtype == "bfloat16"
    assert serving(dtype="float32", state_dtype="float32").tolerance_dtype == "float32"


def test_beta_regime_is_checked_and_labelled():
    p = Point(backend="fla", mode="fwd", layout="dense", batch=1, seqlens=(64,), h_qk=1, h_v=1, beta_regime="low")
    assert "beta=low" in p.label()
    with pytest.raises(PointError, match="beta_regime 'mid'"):
        p.with_(beta_regime="mid")
