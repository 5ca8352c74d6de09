"""Inter-card context parallelism on real GPUs (NCCL, torchrun): run with `pytest -m gpu` on a host with at
least 2 GPUs; skipped without CUDA, with fewer than 2 GPUs, or without the library a test needs.

Small shapes (Qwen3.5-397B TP8 heads, 2/8, d = 128) so the kernels are the smoke suite's.
"""

from __future__ import annotations

import dataclasses

import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.gpu

from qlabench.core.spec import CheckSpec, RunSpec, Suite, TimingSpec  # noqa: E402
from qlabench.core.point import Point  # noqa: E402

FAST = TimingSpec(timer="events", warmup=1, min_samples=3, max_samples=10, max_time_s=0.5, target_rel_noise=0.05)


def _need_gpus(n=2):
    if not torch.cuda.is_available() or torch.cuda.device_count() < n:
        pytest.skip(f"needs {n} GPUs ({torch.cuda.device_count() if torch.cuda.is_available() else 0} visible)")


def _suite(points):
    return Suite(name="gpu-cp-test", path="<test>", points=tuple(points), device="cuda", timing=FAST,
                 check=CheckSpec(oracle_max_tokens=512), run=RunSpec(point_timeout_s=300, compile_timeout_s=900))


def _point(backend, mode, cp_mode, T=16384, **kw):
    base = dict(backend=backend, mode=mode, layout="dense", batch=1, seqlens=(T,), h_qk=2, h_v=8, K=128, V=128,
                dtype="bfloat16", gate="flashqla", cp_world_size=2, cp_mode=cp_mode)
    base.update(kw)
    return Point(**base)


def _run(points, tmp_path):
    from qlabench.run.sweep import run_sweep

    return run_sweep(_suite(points), tmp_path)


def test_naive_cp_over_nccl(tmp_path):
    _need_gpus()
    pts = [_point("naive-chunk", m, "inter", T=2048, h_qk=1, h_v=2, K=32, V=32, dtype="float32")
           for m in ("fwd", "fwd_bwd")]
    res = _run(pts, tmp_path)
    assert [r.status for r in res.rows] == ["ok", "ok"], [r.reason for r in res.rows]
    for r in res.rows:
        assert r.timer == "events" and len(r.cp_rank_ms) == 2 and r.err_o < 1e-4


def test_rank_error_in_exchange_over_nccl_is_an_error_row(tmp_path, monkeypatch):
    """Rank 1 raises in its forward while rank 0 waits in the NCCL exchange: an error row within seconds
    (the rank exits, torchrun ends the other), not a wait for the NCCL timeout."""
    import time

    _need_gpus()
    monkeypatch.setenv("QLABENCH_CP_FAULT", "forward-error")
    t0 = time.monotonic()
    res = _run([_point("naive-chunk", "fwd", "inter", T=2048, h_qk=1, h_v=2, K=32, V=32, dtype="float32")], tmp_path)
    assert time.monotonic() - t0 < 240
    r = res.rows[0]
    assert r.status == "error" and "[rank1]" in r.reason and "forward-error" in r.reason, r.reason


@pytest.mark.parametrize("cp_mode", ["inter", "dual"])
def test_flash_qla_cp_matches_one_gpu(cp_mode, tmp_path):
    _need_gpus()
    from qlabench.backends import get_backend

    ok, why = get_backend("flash_qla").cp_available()
    if not ok:
        pytest.skip(f"flash_qla unavailable: {why}")
    pts = [_point("flash_qla", m, cp_mode) for m in ("fwd", "fwd_bwd")]
    res = _run(pts, tmp_path)
    assert [r.status for r in res.rows] == ["ok", "ok"], [r.reason for r in res.rows]
    for r in res.rows:
        assert r.err_o < 0.02 and r.err_ht < 0.02 and r.oracle.startswith("flash_qla-nocp")
        assert len(r.cp_rank_ms) == 2 and len(r.cp_rank_fwd_ms) == 2
        assert any(k.startswith("tilelang_") for k in r.kernels)
        assert r.median_ms >= max(min(r.cp_rank_ms), 0) * 0.5
    assert len(res.rows[1].cp_rank_bwd_ms) == 2 and res.rows[1].err_dq < 0.02


def test_fla_cp_matches_one_gpu(tmp_path):
    _need_gpus()
    from qlabench.backends import get_backend

    ok, why = get_backend("fla").cp_available()
    if not ok:
        pytest.skip(f"fla unavailable: {why}")
    res = _run([_point("fla", "fwd", "fla-cp", initial_state=False)], tmp_path)
    r = res.rows[0]
    assert r.status == "ok", r.reason
    assert r.err_o < 0.02 and not any(k.startswith("tilelang_") for k in r.kernels)


def test_one_visible_gpu_skips(tmp_path, monkeypatch):
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    from qlabench.run.distributed import launch

    monkeypatch.setattr(launch.CPLauncher, "gpu_ids", property(lambda self: ["0"]))
    res = _run([_point("flash_qla", "fwd", "inter")], tmp_path)
    assert res.rows[0].status == "skipped" and "needs 2 GPUs" in res.rows[0].reason
    assert dataclasses.asdict(res.rows[0])["cp_world_size"] == 2
