"""The float64 full-size reference on CUDA: equal to the float64 token recurrence on small shapes (outputs,
final state and all six gradients), and every available library backend within its tolerance against it
at 256 tokens, the size today's oracle check uses. CPU counterpart: tests/backends/test_reference_fp64.py.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

from qlabench.backends import REGISTRY  # noqa: E402
from qlabench.backends.reference import chunk_gated_delta_rule_fp64  # noqa: E402
from qlabench.backends.reference.fp64_full import fp64_errors, reference_outputs  # noqa: E402
from qlabench.core.point import Point  # noqa: E402
from qlabench.measure.inputs import make_inputs  # noqa: E402

F64 = torch.float64
TOL = 1e-12
ALL_GRADS = {"o", "ht", "dq", "dk", "dv", "dg", "dbeta"}


def point(layout="dense", seqlens=(100, 100), h_qk=2, h_v=2, gate="flashqla", seed=0, initial_state=True, K=16,
          V=32, **gate_params):
    return Point(backend="naive-chunk", mode="fwd_bwd", layout=layout,
                 batch=len(seqlens) if layout == "dense" else 1, seqlens=seqlens, h_qk=h_qk, h_v=h_v, K=K, V=V,
                 dtype="float64", gate=gate, seed=seed, initial_state=initial_state, **gate_params)


SMALL = {
    "dense": point(),
    "dense-no-h0": point(initial_state=False, seed=1),
    "varlen-ragged": point(layout="varlen", seqlens=(1, 77, 64, 5), h_qk=1, h_v=4, seed=2),
    "varlen-no-h0": point(layout="varlen", seqlens=(128, 30), seed=3, initial_state=False),
    "gva4": point(h_qk=2, h_v=8, gate="fla", seed=4, seqlens=(150,)),
    "strong-gate-g-5": point(seqlens=(150,), gate_zero_frac=0.0, gate_scale=0.16, seed=5),
    "strong-profile": point(seqlens=(150,), gate="strong", seed=6),
    "zero-gate-heads": point(seqlens=(150,), h_v=4, gate_zero_frac=0.5, seed=7),
    "no-decay": point(seqlens=(150,), gate_zero_frac=1.0, seed=8),
}


def rel(got, ref) -> float:
    assert got.shape == ref.shape
    return ((got.double() - ref.double()).norm() / ref.double().norm()).item()


@pytest.mark.parametrize("name", list(SMALL))
def test_the_reference_equals_the_float64_recurrence_on_cuda(name):
    inp = make_inputs(SMALL[name], "cuda")
    assert inp.q.is_cuda and inp.q.dtype == F64
    want = REGISTRY["naive-recurrent"].prepare("fwd_bwd", inp)()
    o, ht = chunk_gated_delta_rule_fp64(inp.q, inp.k, inp.v, inp.g, inp.beta, scale=inp.scale,
                                        initial_state=inp.h0, cu_seqlens=inp.cu_seqlens)
    assert o.is_cuda and rel(o, want["o"]) < TOL and rel(ht, want["ht"]) < TOL
    got = reference_outputs(inp, grads=True)
    expected = ALL_GRADS | ({"dh0"} if inp.h0 is not None else set())
    assert set(got) == set(want) == expected
    errors = {n: rel(got[n], want[n]) for n in expected}
    assert max(errors.values()) < TOL, errors


LIBRARIES = ("flash_qla", "fla", "flashinfer")
AT_256 = {
    "dense": dict(layout="dense", seqlens=(256,)),
    "varlen": dict(layout="varlen", seqlens=(100, 156)),
}


@pytest.mark.parametrize("layout", list(AT_256))
@pytest.mark.parametrize("mode", ["fwd", "bwd_train"])
@pytest.mark.parametrize("name", LIBRARIES)
def test_each_library_backend_is_within_tolerance_of_the_reference_at_256_tokens(name, mode, layout):
    backend = REGISTRY[name]
    ok, why = backend.available()
    if not ok:
        pytest.skip(f"{name} unavailable: {why}")
    spec = AT_256[layout]
    p = Point(backend=name, mode=mode, batch=1, h_qk=2, h_v=8, K=128, V=128, dtype="bfloat16", gate="flashqla",
              model="qwen3.5-397b", tp=8, **spec)
    ok, why = backend.supports(p, "cuda")
    if not ok:
        pytest.skip(f"{name} does not support {mode} {layout}: {why}")
    inp = make_inputs(p, "cuda")
    got = backend.prepare_point(p, inp)()
    errors, failure = fp64_errors(got, inp, grads=mode != "fwd", dtype=p.dtype)
    assert failure is None, (failure, errors)
    assert {"o", "ht"} <= set(errors) and all(0 < e for e in errors.values()), errors
    if mode != "fwd":
        assert {"dq", "dk", "dv", "dg", "dbeta"} <= set(errors), errors
