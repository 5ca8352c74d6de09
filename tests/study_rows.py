"""Synthetic result rows for the FlashQLA study: a few published points measured on two library stacks.

Times are the published ones scaled by a chosen factor, so tests can say exactly which rows fall within
10%. Also the CPU fixture the study notebook falls back to: `python tests/study_rows.py` rewrites
tests/data/study/study-fixture.parquet.

Scenarios (flash-qla 0.1.3 / fla 0.6.0 stack unless said):
- h2/8 32768: flash_qla 1.23x published with intra-CP on (0.1.2 re-run within 10%: the version explains),
  fla and flashinfer within; nocp 3x slower, forcecp as auto (regret 1.0).
- h2/8 8192: flash_qla within, CP on; flashinfer skipped with a reason.
- h2/8 16384+16384: flash_qla 1.23x, CP on, no re-run on 0.1.2.
- h2/8 8x1024: fla measured on the dense layout, 0.76x published; flash_qla within with CP off.
- h8/32 32768: flash_qla 1.41x with CP on, nocp 1.31x: auto lost (regret 1.08); 0.1.2 within; fla errored.
- h16/64 32768: flash_qla within, CP off (forcecp slower, regret 1.0); fla 1.82x, 0.5.1 re-run within;
  flashinfer incorrect.
- bwd h2/4 8192 on 1 and 2 sequences; bwd h2/4 32768/1 not measured.
- fwd_bwd h2/8 1x8192 (no published counterpart).
- gate sweep at h2/8 32768 (gate_zero_frac 0 and 0.5; gate_scale 4 and 64 around the default 16, core's
  meaning: g = logsigmoid(randn) / gate_scale), older than everything else.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from qlabench.analyze.study.published import load_published  # noqa: E402
from qlabench.core.result import ResultRow  # noqa: E402

FIXTURE = Path(__file__).resolve().parent / "data" / "study" / "study-fixture.parquet"

STACK_013 = dict(flash_qla_version="0.1.3", tilelang_version="0.1.15", fla_version="0.6.0", triton_version="3.6.0",
                 torch_version="2.11.0+cu130")
STACK_012 = dict(flash_qla_version="0.1.2", tilelang_version="0.1.9", fla_version="0.5.1", triton_version="3.6.0",
                 torch_version="2.11.0+cu130")

FQ_NOCP = (("tilelang_chunk_local_cumsum_kernel_kernel", 4.0), ("tilelang_kkt_solve_kernel_kernel", 20.0),
           ("tilelang_fused_chunk_gdr_fwd_kernel_kernel", 250.0))
FQ_CP = (("tilelang_chunk_local_cumsum_kernel_kernel", 4.0), ("tilelang_kkt_solve_kernel_kernel", 20.0),
         ("tilelang_get_warmup_chunks_kernel_kernel", 3.0), ("tilelang_prepare_h_kernel_kernel", 40.0),
         ("tilelang_correct_h0_kernel_kernel", 10.0), ("tilelang_fused_chunk_gdr_fwd_kernel_kernel", 200.0))
FQ_BWD_CP = (("tilelang_get_warmup_chunks_bidi_kernel_kernel", 3.0), ("tilelang_prepare_dh_kernel_kernel", 30.0),
             ("tilelang_fused_chunk_gdr_bwd_kernel_kernel", 300.0))
FLA = (("chunk_local_cumsum_scalar_kernel", 4.0), ("chunk_gated_delta_rule_fwd_kkt_solve_kernel", 40.0),
       ("recompute_w_u_fwd_kernel", 60.0), ("chunk_gated_delta_rule_fwd_kernel_h_blockdim64", 500.0),
       ("chunk_fwd_kernel_o", 90.0))
FI = (("void cutlass::device_kernel<flat::kernel::FlatKernelTmaWarpSpecializedDeltaRule<int>>(int)", 1500.0),)

_PUB = None


def published_ms(mode: str, h_qk: int, h_v: int, column: str, seqlens=None, total=None, n=None) -> float:
    global _PUB
    if _PUB is None:
        _PUB = load_published()
    p = _PUB[(_PUB["mode"] == mode) & (_PUB["h_qk"] == h_qk) & (_PUB["h_v"] == h_v)]
    if seqlens is not None:
        p = p[p["seqlens"] == "+".join(map(str, seqlens))]
    else:
        p = p[(p["total_tokens"] == total) & (p["num_seqs"] == n)]
    assert len(p) == 1, (mode, h_qk, h_v, seqlens, total, n)
    return float(p.iloc[0][column])


def row(backend, mode, seqlens, h_qk, h_v, ms=None, *, stack=STACK_013, kernels=(), status="ok", reason=None,
        layout="varlen", timestamp="2026-12-01T10:00:00+00:00", run_id="study-013", sm_coverage=0.9,
        gate_zero_frac=None, gate_scale=None, device_index=0, **extra):
    seqlens = tuple(seqlens)
    batch = 1 if layout == "varlen" else len(seqlens)
    if status == "ok":  # an ok row records the check it passed (the evidence layer believes no unchecked row)
        extra = {"oracle": "naive-recurrent float32 @256 tokens", "check_tokens": 256, "err_o": 0.002, **extra}
    r = ResultRow(
        run_id=run_id, suite="h200-study", timestamp=timestamp, host="h200", device="NVIDIA H200", device_index=device_index,
        **stack, backend=backend, mode=mode, layout=layout, batch=batch, seqlens=seqlens, num_seqs=len(seqlens),
        total_tokens=sum(seqlens), h_qk=h_qk, h_v=h_v, K=128, V=128, dtype="bfloat16", gate="flashqla", seed=0,
        initial_state=True, status=status, reason=reason, timer="graph",
        samples_ms=(ms,) * 5 if ms is not None else (), n_samples=5 if ms is not None else None, median_ms=ms,
        kernels=tuple(k for k, _ in kernels), kernel_dur_us=tuple(d for _, d in kernels),
        sm_coverage=sm_coverage if status == "ok" else None, **extra)
    return r, {"gate_zero_frac": gate_zero_frac, "gate_scale": gate_scale}


def scenario():
    """(ResultRow, gate axes) pairs of every scenario in the module docstring."""
    P = published_ms
    out = []
    # h2/8 32768
    s = (32768,)
    fq = P("fwd", 2, 8, "flash_qla_ms", s)
    out += [row("flash_qla", "fwd", s, 2, 8, fq * 1.23, kernels=FQ_CP, sm_coverage=0.83),
            row("flash_qla-nocp", "fwd", s, 2, 8, fq * 3.0, kernels=FQ_NOCP, sm_coverage=0.06),
            row("flash_qla-forcecp", "fwd", s, 2, 8, fq * 1.23, kernels=FQ_CP, sm_coverage=0.83),
            row("fla", "fwd", s, 2, 8, P("fwd", 2, 8, "fla_ms", s) * 1.04, kernels=FLA, sm_coverage=0.6),
            row("flashinfer", "fwd", s, 2, 8, P("fwd", 2, 8, "flashinfer_ms", s) * 0.97, kernels=FI,
                sm_coverage=0.06),
            row("flash_qla", "fwd", s, 2, 8, fq * 1.01, kernels=FQ_CP, stack=STACK_012, run_id="study-012",
                timestamp="2026-11-30T10:00:00+00:00")]
    # h2/8 8192
    s = (8192,)
    fq = P("fwd", 2, 8, "flash_qla_ms", s)
    out += [row("flash_qla", "fwd", s, 2, 8, fq * 1.05, kernels=FQ_CP, sm_coverage=0.65),
            row("flash_qla-nocp", "fwd", s, 2, 8, fq * 1.6, kernels=FQ_NOCP),
            row("flash_qla-forcecp", "fwd", s, 2, 8, fq * 1.05, kernels=FQ_CP),
            row("fla", "fwd", s, 2, 8, P("fwd", 2, 8, "fla_ms", s), kernels=FLA),
            row("flashinfer", "fwd", s, 2, 8, status="skipped",
                reason="flashinfer unavailable: gdn_prefill_sm90 not built (JIT takes ~12 min)")]
    # h2/8 16384+16384
    s = (16384, 16384)
    out += [row("flash_qla", "fwd", s, 2, 8, P("fwd", 2, 8, "flash_qla_ms", s) * 1.23, kernels=FQ_CP),
            row("fla", "fwd", s, 2, 8, P("fwd", 2, 8, "fla_ms", s) * 1.03, kernels=FLA),
            row("flashinfer", "fwd", s, 2, 8, P("fwd", 2, 8, "flashinfer_ms", s), kernels=FI)]
    # h2/8 8x1024 (fla on the dense layout)
    s = (1024,) * 8
    out += [row("flash_qla", "fwd", s, 2, 8, P("fwd", 2, 8, "flash_qla_ms", s), kernels=FQ_NOCP, sm_coverage=0.4),
            row("fla", "fwd", s, 2, 8, P("fwd", 2, 8, "fla_ms", s) * 0.76, kernels=FLA, layout="dense"),
            row("flashinfer", "fwd", s, 2, 8, P("fwd", 2, 8, "flashinfer_ms", s) * 1.02, kernels=FI)]
    # h8/32 32768: auto CP lost
    s = (32768,)
    fq = P("fwd", 8, 32, "flash_qla_ms", s)
    out += [row("flash_qla", "fwd", s, 8, 32, fq * 1.41, kernels=FQ_CP),
            row("flash_qla-nocp", "fwd", s, 8, 32, fq * 1.31, kernels=FQ_NOCP),
            row("flash_qla-forcecp", "fwd", s, 8, 32, fq * 1.41, kernels=FQ_CP),
            row("flash_qla", "fwd", s, 8, 32, fq * 1.01, kernels=FQ_CP, stack=STACK_012, run_id="study-012",
                timestamp="2026-11-30T10:00:00+00:00"),
            row("fla", "fwd", s, 8, 32, status="error", reason="timed out after 600 s"),
            row("flashinfer", "fwd", s, 8, 32, P("fwd", 8, 32, "flashinfer_ms", s) * 0.99, kernels=FI)]
    # h16/64 32768
    fq = P("fwd", 16, 64, "flash_qla_ms", s)
    fla = P("fwd", 16, 64, "fla_ms", s)
    out += [row("flash_qla", "fwd", s, 16, 64, fq * 1.0, kernels=FQ_NOCP, sm_coverage=0.98),
            row("flash_qla-nocp", "fwd", s, 16, 64, fq * 1.0, kernels=FQ_NOCP),
            row("flash_qla-forcecp", "fwd", s, 16, 64, fq * 1.3, kernels=FQ_CP),
            row("fla", "fwd", s, 16, 64, fla * 1.82, kernels=FLA, sm_coverage=0.99),
            row("fla", "fwd", s, 16, 64, fla * 1.01, kernels=FLA, stack=STACK_012, run_id="study-012",
                timestamp="2026-11-30T10:00:00+00:00"),
            row("flashinfer", "fwd", s, 16, 64, status="incorrect", reason="o rel err 0.85 > 0.01")]
    # bwd h2/4 8192 on 1 and 2 sequences (published splits are random: matched on totals)
    for lens, f_fq, f_fla in (((8192,), 1.05, 1.0), ((3000, 5192), 1.3, 0.95)):
        n = len(lens)
        out += [row("flash_qla", "bwd", lens, 2, 4, P("bwd", 2, 4, "flash_qla_ms", total=8192, n=n) * f_fq,
                    kernels=FQ_BWD_CP),
                row("fla", "bwd", lens, 2, 4, P("bwd", 2, 4, "fla_ms", total=8192, n=n) * f_fla, kernels=FLA)]
    # fwd_bwd: no published counterpart
    out += [row("flash_qla", "fwd_bwd", (8192,), 2, 8, 0.42, kernels=FQ_CP + FQ_BWD_CP, layout="dense"),
            row("fla", "fwd_bwd", (8192,), 2, 8, 0.9, kernels=FLA, layout="dense")]
    # gate sweep at h2/8 32768, older than the rest (see the module docstring of the test)
    fq = P("fwd", 2, 8, "flash_qla_ms", (32768,))
    fla = P("fwd", 2, 8, "fla_ms", (32768,))
    old = dict(timestamp="2026-11-29T10:00:00+00:00", run_id="study-gates")
    for frac, f_auto in ((0.0, 0.75), (0.5, 1.6)):
        out += [row("flash_qla", "fwd", (32768,), 2, 8, fq * f_auto, kernels=FQ_CP, gate_zero_frac=frac, **old),
                row("flash_qla-nocp", "fwd", (32768,), 2, 8, fq * 3.0, kernels=FQ_NOCP, gate_zero_frac=frac, **old),
                row("flash_qla-forcecp", "fwd", (32768,), 2, 8, fq * f_auto, kernels=FQ_CP, gate_zero_frac=frac,
                    **old),
                row("fla", "fwd", (32768,), 2, 8, fla, kernels=FLA, gate_zero_frac=frac, **old)]
    for scale, f_auto in ((4.0, 1.1), (64.0, 1.0)):
        out += [row("flash_qla", "fwd", (32768,), 2, 8, fq * f_auto, kernels=FQ_CP, gate_scale=scale, **old),
                row("flash_qla-nocp", "fwd", (32768,), 2, 8, fq * 3.0, kernels=FQ_NOCP, gate_scale=scale, **old),
                row("fla", "fwd", (32768,), 2, 8, fla, kernels=FLA, gate_scale=scale, **old)]
    return out


def study_frame() -> pd.DataFrame:
    """The scenario as a results DataFrame, with the gate axes as columns."""
    pairs = scenario()
    df = pd.DataFrame([r.as_dict() for r, _ in pairs])
    for axis in ("gate_zero_frac", "gate_scale"):
        df[axis] = pd.Series([g[axis] for _, g in pairs], dtype="float64")
    return df


def write_fixture(path: Path = FIXTURE) -> Path:
    """The scenario as a results file, the gate axes in their columns (without them the gate sweep's rows
    would be one point measured four times in one file, which the evidence layer refuses)."""
    import pyarrow as pa

    from qlabench.store.files import rows_to_table, write_table

    pairs = scenario()
    table = rows_to_table([r for r, _ in pairs])
    for axis in ("gate_zero_frac", "gate_scale"):
        values = pa.array([g[axis] for _, g in pairs], type=pa.float64())
        if axis in table.column_names:
            i = table.column_names.index(axis)
            table = table.set_column(i, table.schema.field(i), values.cast(table.schema.field(i).type))
        else:
            table = table.append_column(axis, values)
    return write_table(path, table)


# FlashInfer's auto, nocp and forcecp rows for the auto-CP regret table (core/libraries.py AUTO_CHOICES): two runs,
# one of auto and use_cp=False only, one of all three variants
FI_STACK = {"flashinfer_version": "0.7.2.post1", "torch_version": "2.11.0+cu130"}
FI_SPLIT = (("kernel_cutlass_kernel_flashinfergdn_kernelsCPDeltaRulePrefillSm90_object_at_0", 90.0),)
FI_WHOLE = (("kernel_cutlass_kernel_flashinfergdn_kernels_FullyFusedDeltaRuleSm90_object_at_0", 50.0),)
CP_RUN = dict(run_id="fi-cp", timestamp="2026-12-01T12:30:00+00:00")  # auto and use_cp=False only
CURRENT = dict(run_id="fi-current", timestamp="2026-12-01T16:30:00+00:00")  # all three variants


def fi(backend, seqlens, ms, *, run, gpu=0, heads=(2, 8)):
    kernels = FI_WHOLE if backend == "flashinfer-nocp" else FI_SPLIT
    return row(backend, "fwd", seqlens, *heads, ms, kernels=kernels, device_index=gpu, stack=FI_STACK, **run)


if __name__ == "__main__":
    print(write_fixture())

