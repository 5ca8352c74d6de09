"""The one table of modes (core/modes.py): what each mode's call runs, read by the point, the check, the
FLOP/byte models and the backends."""

from __future__ import annotations

import pytest

from qlabench.core import flops
from qlabench.core.modes import BACKWARD_MODES, MODE_TABLE, MODES, SERVING_MODES, mode_of
from qlabench.core.point import Point


def point(mode, **kw):
    fields = dict(backend="naive-chunk", mode=mode, layout="dense", batch=1, seqlens=(256,), h_qk=2, h_v=4, K=64,
                  V=64, dtype="bfloat16")
    return Point(**{**fields, **kw})


def test_every_mode_has_one_entry_and_the_point_accepts_exactly_those():
    assert len({m.name for m in MODE_TABLE}) == len(MODE_TABLE) == len(MODES)
    with pytest.raises(Exception, match="mode"):
        point("forward")


def test_a_backward_mode_checks_gradients_and_counts_backward_work():
    for name in MODES:
        m = mode_of(name)
        if m.serving:
            continue
        assert point(name).has_backward == m.backward == (name in BACKWARD_MODES)
    # fwd_bwd counts both passes, bwd and bwd_train the backward alone, fwd the forward alone
    assert flops.flops(point("fwd_bwd")) == pytest.approx(flops.flops(point("fwd")) + flops.flops(point("bwd")))
    assert flops.flops(point("bwd")) == flops.flops(point("bwd_train"))


def test_a_serving_step_is_counted_by_the_step_model_not_the_chunked_one():
    assert set(SERVING_MODES) == {"decode", "mtp"}
    for name in SERVING_MODES:
        m = mode_of(name)
        assert m.serving and not m.backward and m.work_model == "step"
    assert all(mode_of(n).work_model == "chunked" for n in MODES if n not in SERVING_MODES)
