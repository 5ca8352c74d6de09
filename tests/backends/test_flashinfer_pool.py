"""flashinfer-pool: FlashInfer 0.7.2's prefill into a state pool through `state_indices`, on CPU through run_point.

A stand-in with FlashInfer's documented pool semantics (sequence i reads initial_state[state_indices[i]] and
writes its final state to output_state[state_indices[i]]; nothing else) replaces the library. Called so, the
row is ok; a kernel that ignores the indices, or writes a slot outside the batch, is `incorrect` and untimed.
"""

from __future__ import annotations

import functools
import inspect

import pytest
import torch

from qlabench.backends import REGISTRY
from qlabench.backends import flashinfer as fi_mod
from qlabench.backends.flashinfer_pool import POOL_FACTOR, has_state_indices, state_pool
from qlabench.core.spec import parse_suite
from qlabench.measure import env as envmod
from qlabench.measure.timing import TimerPlan
from qlabench.backends.reference import recurrent_gated_delta_rule
from qlabench.run.point import MeasureContext, run_point


def flashinfer_semantics(q, k, v, g, beta, scale, h0_vk, cu_seqlens):
    """FlashInfer's prefill on states [N, HV, V, K]: decay g is linear alpha, token-major (as test_flashinfer.py)."""
    o, ht = recurrent_gated_delta_rule(q[None].float(), k[None].float(), v[None].float(), g.log()[None],
                                       beta[None], scale=scale, initial_state=h0_vk.transpose(-1, -2),
                                       cu_seqlens=cu_seqlens)
    return o[0].to(q.dtype), ht.transpose(-1, -2).contiguous()


def pool_semantics(q, k, v, g=None, beta=None, scale=None, initial_state=None, output_final_state=False,
                   cu_seqlens=None, output_state=None, state_indices=None, use_cp="auto", backend="auto",
                   max_seqlen=None):
    """FlashInfer 0.7.2's prefill with a pool: gather the batch's states, the prefill, write them back in place."""
    rows = state_indices.long()
    o, state = flashinfer_semantics(q, k, v, g, beta, scale, initial_state[rows].contiguous(), cu_seqlens)
    output_state[rows] = state
    return o, output_state


def packed_semantics(q, k, v, g=None, beta=None, scale=None, initial_state=None, output_final_state=False,
                     cu_seqlens=None, output_state=None, state_indices=None, use_cp="auto", backend="auto",
                     max_seqlen=None):
    """A prefill that ignores the indices: rows 0..N-1 of the pool, as an unindexed call reads its states."""
    n = cu_seqlens.numel() - 1
    o, state = flashinfer_semantics(q, k, v, g, beta, scale, initial_state[:n].contiguous(), cu_seqlens)
    output_state[:n] = state
    return o, output_state


def clobbering_semantics(q, k, v, g=None, beta=None, scale=None, initial_state=None, output_final_state=False,
                         cu_seqlens=None, output_state=None, state_indices=None, **kw):
    """Right states at the right slots, and one slot outside the batch overwritten (a stray tile's write)."""
    o, pool = pool_semantics(q, k, v, g, beta, scale, initial_state, output_final_state, cu_seqlens, output_state,
                             state_indices)
    outside = sorted(set(range(pool.shape[0])) - set(state_indices.tolist()))[0]
    pool[outside] += 1e-3
    return o, pool


def _run(monkeypatch, prefill, seqlens=(24, 40), initial_state=True, reference="oracle", check_tokens=256):
    monkeypatch.setattr(fi_mod, "_import", lambda: (prefill, ""))
    b = REGISTRY["flashinfer-pool"]
    monkeypatch.setattr(type(b), "devices", frozenset({"cpu", "cuda"}))  # the stand-in runs anywhere
    sweep = {"backends": ["flashinfer-pool"], "heads": [{"h_qk": 1, "h_v": 2}], "K": 128, "V": 128,
             "dtype": "bfloat16", "gate": "flashqla", "initial_state": initial_state, "varlen": [list(seqlens)]}
    s = parse_suite({"name": "fi-pool", "device": "cpu", "sweep": sweep,
                     "timing": {"timer": "wall", "warmup": 0, "min_samples": 2, "max_samples": 2},
                     "check": {"reference": reference, "oracle_max_tokens": check_tokens}}, "fi-pool.toml")
    ctx = MeasureContext(suite=s, device="cpu", env=envmod.capture("cpu"), run_id="r",
                         timer=TimerPlan.resolve("wall", "cpu", s.timing), registry=REGISTRY, check=True)
    return run_point(s.points[0], ctx)


