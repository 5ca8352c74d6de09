"""`layer:<core>` backends: registration, what they support and why not, outputs, the check, the share."""

from __future__ import annotations

import pytest
import torch

from qlabench.backends import REGISTRY
from qlabench.backends.base import Backend
from qlabench.backends.layer import LAYER_CORES, LayerBackend, LayerCall
from qlabench.core.errors import BackendError
from qlabench.core.point import Point
from qlabench.core.result import Status
from qlabench.core.spec import parse_suite
from qlabench.measure.inputs import GDNInputs, make_inputs
from qlabench.measure.timing import TimerPlan
from qlabench.run.point import MeasureContext, PointRow, check_correctness


def _point(backend="layer:naive-chunk", **kw) -> Point:
    base = dict(backend=backend, mode="fwd", layout="dense", batch=1, seqlens=(24,), h_qk=1, h_v=1, K=128, V=128,
                dtype="float32", gate="fla", model="qwen3.5-0.8b", tp=16)
    base.update(kw)
    return Point(**base)


def test_every_layer_core_in_the_registry_has_its_layer_backend():
    for core in LAYER_CORES:
        b = REGISTRY[f"layer:{core}"]
        assert isinstance(b, LayerBackend) and b.core is REGISTRY[core]
        assert b.devices == REGISTRY[core].devices and b.env == REGISTRY[core].env


@pytest.mark.parametrize("changes,words", [
    ({"model": None, "tp": None}, "needs a model"),
    ({"model": "qwen3.5-122b", "tp": 16, "h_qk": 1, "h_v": 4}, "no hidden size"),
    ({"mode": "fwd_bwd"}, "no fwd_bwd mode"),
])
def test_a_layer_point_it_cannot_run_is_refused_with_a_reason(changes, words):
    ok, why = REGISTRY["layer:naive-chunk"].supports(_point(**changes), "cpu")
    assert not ok and words in why


def test_a_gpu_cores_layer_is_refused_on_cpu_for_the_cores_reason():
    ok, why = REGISTRY["layer:fla"].supports(_point("layer:fla", dtype="bfloat16"), "cpu")
    assert not ok and "cpu" in why


def test_the_layer_needs_the_point_not_only_the_inputs():
    p = _point()
    with pytest.raises(BackendError, match="prepare_point"):
        REGISTRY["layer:naive-chunk"].prepare("fwd", make_inputs(p))


def test_layer_outputs_have_the_models_hidden_size_and_both_cores_agree():
    p = _point(layout="varlen", seqlens=(10, 14))
    inp = make_inputs(p)
    chunk = REGISTRY["layer:naive-chunk"].prepare_point(p, inp)()
    rec = REGISTRY["layer:naive-recurrent"].prepare_point(p.with_(backend="layer:naive-recurrent"), inp)()
    assert chunk["o"].shape == (1, 24, 1024)  # qwen3.5-0.8b: hidden 1024
    assert chunk["ht"].shape == (2, 1, 128, 128) and chunk["conv_state"].shape == (2, 2 * 128 + 128, 3)
    for name in ("o", "ht", "conv_state"):
        assert torch.allclose(chunk[name], rec[name], rtol=1e-4, atol=1e-4), name


def test_the_same_point_gives_the_same_layer_and_another_seed_another():
    p = _point()
    a = REGISTRY["layer:naive-chunk"].prepare_point(p, make_inputs(p))()["o"]
    b = REGISTRY["layer:naive-chunk"].prepare_point(p, make_inputs(p))()["o"]
    c = REGISTRY["layer:naive-chunk"].prepare_point(p.with_(seed=1), make_inputs(p.with_(seed=1)))()["o"]
    assert torch.equal(a, b) and not torch.allclose(a, c)


class _ZeroCore(Backend):
    """A wrong core: o = 0. The layer around it must fail the layer check."""

    name = "zero-core"

    def forward(self, inp: GDNInputs):
        B, T, H, V = inp.v.shape
        return torch.zeros_like(inp.v), torch.zeros(inp.h0.shape[0], H, inp.k.shape[-1], V)


def _ctx(registry) -> MeasureContext:
    suite = parse_suite({"name": "t", "device": "cpu", "sweep": {"backends": ["layer:naive-chunk"], "seqlen": [8],
                                                                "heads": [{"h_qk": 1, "h_v": 1}]}}, "<t>")
    return MeasureContext(suite=suite, device="cpu", env={}, run_id="r", registry=registry, check=True,
                          timer=TimerPlan.resolve("wall", "cpu", suite.timing))


def _check(p, backend, ctx):
    """(status, reason, row fields) of the reduced check of `p`, as run_point runs it."""
    row = PointRow(p, ctx)
    failure, _ = check_correctness(p, backend, ctx, row)
    return (Status.OK if failure is None else Status.INCORRECT), failure, row.fields


def test_the_layer_is_checked_against_the_same_layer_around_the_oracle_core():
    ctx = _ctx(REGISTRY)
    status, reason, fields = _check(_point(), REGISTRY["layer:naive-chunk"], ctx)
    assert status is Status.OK, reason
    assert fields["oracle"].startswith("layer:naive-recurrent float32")
    assert fields["err_o"] is not None and fields["err_o"] < 1e-4


def test_a_wrong_core_makes_the_layer_incorrect():
    bad = LayerBackend(_ZeroCore())
    ctx = _ctx({**REGISTRY, bad.name: bad})
    status, reason, _ = _check(_point(bad.name), bad, ctx)
    assert status is Status.INCORRECT and "o rel err" in reason


def test_on_cpu_the_share_is_the_core_timed_alone_over_the_layer():
    p = _point()
    backend = REGISTRY["layer:naive-chunk"]
    fn = backend.prepare_point(p, make_inputs(p))
    assert isinstance(fn, LayerCall)
    timed = []

    def time_ms(g):
        timed.append(g)
        return 2.5

    d = backend.point_details(fn, (), (), 10.0, time_ms)["layer"]
    assert timed == [fn.core_call]
    assert d["core_share"] == pytest.approx(0.25) and d["core_share_from"] == "timer"
    assert d["core"] == "naive-chunk" and d["hidden"] == 1024
