"""GPU backends on a real CUDA device: agreement with the oracle, provenance, compile-cache reuse.

Run with `pytest -m gpu` on a CUDA host with the `gpu` extra installed; skipped elsewhere.
Shapes use the Qwen3.5-397B TP8 heads (2/8, d=128) so the kernels compiled here are the smoke suite's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.gpu

from qlabench.measure.timing import TimerPlan
from qlabench.backends import REGISTRY  # noqa: E402
from qlabench.measure.correctness import tolerance  # noqa: E402
from qlabench.run.point import MeasureContext, run_point  # noqa: E402
from qlabench.core.point import Point  # noqa: E402
from qlabench.core.spec import CheckSpec, Suite, TimingSpec  # noqa: E402

FAST = TimingSpec(timer="graph", warmup=1, min_samples=3, max_samples=10, max_time_s=0.5, target_rel_noise=0.05)


def _ctx(points, full_size=True, timer="graph"):
    from qlabench.measure import env

    suite = Suite(name="gpu-test", path="<test>", points=tuple(points), timing=FAST,
                  check=CheckSpec(oracle_max_tokens=512, full_size=full_size))
    return MeasureContext(suite=suite, device="cuda", env=env.capture("cuda"), run_id="test", timer=TimerPlan.resolve(timer, "cuda", suite.timing),
                          registry=REGISTRY, check=True)


def _point(backend, mode, layout="dense", seqlens=(2048,), **kw):
    base = dict(backend=backend, mode=mode, layout=layout, batch=1 if layout == "varlen" else len(seqlens),
                seqlens=seqlens, h_qk=2, h_v=8, K=128, V=128, dtype="bfloat16", gate="flashqla", model="qwen3.5-397b",
                tp=8)
    base.update(kw)
    return Point(**base)


def _need(name):
    ok, why = REGISTRY[name].available()
    if not ok:
        pytest.skip(f"{name} unavailable: {why}")


CASES = [
    ("flash_qla", ("fwd", "fwd_bwd", "bwd", "bwd_train")),
    ("flash_qla-nocp", ("fwd", "fwd_bwd", "bwd", "bwd_train")),
    ("flash_qla-forcecp", ("fwd", "fwd_bwd", "bwd", "bwd_train")),
    ("fla", ("fwd", "fwd_bwd", "bwd", "bwd_train")),
    ("fla-recurrent", ("fwd",)),
    ("naive-chunk", ("fwd", "fwd_bwd")),
    # FlashInfer's first call JIT-builds gdn_prefill_sm90 (~12 min on 16 cores) unless it is prebuilt.
    ("flashinfer", ("fwd",)),
]


@pytest.mark.parametrize("layout,seqlens", [("dense", (4096,)), ("varlen", (1000, 3096))])
@pytest.mark.parametrize("backend,modes", CASES)
def test_backend_agrees_with_oracle(backend, modes, layout, seqlens):
    _need(backend)
    points = [_point(backend, m, layout, seqlens) for m in modes]
    ctx = _ctx(points)
    for p in points:
        row = run_point(p, ctx)
        assert row.status == "ok", (p.label(), row.reason)
        assert row.err_o is not None and row.err_o <= tolerance("bfloat16", "o")
        assert row.err_ht is not None and row.err_ht <= tolerance("bfloat16", "ht")
        if p.mode != "fwd":
            for g in ("dq", "dk", "dv", "dg", "dbeta", "dh0"):
                err = getattr(row, f"err_{g}")
                assert err is not None and err <= tolerance("bfloat16", g), (g, err)
        assert row.median_ms > 0 and row.kernels


def test_provenance_identity_of_real_backends():
    _need("flash_qla")
    _need("fla")
    ctx = _ctx([], full_size=False)
    qla = run_point(_point("flash_qla", "fwd"), ctx)
    fla = run_point(_point("fla", "fwd"), ctx)
    assert qla.status == "ok" and any(k.startswith("tilelang_") for k in qla.kernels)
    assert fla.status == "ok" and not any(k.startswith("tilelang_") for k in fla.kernels), fla.kernels


def test_flash_qla_published_bwd_redoes_the_cp_prepass_that_bwd_train_is_handed():
    # Forced intra-card CP: FlashQLA's published backward (no CP cache) recomputes the forward's CP
    # pre-pass inside the timed call; the training backward is handed the forward's cache instead.
    _need("flash_qla-forcecp")
    pts = [_point("flash_qla-forcecp", m, "varlen", (8192,)) for m in ("bwd", "bwd_train")]
    ctx = _ctx(pts, full_size=False)
    bwd, train = (run_point(p, ctx) for p in pts)
    assert bwd.status == train.status == "ok", (bwd.reason, train.reason)
    assert len(bwd.kernels) > len(train.kernels), (bwd.kernels, train.kernels)


def test_flashinfer_kernel_provenance():
    # 0.6.x runs its CUTLASS C++ kernel; 0.7.x a CuTe DSL kernel (fused, or its CP pair) whose class name
    # sits inside the DSL's decorated name. Either way the row names the kernel that ran.
    _need("flashinfer")
    from qlabench.backends import flashinfer as fi
    from qlabench.backends import flashinfer_build as fib

    row = run_point(_point("flashinfer", "fwd", "varlen", (2048,)), _ctx([], full_size=False))
    assert row.status == "ok", row.reason
    expected = (fi.KERNEL,) if fib.has_cutlass_module() else fi.KERNELS_07
    assert any(e in k for k in row.kernels for e in expected), row.kernels


def test_flashinfer_nocp_never_splits():
    # 32k tokens of one sequence at 2/8 heads is where 0.7's heuristic splits the call; use_cp=False must not.
    _need("flashinfer-nocp")
    from qlabench.backends import flashinfer as fi

    row = run_point(_point("flashinfer-nocp", "fwd", "varlen", (32768,)), _ctx([], full_size=False))
    assert row.status == "ok", row.reason
    assert not any(fi.CP_KERNEL_07 in k for k in row.kernels), row.kernels


def test_provenance_check_fires_when_fla_dispatch_is_left_on():
    _need("fla-dispatch-on")
    _need("flash_qla")
    ctx = _ctx([], full_size=False)
    row = run_point(_point("fla-dispatch-on", "fwd"), ctx)
    assert row.status == "error"
    assert row.reason.startswith("backend provenance mismatch")
    assert row.median_ms is None and not row.samples_ms
    assert any(k.startswith("tilelang_") for k in row.kernels)


@pytest.mark.parametrize("point", [
    _point("flash_qla", "fwd", K=64, V=64),
    _point("flash_qla", "fwd", dtype="float32"),
])
def test_unsupported_points_are_skipped_with_reason(point):
    _need("flash_qla")
    row = run_point(point, _ctx([point]))
    assert row.status == "skipped"
    assert "K = V = 128" in row.reason or "float32" in row.reason


def test_compile_cache_is_reused_by_a_new_process(tmp_path):
    _need("flash_qla")
    suite = tmp_path / "cache.toml"
    # h 3/6 is used by no other test or suite, so the first run must compile.
    suite.write_text(textwrap.dedent("""
        name = "cache-test"
        device = "cuda"
        [sweep]
        backends = ["flash_qla"]
        modes = ["fwd"]
        seqlen = [2048]
        heads = [{ h_qk = 3, h_v = 6 }]
        dtype = "bfloat16"
        [timing]
        timer = "events"
        min_samples = 3
        max_time_s = 0.2
    """))
    env = dict(os.environ, QLABENCH_CACHE_DIR=str(tmp_path / "cache"))
    for var in ("TILELANG_CACHE_DIR", "TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR"):
        env.pop(var, None)
    compile_s = []
    for i in range(2):
        out = tmp_path / f"out{i}"
        subprocess.run([sys.executable, "-m", "qlabench", "run", "sweep", "--suite", str(suite), "--out", str(out)],
                       check=True, env=env, timeout=600)
        import pandas as pd

        df = pd.read_parquet(next(out.rglob("*.parquet")))
        assert df["status"].tolist() == ["ok"], df["reason"].tolist()
        compile_s.append(float(df["compile_s"].iloc[0]))
    print(json.dumps({"compile_s": compile_s}))
    assert compile_s[1] < 0.25 * compile_s[0], compile_s


@pytest.mark.parametrize("backend", ["flash_qla", "flashinfer"])
def test_a_split_timed_call_is_checked_at_full_size(backend):
    # Both split one 32k sequence at h 2/8 (their intra-card CP); the check's 512 tokens may run unsplit.
    # Whatever path the check saw, the timed CP path must have been checked: by it, or at full size.
    _need(backend)
    from qlabench.backends import flashinfer_build as fib

    if backend == "flashinfer" and fib.has_cutlass_module():
        pytest.skip("FlashInfer 0.6 never splits a call")
    row = run_point(_point(backend, "fwd", "varlen", (32768,)), _ctx([], full_size=False))
    assert row.status == "ok", row.reason
    path = json.loads(row.extra_json)["check_path"]
    assert path["timed"] == "cp", path
    if path["checked"] != "cp":
        assert path["full_size_check"] == "naive-chunk float32 @32768 tokens"
        assert row.oracle.endswith("; naive-chunk float32 @32768 tokens") and row.err_o is not None
