"""Which path a traced call took, read from its kernels, for the backends whose path depends on size."""

from __future__ import annotations

from qlabench.backends import REGISTRY
from qlabench.core import kernel_event

DSL = kernel_event.DSL_PREFIX


def test_flashinfer_07_split_or_not_by_its_cp_kernels():
    fi = REGISTRY["flashinfer"]
    assert fi.size_dependent_path
    fused = f"{DSL}kernel_flashinfergdn_kernelsdelta_rule_dslFullyFusedDeltaRuleSm90_object_at_0"
    cp = [f"{DSL}kernel_flashinfergdn_kernelsdelta_rule_dsldelta_rule_cp_sm90CPDeltaRuleTPrecomputeSm90_0",
          f"{DSL}kernel_flashinfergdn_kernelsdelta_rule_dslCPDeltaRulePrefillSm90_object_at_0"]
    assert fi.call_path([fused]) == "unsplit"
    assert fi.call_path(cp) == "cp"
    # 0.6.x: one CUTLASS C++ kernel, one path
    assert fi.call_path(["void cutlass::device_kernel<flat::kernel::FlatKernelTmaWarpSpecializedDeltaRule<>>"]) is None
    assert not REGISTRY["flashinfer-nocp"].size_dependent_path


def test_flash_qla_split_by_its_warmup_kernel():
    qla = REGISTRY["flash_qla"]
    assert qla.size_dependent_path and not REGISTRY["flash_qla-nocp"].size_dependent_path
    unsplit = ["tilelang_chunk_local_cumsum_kernel_kernel", "tilelang_fused_chunk_gdr_fwd_kernel_kernel"]
    assert qla.call_path(unsplit) == "unsplit"
    assert qla.call_path(unsplit + ["tilelang_get_warmup_chunks_kernel_kernel"]) == "cp"
    assert qla.call_path(["tilelang_get_warmup_chunks_bidi_kernel_kernel"]) == "cp"
    assert qla.call_path([]) is None


def test_fla_intracp_split_by_its_prescan():
    fla = REGISTRY["fla-intracp"]
    assert fla.size_dependent_path and not REGISTRY["fla"].size_dependent_path
    assert fla.call_path(["chunk_gated_delta_rule_fwd_kernel_h_blockdim64"]) == "unsplit"
    assert fla.call_path(["chunk_cp_fwd_kernel_h", "chunk_gated_delta_rule_fwd_kernel_h_blockdim64"]) == "cp"


def test_the_paths_read_from_committed_h200_rows_agree_with_their_recorded_evidence():
    # Rows from the H200 recorded whether the call split in their own way (FlashInfer's flashinfer_cp,
    # FLA's intracard_cp.engaged); call_path reads the same kernels and must say the same.
    import json
    from pathlib import Path

    import pandas as pd

    root = Path(__file__).resolve().parents[2] / "results"
    cases = [("h200-flashinfer/flashinfer-cp", "flashinfer", lambda e: e["flashinfer_cp"]),
             ("h200-intracp", "fla-intracp", lambda e: e["intracard_cp"]["engaged"])]
    for folder, backend, split in cases:
        rows = pd.concat([pd.read_parquet(f) for f in sorted((root / folder).rglob("*.parquet"))])
        rows = rows[(rows.status == "ok") & (rows.backend == backend)]
        assert len(rows) >= 38, (folder, len(rows))
        said = [REGISTRY[backend].call_path(list(k)) for k in rows.kernels]
        recorded = ["cp" if split(json.loads(e)) else "unsplit" for e in rows.extra_json]
        assert said == recorded, folder
        assert {"cp", "unsplit"} <= set(said), folder  # both paths occur, so the agreement means something
