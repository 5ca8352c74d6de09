"""The study page's "FLA's CP against FlashQLA's": fla-intracp beside flash_qla (auto CP) and fla on the same
forward points, whether each library split the call, and the timers behind each ratio."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from qlabench.analyze.study import build_study
from qlabench.analyze.study.page import render
from qlabench.analyze.study.prepare import FLA_CP_KERNEL_MARK
from study_rows import FLA, published_ms, row, study_frame

FLA_SPLIT = FLA[:1] + (("chunk_cp_fwd_kernel_h", 30.0), ("chunk_cp_fwd_bwd_kernel_merge", 5.0)) + FLA[1:]


def intracp(seqlens, h_qk, h_v, ms, kernels, **kw):
    r, gates = row("fla-intracp", "fwd", seqlens, h_qk, h_v, ms, kernels=kernels, **kw)
    return dataclasses.replace(r, timer="events"), gates


def study(extra_pairs=(), base=True):
    frames = ([study_frame()] if base else []) + [pd.DataFrame([r.as_dict() for r, _ in extra_pairs])]
    return build_study(pd.concat(frames, ignore_index=True))


@pytest.fixture(scope="module")
def measured():
    """study_rows' scenario plus fla-intracp on three of its forward points."""
    return study([intracp((32768,), 2, 8, 0.5, FLA_SPLIT), intracp((8192,), 2, 8, 0.3, FLA),
                  intracp((32768,), 8, 32, 2.0, FLA_SPLIT)])


def section(page: str) -> str:
    return page.split("## FLA's CP against FlashQLA's", 1)[1].split("\n## ", 1)[0]


def test_the_mark_is_the_backends_pre_scan_kernel():
    from qlabench.backends.fla import INTRACARD_KERNELS

    assert FLA_CP_KERNEL_MARK == INTRACARD_KERNELS[0]


def test_fla_intracp_beside_flash_qla_and_fla_on_the_same_points(measured):
    t = measured.fla_intracp()
    assert len(t) == 3
    by = {(r["h_v"], r["total_tokens"]): r for r in t.to_dict("records")}
    # h2/8 32768: every backend ok (study_rows: fla 1.04x, flash_qla 1.23x published); FLA split, and
    # FlashQLA's auto CP launched its warm-up kernel
    a = by[(8, 32768)]
    fla_ms = published_ms("fwd", 2, 8, "fla_ms", (32768,)) * 1.04
    fq_ms = published_ms("fwd", 2, 8, "flash_qla_ms", (32768,)) * 1.23
    assert a["fla ms"] == pytest.approx(fla_ms) and a["flash_qla ms"] == pytest.approx(fq_ms)
    assert a["vs fla"] == pytest.approx(0.5 / fla_ms) and a["vs flash_qla"] == pytest.approx(0.5 / fq_ms)
    assert a["fla split"] is True and a["flash_qla split"] is True
    assert a["timers"] == "fla-intracp events, fla graph, flash_qla graph"
    assert a["runs"] == 1
    # h2/8 8192: FLA ran the call unsplit (no pre-scan kernel): shown, never claimed as CP
    assert by[(8, 8192)]["fla split"] is False
    # h8/32 32768: fla errored there, so no fla time and no ratio to it
    c = by[(32, 32768)]
    assert pd.isna(c["fla ms"]) and pd.isna(c["vs fla"])
    assert c["timers"] == "fla-intracp events, flash_qla graph"


def test_the_page_section_counts_splits_and_names_the_timer_caveat(measured):
    text = section(render(measured, {}))
    assert "timed with CUDA events" in text
    assert "fla-intracp ok on 3 forward points; FLA split the call on 2, ran it unsplit on 1" in text
    assert "| h2/8 | 32768 | 0.500 |" in text
    assert "nothing measured" not in text


def test_without_fla_intracp_rows_the_section_says_nothing_is_measured():
    from qlabench.analyze.study.page import _intracp_section

    s = study([intracp((32768,), 2, 8, None, (), status="error", reason="boom"),
               row("flash_qla", "fwd", (32768,), 2, 8, 0.4, kernels=FLA)], base=False)
    assert s.fla_intracp().empty
    text = "\n".join(_intracp_section(s))
    assert "No fla-intracp forward row is ok in these results: nothing measured" in text


def test_kernel_time_compares_the_gpu_work_whatever_the_timers(measured):
    """The kernel columns sum each row's traced kernels: a ratio no timer's launch gaps enter."""
    a = {(r["h_v"], r["total_tokens"]): r for r in measured.fla_intracp().to_dict("records")}[(8, 32768)]
    split_us = sum(us for _, us in FLA_SPLIT)
    fla_us = sum(us for _, us in FLA)
    assert a["kernel ms"] == pytest.approx(split_us / 1000)
    assert a["kernel vs fla"] == pytest.approx(split_us / fla_us)
    from qlabench.analyze.study.intracp import intracp_sentence

    assert "its GPU kernel time / fla's: median" in intracp_sentence(measured.fla_intracp())