@pytest.mark.parametrize("initial_state", [True, False])
def test_a_prefill_through_slot_indices_is_checked_with_the_untouched_slots_and_timed(monkeypatch, initial_state):
    row = _run(monkeypatch, pool_semantics, initial_state=initial_state)
    assert row.status == "ok", row.reason
    assert row.median_ms is not None and row.err_o < 0.02 and row.err_ht < 0.02
    assert row.err_pool == 0.0  # the slots outside the batch, bit for bit


def test_a_prefill_that_ignores_the_indices_is_incorrect_not_timed(monkeypatch):
    row = _run(monkeypatch, packed_semantics)
    assert row.status == "incorrect" and row.median_ms is None
    assert "ht" in row.reason or "pool" in row.reason, row.reason


def test_a_write_outside_the_batch_is_incorrect_though_o_and_ht_are_right(monkeypatch):
    row = _run(monkeypatch, clobbering_semantics)
    assert row.status == "incorrect" and row.median_ms is None
    assert row.reason.startswith("pool rel err") and row.err_o < 0.02 and row.err_ht < 0.02, row.reason


def test_a_write_outside_the_batch_only_at_full_size_is_caught_there(monkeypatch):
    """The reduced check runs 32 tokens; a kernel whose path changes with the size (a CP split) clobbers only
    on the full call: its row is incorrect all the same."""
    @functools.wraps(pool_semantics)  # its signature: FlashInfer 0.7.2's
    def clobbers_when_long(q, *args, **kw):
        return (clobbering_semantics if q.shape[0] > 32 else pool_semantics)(q, *args, **kw)

    # checked at its own size (the reduced check is left out where the full-size one sees the timed call)
    assert _run(monkeypatch, clobbering_semantics, check_tokens=32).reason.startswith("full size: pool rel err")
    row = _run(monkeypatch, clobbers_when_long, check_tokens=32)
    assert row.status == "incorrect" and row.reason.startswith("full size: pool rel err"), row.reason


def test_the_float64_reference_holds_the_untouched_slots_too(monkeypatch):
    assert _run(monkeypatch, pool_semantics, reference="fp64-full").status == "ok"
    row = _run(monkeypatch, clobbering_semantics, reference="fp64-full")
    assert row.status == "incorrect" and "pool rel err" in row.reason, row.reason


def test_the_pool_holds_the_batch_at_distinct_random_slots_the_same_for_every_call():
    h0 = torch.randn(3, 2, 8, 8)
    pool, slots = state_pool(h0)
    assert pool.shape == (POOL_FACTOR * 3, 2, 8, 8) and pool.dtype == torch.float32
    assert slots.dtype == torch.int32 and slots.is_contiguous() and len(set(slots.tolist())) == 3
    assert torch.equal(pool[slots.long()], h0)
    again, again_slots = state_pool(h0)
    assert torch.equal(again, pool) and torch.equal(again_slots, slots)


def test_a_flashinfer_without_state_indices_is_refused_with_the_reason(monkeypatch):
    def prefill_06(q, k, v, g=None, beta=None, scale=None, initial_state=None, output_final_state=False,
                   cu_seqlens=None, use_qk_l2norm_in_kernel=False):  # 0.6.13's parameters
        raise AssertionError("never called")

    assert has_state_indices(pool_semantics) and not has_state_indices(prefill_06) and not has_state_indices(None)
    monkeypatch.setattr(fi_mod, "_import", lambda: (prefill_06, ""))
    ok, why = REGISTRY["flashinfer-pool"].available()
    assert not ok and "state_indices" in why


def test_the_declared_call_names_the_pool_arguments():
    call = REGISTRY["flashinfer-pool"].call_signature
    for arg in ("initial_state=pool", "output_state=pool", "state_indices=slots"):
        assert arg in call
    assert set(inspect.signature(pool_semantics).parameters) >= {"state_indices", "output_state"}


def test_its_suite_times_the_pool_prefill_beside_the_packed_one_on_the_same_problems():
    from qlabench.core.spec import load_suite, resolve_suite_path

    s = load_suite(str(resolve_suite_path("flashinfer-pool")))
    by = {b: {p.with_(backend="x") for p in s.points if p.backend == b} for b in ("flashinfer", "flashinfer-pool")}
    assert len(s.points) == 24 and by["flashinfer"] == by["flashinfer-pool"] and len(by["flashinfer"]) == 12
    assert all(p.initial_state and p.mode == "fwd" for p in s.points)
