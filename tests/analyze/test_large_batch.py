"""The large-batch view from synthetic rows (analyze/large_batch/): FlashQLA's kernels beside its total (the split's
passes, their share, the gaps), the equal-token comparison and its answer, ties from measured noise, a missing
backend said as missing, and a row that is not ok never shown as a time."""

from __future__ import annotations

import pandas as pd
import pytest

from qlabench.analyze.evidence import believed
from qlabench.analyze.large_batch import build_large_batch
from qlabench.analyze.large_batch.finding import finding_lines
from qlabench.analyze.large_batch.kernels import call_kernels, kernel_columns
from qlabench.analyze.large_batch.page import render
from qlabench.analyze.large_batch.times import missing
from qlabench.core.errors import QlabenchError

H = dict(h_qk=2, h_v=8, K=16, V=16, dtype="float32", layout="varlen", batch=1, timer="graph", device="NVIDIA H200")
QLA = ("tilelang_chunk_local_cumsum_kernel_kernel", "tilelang_kkt_solve_kernel_kernel",
       "tilelang_fused_chunk_gdr_fwd_kernel_kernel")
FI = ("kernel_cutlass_kernel_flashinfergdn_kernelsdelta_rule_dsldelta_rule_sm90_FullyFusedDeltaRuleSm90_object_at__t",)


def _row(make_row, backend, n, length, ms, us=(), run="run-A", noise=0.001, **kw):
    kernels = QLA if backend.startswith("flash_qla") else FI if backend.startswith("flashinfer") else ()
    fields = dict(H, backend=backend, seqlens=(length,) * n, num_seqs=n, total_tokens=n * length, median_ms=ms,
                  rel_noise=noise, run_id=run, kernels=kernels[: len(us)], kernel_dur_us=tuple(us),
                  extra_mem_mib=33.0 if backend.startswith("flash_qla") else 0.0)
    fields.update(kw)
    return make_row(**fields).as_dict()


def _rows(make_row, passes_at_most=100.0):
    """1024 tokens as 4x256 and 16x64, and 4096 tokens as 4x1024. FlashQLA's passes take the same time at both
    batch sizes unless `passes_at_most` says otherwise; its fused forward and FlashInfer's kernel grow."""
    r = lambda *a, **k: _row(make_row, *a, **k)  # noqa: E731
    return pd.DataFrame([
        r("flash_qla-nocp", 4, 256, 0.300, (5.0, 100.0, 190.0)),
        r("flash_qla-nocp", 16, 64, 0.340, (5.0, passes_at_most, 230.0)),
        r("flash_qla-nocp", 4, 1024, 1.100, (20.0, 400.0, 670.0)),
        r("flashinfer-nocp", 4, 256, 0.200, (195.0,), run="run-B"),
        r("flashinfer-nocp", 16, 64, 0.240, (235.0,), run="run-B"),
        # within flashinfer-nocp's noise (1%) at 4x256; an error at 16x64, whose time is never shown
        r("flashinfer", 4, 256, 0.2005, (195.0,), run="run-B", noise=0.01),
        r("flashinfer", 16, 64, None, (), run="run-B", status="error", reason="CUDA error: an illegal memory access"),
        # a wrong kernel: faster than every other, and never shown as a time
        r("fla", 4, 256, 0.050, run="run-C", status="incorrect", reason="err_o 0.5 over tolerance 0.01"),
    ])


def test_the_split_passes_share_and_the_gaps(make_row):
    k = build_large_batch(believed(_rows(make_row))).kernels.set_index("sequences")
    a = k.loc["4x256 packed"]
    assert a["split passes"] == "tilelang_chunk_local_cumsum, tilelang_kkt_solve" and a["fused rule"] == "named"
    assert a["split us"] == pytest.approx(105.0) and a["fused fwd us"] == pytest.approx(190.0)
    assert a["split share"] == pytest.approx(105.0 / 295.0)
    assert a["gap us"] == pytest.approx(300.0 - 295.0)  # the timed median less the traced kernels
    assert a["fused kernel us"] == pytest.approx(195.0) and a["fused kernels"] == 1
    assert a["fused gap us"] == pytest.approx(5.0)
    assert a["across runs"] and a["runs"] == "A, B"
    assert kernel_columns(k) == ["tilelang_chunk_local_cumsum us", "tilelang_kkt_solve us",
                                 "tilelang_fused_chunk_gdr_fwd us"]


def test_the_fused_forward_is_named_else_the_longest_kernel():
    named = call_kernels({"kernels": QLA, "kernel_dur_us": (5.0, 300.0, 190.0)})
    assert named.fused == 2 and named.rule == "named"  # by its name, though the solve took longer
    renamed = call_kernels({"kernels": ("prep", "solve", "main"), "kernel_dur_us": (5.0, 100.0, 190.0)})
    assert renamed.fused == 2 and renamed.rule == "longest" and renamed.split_names == ("prep", "solve")
    assert call_kernels({"kernels": (), "kernel_dur_us": ()}) is None


