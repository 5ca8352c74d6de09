"""Time and SM coverage against head count (analyze/study/heads.py), on synthetic study rows."""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.study import build_study
from qlabench.analyze.study.figures import heads_figure
from qlabench.analyze.study.heads import head_scaling, main_kernel
from qlabench.analyze.study.page import render
from study_rows import FI, STACK_012, row, study_frame

CUTLASS = FI[0][0]


def frame(rows) -> pd.DataFrame:
    return pd.DataFrame([r.as_dict() for r, _ in rows])


def test_the_main_kernel_is_the_longest_with_its_blocks_and_share():
    r = {"kernels": ["cast", CUTLASS, "cast"], "kernel_dur_us": [2.0, 96.0, 2.0], "kernel_grid": ["1,1,1", "8,1,1", "1,1,1"]}
    name, blocks, share = main_kernel(r)
    assert name == "flat::kernel::FlatKernelTmaWarpSpecializedDeltaRule" and blocks == 8 and share == 0.96
    name, blocks, share = main_kernel({"kernels": ["a", "b", "a"], "kernel_dur_us": [5.0, 6.0, 5.0],
                                       "kernel_grid": ["4,2,1", "1,1,1", "4,2,1"]})
    assert (name, blocks) == ("a", 8) and abs(share - 10 / 16) < 1e-12
    assert main_kernel({"kernels": [], "kernel_dur_us": []}) == (None, None, None)


def test_head_scaling_keeps_single_sequence_forward_rows_made_the_published_way():
    rows = [row("flashinfer", "fwd", (32768,), hq, hv, ms, kernels=FI, sm_coverage=hv / 132,
                kernel_grid=(f"{hv},1,1",))
            for hq, hv, ms in ((2, 8, 1.61), (8, 32, 1.545), (16, 64, 1.545))]
    rows += [row("flashinfer", "fwd", (16384, 16384), 2, 8, 1.6, kernels=FI),  # two sequences: not here
             row("flashinfer", "fwd", (32768,), 2, 8, 9.9, kernels=FI, layout="dense"),  # not the published layout
             row("fla", "fwd", (32768,), 2, 8, 0.93, kernels=(("chunk_fwd_kernel_h", 600.0),), sm_coverage=0.51,
                 kernel_grid=("32,1,1",)),
             row("flash_qla", "fwd", (32768,), 2, 8, 0.5, status="error", reason="boom")]  # not ok: not here
    h = head_scaling(build_study(frame(rows)).primary_rows)
    fi = h[h["backend"] == "flashinfer"]
    assert list(fi["heads"]) == ["h2/8", "h8/32", "h16/64"] and list(fi["main_blocks"]) == [8, 32, 64]
    assert list(fi["median_ms"]) == [1.61, 1.545, 1.545] and set(h["total_tokens"]) == {32768}
    assert set(h["backend"]) == {"flashinfer", "fla"}


def test_the_report_explains_flashinfers_flat_curve():
    st = build_study(study_frame())
    figs = dict(heads_figure(st))
    assert "heads_coverage" in figs
    page = render(st, {"heads_coverage": "heads_coverage.png"})
    assert "## Time, SM coverage and head count" in page and "![time and SM coverage against heads]" in page
    assert "FlashInfer at 1x32768" in page


def test_nothing_to_draw_is_no_figure():
    st = build_study(frame([row("flashinfer", "fwd", (32768,), 2, 8, 1.6, kernels=FI, stack=STACK_012)]))
    assert heads_figure(st) == []


def test_the_flashinfer_heads_sentence_says_what_the_rows_show_flat_or_growing():
    """0.6's one block per value head on idle SMs kept the time flat; 0.7's split call covers the SMs at the fewest
    heads and its time grows with them: the sentence follows the numbers, never one version's story."""
    from qlabench.analyze.study.page import flashinfer_heads_sentence

    def at(h_v, ms, blocks, cov):
        return {"h_v": h_v, "heads": f"h{h_v // 4}/{h_v}", "median_ms": ms, "main_blocks": blocks, "sm_coverage": cov}

    flat = flashinfer_heads_sentence(at(8, 1.62, 8, 0.06), at(64, 1.55, 64, 0.48), 32768)
    assert "one per value head" in flat and flat.endswith("more heads fill idle SMs instead of adding time.")
    grows = flashinfer_heads_sentence(at(8, 0.239, 128, 0.98), at(64, 1.507, 128, 0.98), 32768)
    assert "6.3x the time" in grows and "one per value head" not in grows
    assert grows.endswith("the SMs are already covered at the fewest heads, so the added heads add time.")
