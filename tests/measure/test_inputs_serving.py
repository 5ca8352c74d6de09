"""A serving point's inputs: its state pool, the slot rotations, h0 as the oracle sees it, and beta regimes."""

from __future__ import annotations

import torch

from qlabench.core.point import Point
from qlabench.measure.inputs import canonical_states, make_inputs, reduced_seqlens


def point(**kw) -> Point:
    base = dict(backend="naive-step", mode="decode", layout="dense", batch=3, seqlens=(1,) * 3, h_qk=1, h_v=2,
                K=8, V=4, dtype="float32", state_dtype="float32", state_layout="kv", pool=10)
    base.update(kw)
    return Point(**base)


def test_the_pool_has_the_points_dtype_layout_and_slots():
    inp = make_inputs(point(state_dtype="bfloat16", state_layout="vk"))
    assert inp.pool.shape == (10, 2, 4, 8) and inp.pool.dtype == torch.bfloat16  # [P, HV, V, K]
    assert inp.state_layout == "vk"
    assert inp.slots.dtype == torch.int32 and inp.slots.shape == (3, 3)  # 10 // 3 rotations of 3 slots


def test_rotations_are_disjoint_and_inside_the_pool():
    slots = make_inputs(point()).slots
    flat = slots.flatten().tolist()
    assert len(set(flat)) == len(flat) and 0 <= min(flat) and max(flat) < 10


def test_h0_is_the_batchs_states_in_float32_and_the_canonical_layout():
    inp = make_inputs(point(state_dtype="bfloat16", state_layout="vk"))
    want = inp.pool[inp.slots[0].long()].float().transpose(-1, -2)
    assert inp.h0.dtype == torch.float32 and inp.h0.shape == (3, 2, 8, 4)
    assert torch.equal(inp.h0, want)
    assert torch.equal(canonical_states(inp.pool[:2], "kv" if False else "vk"), inp.pool[:2].float().transpose(-1, -2))


def test_the_pool_keeps_its_dtype_when_the_inputs_are_cast_for_a_reference():
    inp = make_inputs(point(state_dtype="bfloat16", dtype="bfloat16"))
    assert inp.to(torch.float32).pool.dtype == torch.bfloat16
    assert inp.to(torch.float32).q.dtype == torch.float32


def test_a_prefill_point_draws_the_same_inputs_as_before_serving_existed():
    p = Point(backend="fla", mode="fwd", layout="dense", batch=1, seqlens=(16,), h_qk=1, h_v=2, K=8, V=4)
    inp = make_inputs(p)
    assert inp.pool is None and inp.slots is None
    gen = torch.Generator().manual_seed(0)
    q = torch.nn.functional.normalize(torch.randn((1, 16, 1, 8), generator=gen), dim=-1)
    assert torch.equal(inp.q.float(), q.to(torch.bfloat16).float())


def test_beta_regimes_sit_at_either_end():
    base = dict(backend="fla", mode="fwd", layout="dense", batch=1, seqlens=(64,), h_qk=1, h_v=2, K=8, V=4)
    low = make_inputs(Point(**base, beta_regime="low")).beta
    high = make_inputs(Point(**base, beta_regime="high")).beta
    mid = make_inputs(Point(**base)).beta
    assert low.max() <= 0.05 and high.min() >= 0.95
    assert torch.allclose(low / 0.05, mid) and torch.allclose((1 - high) / 0.05, mid)


def test_a_serving_point_is_checked_at_its_full_size():
    p = point(batch=1024, seqlens=(1,) * 1024, pool=2048)
    assert reduced_seqlens(p, 256) == p.seqlens
