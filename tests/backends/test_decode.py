"""Serving steps through the row pipeline on CPU: the pool, the slots, the rotation and the check's outputs.

`naive-step` (gather, fp32 recurrence, scatter in PyTorch) is the real step of backends/decode.py; the broken
steps below are what a wrong serving kernel does, and each must come out `incorrect`, never timed."""

from __future__ import annotations

import pytest
import torch

from qlabench.backends import REGISTRY
from qlabench.backends.naive import NaiveStep
from qlabench.core.point import Point
from qlabench.core.spec import parse_suite
from qlabench.measure.inputs import make_inputs
from qlabench.run.options import InProcess, RunOptions
from qlabench.run.sweep import run_sweep


def suite(backends, **sweep):
    s = {"backends": backends, "modes": ["decode"], "batch": [3], "seqlen": [1], "heads": [{"h_qk": 1, "h_v": 2}],
         "K": 8, "V": 8, "dtype": "float32", "state_layout": ["kv", "vk"]}
    s.update(sweep)
    return parse_suite({"name": "decode", "device": "cpu", "sweep": s,
                        "timing": {"timer": "wall", "warmup": 0, "min_samples": 2, "max_samples": 3}})


class NeighbourWrite(NaiveStep):
    """Writes each final state one slot too far: right numbers, another sequence's state clobbered."""

    name = "neighbour-write"

    def step(self, inp, pool, slots):
        return super().step(inp, pool, (slots + 1) % pool.shape[0])


class LayoutMixup(NaiveStep):
    """Reads and writes a "vk" pool as if it were "kv" (the conversion a wrong adapter forgets)."""

    name = "layout-mixup"

    def step(self, inp, pool, slots):
        inp.state_layout = "kv"
        return super().step(inp, pool, slots)


class NoWriteBack(NaiveStep):
    """Computes o but never writes the states back (a step that would look very fast)."""

    name = "no-write-back"

    def step(self, inp, pool, slots):
        return super().step(inp, pool.clone(), slots)


def rows(tmp_path, backends, **sweep):
    registry = {**REGISTRY, **{b.name: b for b in (NeighbourWrite(), LayoutMixup(), NoWriteBack())}}
    return run_sweep(suite(backends, **sweep), tmp_path, RunOptions(executor=InProcess(registry))).rows


def test_the_plain_step_matches_the_oracle_in_both_layouts(tmp_path):
    out = rows(tmp_path, ["naive-step"])
    assert [r.status for r in out] == ["ok", "ok"], [r.reason for r in out]
    for r in out:
        assert r.err_o < 1e-6 and r.err_ht < 1e-6 and r.err_pool == 0.0
        assert r.bytes_moved > 0 and r.hbm_frac is None  # no measured peaks on CPU


def test_a_step_that_writes_another_sequences_state_is_incorrect(tmp_path):
    (r, _) = rows(tmp_path, ["neighbour-write"])
    assert r.status == "incorrect" and "pool rel err" in r.reason and r.median_ms is None


def test_a_step_that_reads_the_wrong_layout_is_incorrect(tmp_path):
    kv, vk = rows(tmp_path, ["layout-mixup"])
    assert kv.status == "ok"  # the same call is right when the pool really is "kv"
    assert vk.status == "incorrect" and "ht rel err" in vk.reason


def test_a_step_that_skips_its_write_back_is_incorrect(tmp_path):
    r, _ = rows(tmp_path, ["no-write-back"])
    assert r.status == "incorrect" and "ht rel err" in r.reason


def test_a_bfloat16_pool_is_held_to_bfloat16_tolerances(tmp_path):
    out = rows(tmp_path, ["naive-step"], state_dtype=["bfloat16"])
    assert all(r.status == "ok" for r in out), [r.reason for r in out]
    assert all(1e-4 < r.err_ht < 0.02 for r in out)


def test_library_backends_without_a_serving_kernel_say_so(tmp_path):
    p = Point(backend="flash_qla", mode="decode", layout="dense", batch=1, seqlens=(1,), h_qk=1, h_v=1,
              state_dtype="float32", state_layout="kv", pool=2)
    ok, why = REGISTRY["naive-chunk"].supports(p.with_(backend="naive-chunk"), "cpu")
    assert not ok and "no decode mode" in why


def test_timed_calls_rotate_through_the_pool_and_only_the_first_returns_the_check():
    p = Point(backend="naive-step", mode="decode", layout="dense", batch=2, seqlens=(1, 1), h_qk=1, h_v=2, K=8,
              V=8, dtype="float32", state_dtype="float32", state_layout="kv", pool=6)
    inp = make_inputs(p)
    fn = REGISTRY["naive-step"].prepare_point(p, inp)
    first = fn()
    assert set(first) == {"o", "ht", "pool"} and first["pool"].shape[0] == 4
    assert fn.rotations == 3
    before = inp.pool.clone()
    for _ in range(2):
        assert set(fn()) == {"o"}  # the timed calls do no gather for the check
    assert torch.equal(inp.pool, before)  # the prepared call steps its own copy of the pool


def test_each_rotation_of_slots_is_its_own_aligned_tensor(monkeypatch):
    """At batch 1 a row of inp.slots starts 4 bytes into its tensor; FlashInfer's CuTe DSL kernels refuse
    such an index tensor ("Misaligned Tensor data", H200), so every rotation is handed over as a tensor of
    its own, starting at offset 0 of its own storage, as an engine's index tensor is."""
    p = Point(backend="naive-step", mode="decode", layout="dense", batch=1, seqlens=(1,), h_qk=1, h_v=2, K=8,
              V=8, dtype="float32", state_dtype="float32", state_layout="kv", pool=4)
    inp = make_inputs(p)
    assert inp.slots[1].storage_offset() > 0  # the case that failed: a view into one [R, B] tensor
    seen = []
    b = REGISTRY["naive-step"]
    step = type(b).step
    monkeypatch.setattr(type(b), "step", lambda self, x, pool, slots: seen.append(slots) or step(self, x, pool, slots))
    fn = b.prepare_point(p, inp)
    for _ in range(fn.rotations):
        fn()
    assert len(seen) == fn.rotations
    assert all(s.storage_offset() == 0 and s.untyped_storage().nbytes() == s.numel() * s.element_size()
               for s in seen)
    assert [s.tolist() for s in seen] == [r.tolist() for r in inp.slots]


@pytest.mark.parametrize("mode, T", [("mtp", 4)])
def test_mtp_steps_match_the_oracle(tmp_path, mode, T):
    out = rows(tmp_path, ["naive-step"], modes=[mode], seqlen=[T], dtype="bfloat16")
    assert all(r.status == "ok" for r in out), [r.reason for r in out]