def test_at_equal_tokens_flat_passes_lose_share_as_the_batch_grows(make_row):
    s = build_large_batch(believed(_rows(make_row)))
    (case,) = s.cases  # only 1024 tokens was measured at two batch sizes
    assert (case.tokens, case.small["sequences"], case.large["sequences"]) == (1024, "4x256 packed", "16x64 packed")
    assert case.passes_grow is False and case.share_grows is False
    text = case.growth_text()
    assert "0.300 -> 0.340 ms (+13.3%)" in text and "0.200 -> 0.240 ms (+20.0%)" in text
    assert "(a ratio across runs)" in text
    assert "do not grow" in case.passes_text()
    answer = " ".join(finding_lines(s))
    assert "do not grow with the batch" in answer and "35.6% to 31.3%" in answer, answer
    # one batch size at two token counts: how the passes scale with the tokens
    ((a, b),) = s.token_pairs
    assert (a["tokens"], b["tokens"], b["split us"] / a["split us"]) == (1024, 4096, pytest.approx(4.0))


def test_passes_that_grow_with_the_batch_are_said_to(make_row):
    s = build_large_batch(believed(_rows(make_row, passes_at_most=160.0)))
    (case,) = s.cases
    assert case.passes_grow is True and case.share_grows is True
    assert "grow with the batch in 1 of 1 cases" in " ".join(finding_lines(s))


def test_ties_come_from_the_measured_noise(make_row):
    t = build_large_batch(believed(_rows(make_row))).times.set_index("sequences")
    # 0.2005 against 0.200: 0.25% apart, within flashinfer's 1% noise: neither is called faster
    assert t.loc["4x256 packed", "fastest"] == "tie: flashinfer-nocp, flashinfer"
    assert t.loc["4x256 packed", "flashinfer"] == "**0.201**" and t.loc["4x256 packed", "flashinfer-nocp"] == "**0.200**"
    assert t.loc["4x256 packed", "flash_qla-nocp"] == "0.300"
    quiet = _rows(make_row)
    quiet["rel_noise"] = 0.0001
    t = build_large_batch(believed(quiet)).times.set_index("sequences")
    assert t.loc["4x256 packed", "fastest"] == "flashinfer-nocp" and t.loc["4x256 packed", "flashinfer"] == "0.201"


def test_a_missing_backend_is_said_missing(make_row):
    s = build_large_batch(believed(_rows(make_row)))
    t = s.times.set_index("sequences")
    assert t.loc["16x64 packed", "fla"] == "missing" and t.loc["4x1024 packed", "flashinfer-nocp"] == "missing"
    gone = missing(s.rows).set_index("backend")
    assert gone.loc["fla", "problems without a row"] == 2
    # the fully fused side never measured: the answer says so instead of comparing
    no_fused = build_large_batch(believed(_rows(make_row).query("backend != 'flashinfer-nocp'")))
    assert no_fused.kernels.set_index("sequences").loc["4x256 packed", "fused ms"] == "missing"
    assert "flashinfer-nocp has no time at both ends of any case: the fully fused comparison is not measured" in \
        " ".join(finding_lines(no_fused))


def test_a_row_that_is_not_ok_never_shows_a_time(make_row):
    s = build_large_batch(believed(_rows(make_row)))
    t = s.times.set_index("sequences")
    assert t.loc["4x256 packed", "fla"] == "incorrect" and t.loc["16x64 packed", "flashinfer"] == "error"
    assert t.loc["16x64 packed", "fastest"] == "flashinfer-nocp"  # the error row is never ranked
    page = render(s, {}, "qlabench report --large-batch r")
    assert "0.050" not in page  # the incorrect row's time
    assert "| h2/8 4x256 packed | fla | incorrect | err_o 0.5 over tolerance 0.01 |" in page
    # an ok row whose check is over tolerance is believed incorrect: its kernels are not shown either
    bad = _rows(make_row)
    bad.loc[(bad["backend"] == "flash_qla-nocp") & (bad["num_seqs"] == 16), "err_o"] = 1.0
    b = build_large_batch(believed(bad))
    k = b.kernels.set_index("sequences").loc["16x64 packed"]
    assert k["split ms"] == "incorrect" and pd.isna(k["split us"]) and pd.isna(k["gap us"])
    assert b.cases[0].timed is False and "not measured at both" in b.cases[0].growth_text()


def test_no_forward_row_is_one_clear_error(make_row):
    with pytest.raises(QlabenchError, match="no forward row"):
        build_large_batch(pd.DataFrame([make_row(**H, mode="bwd", backend="flash_qla").as_dict()]))


def test_two_gpu_models_are_never_one_line(make_row):
    rows = _rows(make_row)
    other = rows[rows["backend"] == "flash_qla-nocp"].assign(device="NVIDIA H100", median_ms=0.9,
                                                             samples_ms=[(0.9,) * 3] * 3)
    s = build_large_batch(believed(pd.concat([rows, other], ignore_index=True)))
    t = s.times[s.times["sequences"] == "4x256 packed"].set_index("device")
    assert t.loc["NVIDIA H100", "flash_qla-nocp"] == "**0.900**"
    assert t.loc["NVIDIA H100", "flashinfer-nocp"] == "missing"
    assert t.loc["NVIDIA H200", "flash_qla-nocp"] == "0.300"
    assert "of 6 problems" in s.summary_line()
    k = s.kernels[s.kernels["sequences"] == "4x256 packed"].set_index("device")
    assert k.loc["NVIDIA H100", "fused ms"] == "missing" and k.loc["NVIDIA H200", "fused ms"] == "0.200"
