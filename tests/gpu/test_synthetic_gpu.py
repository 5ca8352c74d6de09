"""The synthetic backend's injected slowdown on a real GPU: the calibrated `torch.cuda._sleep` delay must
make the point slower by the factor asked for, as the graph timer sees it (docs/GATING.md's studies rely
on it). Run with `pytest -m gpu` on a CUDA host; skipped elsewhere."""

from __future__ import annotations

import statistics

import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.gpu

from qlabench.backends import REGISTRY  # noqa: E402
from qlabench.backends.synthetic import SLOWDOWN_ENV  # noqa: E402
from qlabench.measure.inputs import make_inputs  # noqa: E402
from qlabench.core.point import Point  # noqa: E402
from qlabench.core.spec import TimingSpec  # noqa: E402
from qlabench.measure.timing import make_timer  # noqa: E402

TIMING = TimingSpec(timer="graph", warmup=3, min_samples=20, max_samples=60, min_time_s=0.3, max_time_s=1.0,
                    target_rel_noise=0.002)


@pytest.fixture(autouse=True)
def _cuda():
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")


def _median_ms(monkeypatch, factor: float, seqlen: int) -> float:
    monkeypatch.setenv(SLOWDOWN_ENV, str(factor))
    point = Point(backend="synthetic", mode="fwd", layout="dense", batch=1, seqlens=(seqlen,), h_qk=2, h_v=8,
                  K=128, V=128, dtype="bfloat16", gate="flashqla")
    inp = make_inputs(point, "cuda")
    fn = REGISTRY["synthetic"].prepare("fwd", inp)
    return statistics.median(make_timer("graph", "cuda", TIMING).measure(fn).samples_ms)


# the gate-study-h200 suite's sizes (fwd, as that suite)
@pytest.mark.parametrize("seqlen", [2048, 8192])
@pytest.mark.parametrize("factor", [1.05, 1.10])
def test_injected_slowdown_matches_the_factor(monkeypatch, seqlen, factor):
    base = _median_ms(monkeypatch, 1.0, seqlen)
    slowed = _median_ms(monkeypatch, factor, seqlen)
    # within a fifth of the injected step either way: +5% must read 4-6%, +10% 8-12%
    assert slowed / base == pytest.approx(factor, abs=(factor - 1.0) / 5), (base, slowed)
