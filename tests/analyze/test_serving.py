"""The serving analysis on synthetic decode/mtp rows (tests/serving_rows.py): who wins, where it changes,
what never wins, and the honest labels (which peak, L2 hints)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import serving_rows as sr
from qlabench.analyze.serving import build_serving
from qlabench.analyze.serving.frame import l2_hint, serving_frame
from qlabench.analyze.serving.page import l2_text, peak_text
from qlabench.core.errors import QlabenchError

DECODE = "qwen3.5-397b TP8 (h2/8) · T=1 · state float32"
MTP = "qwen3.5-397b TP8 (h2/8) · T=2 · state float32"


def _winners(s, group):
    w = s.winners[s.winners["group"] == group]
    return dict(zip(w["batch"], w["winner"]))


def test_the_fastest_ok_variant_wins_each_batch_and_skipped_ones_are_named_beside_it():
    s = build_serving(sr.rows())
    assert _winners(s, DECODE) == {1: "fla-recurrent [kv]", 4: "fla-recurrent [kv]", 16: "fla-recurrent [kv]",
                                   64: "flashinfer-decode-pt [vk]", 256: "flashinfer-decode-pt [vk]"}
    w = s.winners[s.winners["group"] == DECODE].set_index("batch")
    assert w.loc[256, "ms"] == pytest.approx(sr.fi_ms(256))
    assert w.loc[256, "runner_up"] == "fla-recurrent [kv]"
    assert w.loc[256, "margin"] == pytest.approx(sr.fla_ms(256) / sr.fi_ms(256))
    assert (w["not_competing"] == "fla-recurrent [vk] (skipped)").all()
    ranges = s.ranges.set_index("group")
    assert ranges.loc[DECODE, "winners"] == "1-16: fla-recurrent [kv]; 64-256: flashinfer-decode-pt [vk]"
    assert ranges.loc[DECODE, "largest_batch"] == 256


def test_the_crossing_is_between_the_batches_where_the_winner_changes_and_interpolated_log_log():
    s = build_serving(sr.rows())
    c = s.crossings[s.crossings["group"] == DECODE].iloc[0]
    assert (c["from_batch"], c["to_batch"], c["before"], c["after"]) == (16, 64, "fla-recurrent [kv]",
                                                                      "flashinfer-decode-pt [vk]")
    # The two synthetic lines meet at B = 25; interpolating log-time over log-batch lands near it.
    assert 16 < c["at_about"] < 64 and abs(c["at_about"] - 25) < 3
    # mtp: FlashInfer's row at 64 is above the limit (incorrect): FLA wins 64 because of it, no crossing.
    assert s.crossings[s.crossings["group"] == MTP].empty


def test_a_row_above_the_limit_is_listed_and_never_wins_even_when_an_older_file_left_it_ok():
    df = sr.rows()
    ok_over = sr.serving_row("flashinfer-decode-pt", "vk", 256, 0.001, frac=1.2, timestamp="2026-02-01T00:00:00+00:00")
    s = build_serving(pd.concat([df, pd.DataFrame([ok_over])], ignore_index=True))
    assert _winners(s, DECODE)[256] == "fla-recurrent [kv]"
    assert _winners(s, MTP)[64] == "fla-recurrent [kv]"
    op = s.over_peak.set_index(["group", "batch"])
    # the share comes from the row's bytes and time at its recorded peaks, not from its stored hbm_frac (1.2)
    read, written = sr.state_bytes(256, 1, "float32")
    share = (read + written) / (sr.PEAK * 1e12) / (0.001 * 1e-3)
    assert op.loc[(DECODE, 256), "status"] == "ok" and op.loc[(DECODE, 256), "pct_hbm"] == pytest.approx(100 * share)
    assert op.loc[(MTP, 64), "status"] == "incorrect" and "hbm_frac 1.30" in op.loc[(MTP, 64), "reason"]
    mtp = s.ranges.set_index("group").loc[MTP, "winners"]
    # flashinfer-mtp ran at 64 and failed its check: fla-recurrent won without it, and the range says so
    assert mtp == "1: flashinfer-mtp [vk]; 64: fla-recurrent [kv] (unranked: flashinfer-mtp [vk] incorrect)"
    only_fi = build_serving(df[~((df["backend"] == "fla-recurrent") & (df["mode"] == "mtp"))])
    assert only_fi.ranges.set_index("group").loc[MTP, "winners"] == ("1: flashinfer-mtp [vk]; 64: no usable row "
                                                                   "(unranked: flashinfer-mtp [vk] incorrect)")
    assert "above 100% of the limit" in s.winners.set_index(["group", "batch"]).loc[(DECODE, 256), "not_competing"]
    assert not s.rows[s.rows["over_peak"]]["usable"].any()


def test_not_ok_rows_carry_their_reasons_and_the_newest_row_of_a_point_counts():
    s = build_serving(sr.rows())
    assert set(s.not_ok["status"]) == {"skipped", "incorrect"}
    assert s.not_ok["reason"].str.len().gt(0).all()
    first = s.rows[(s.rows["group"] == DECODE) & (s.rows["batch"] == 1) & (s.rows["variant"] == "fla-recurrent [kv]")]
    assert len(first) == 1 and first["time_ms"].iloc[0] == pytest.approx(sr.fla_ms(1))  # not the older 0.5 ms


def test_state_layout_and_dtype_split_variants_and_groups_and_prefill_rows_are_ignored():
    d = serving_frame(sr.rows())
    assert set(d["mode"]) == {"decode", "mtp"}
    assert {"fla-recurrent [kv]", "fla-recurrent [vk]"} <= set(d["variant"])
    assert "qwen3.5-397b TP8 (h2/8) · T=2 · state bfloat16" in set(d["group"])
    assert d["tbs"].iloc[0] == pytest.approx(d["bytes_moved"].iloc[0] / (d["median_ms"].iloc[0] * 1e-3) / 1e12)
    with pytest.raises(QlabenchError, match="no serving rows"):
        build_serving(sr.rows().query("mode == 'fwd'"))


def test_rows_of_two_devices_are_two_groups_not_one_curve():
    df = sr.rows()
    cpu = df[df["mode"] != "fwd"].assign(device="cpu", timestamp="2026-03-01T00:00:00+00:00")
    s = build_serving(pd.concat([df, cpu], ignore_index=True))
    on_cpu = s.rows["group"].str.contains("device=cpu")
    assert s.rows["group"].nunique() == 6 and on_cpu.sum() == (~on_cpu).sum() == 20  # 21 rows, one superseded


def test_a_tie_is_a_margin_within_the_rows_noise():
    rows = [sr.serving_row("fla-recurrent", "kv", 4, 0.100, rel_noise=0.02),
            sr.serving_row("flashinfer-decode-pt", "vk", 4, 0.101, rel_noise=0.02),
            sr.serving_row("fla-recurrent", "kv", 16, 0.100, rel_noise=0.001),
            sr.serving_row("flashinfer-decode-pt", "vk", 16, 0.110, rel_noise=0.001)]
    w = build_serving(pd.DataFrame(rows)).winners.set_index("batch")
    assert w["tie"].tolist() == [True, False]  # batch 4: 1% apart at 2% noise; 16: 10% apart at 0.1%


@pytest.mark.parametrize("extra, hint", [(None, None), ("", None), ("not json", None), ("[1]", None),
                                         (json.dumps({"l2_resident": True}), True),
                                         (json.dumps({"pool": {"l2_resident": False}}), False),
                                         (json.dumps({"l2_resident": None}), None)])
def test_the_l2_hint_is_read_where_present_and_absent_otherwise(extra, hint):
    assert l2_hint(extra) is hint


def test_the_labels_say_which_peaks_and_what_the_l2_hints_were():
    s = build_serving(sr.rows())
    text = peak_text(s)
    assert "read 4.00 TB/s" in text and "write 4.00 TB/s" in text and "NVIDIA H200" in text
    assert "2 rows as L2-resident" in l2_text(s) and "10 rows carry no hint" in l2_text(s)
    cpu = build_serving(sr.rows().assign(hbm_peak_read_tbs=None, hbm_peak_write_tbs=None, hbm_frac=None,
                                         extra_json=None))
    assert "No row carries a measured HBM peak" in peak_text(cpu) and not cpu.has_fraction
    assert "No row carries an `l2_resident` hint" in l2_text(cpu)


def test_a_tie_is_no_winner_to_cross_from_and_the_ranges_say_tie():
    """Batch 1 within noise (a tie), batches 4 and 16 decided for FlashInfer: no crossing is reported, and the
    at-a-glance ranges name both variants of the tie rather than crown one."""
    rows = [sr.serving_row("fla-recurrent", "kv", 1, 0.0100, rel_noise=0.05),
            sr.serving_row("flashinfer-decode-pt", "vk", 1, 0.0102, rel_noise=0.05),
            sr.serving_row("fla-recurrent", "kv", 4, 0.100, rel_noise=0.001),
            sr.serving_row("flashinfer-decode-pt", "vk", 4, 0.050, rel_noise=0.001),
            sr.serving_row("fla-recurrent", "kv", 16, 0.400, rel_noise=0.001),
            sr.serving_row("flashinfer-decode-pt", "vk", 16, 0.200, rel_noise=0.001)]
    s = build_serving(pd.DataFrame(rows))
    assert s.crossings.empty
    (ranges,) = s.ranges["winners"].tolist()
    assert ranges == "1: fla-recurrent [kv] ~ flashinfer-decode-pt [vk] (tie); 4-16: flashinfer-decode-pt [vk]"


def test_a_winner_change_caused_by_a_failed_row_is_no_crossing():
    """FlashInfer errored at batch 1 on the H200 (its index tensor misaligned): FLA 'won' batch 1, which is
    no crossing of the curves; the range names the failure instead."""
    df = sr.rows()
    fail = (df["backend"] == "flashinfer-decode-pt") & (df["batch"] == 64) & (df["mode"] == "decode")
    df.loc[fail, ["status", "reason", "median_ms"]] = ["error", "ValueError: Misaligned Tensor data", None]
    s = build_serving(df)
    assert _winners(s, DECODE)[64] == "fla-recurrent [kv]"
    c = s.crossings[s.crossings["group"] == DECODE]
    assert list(zip(c["from_batch"], c["to_batch"])) == []  # 16 -> 64 and 64 -> 256 both pass over the error
    assert "64: fla-recurrent [kv] (unranked: flashinfer-decode-pt [vk] error)" in s.ranges.set_index("group").loc[
        DECODE, "winners"]


def test_a_variant_missing_at_a_batch_is_named_and_makes_no_crossing():
    """A run cut short measured FlashInfer at the small batches only: FLA is the fastest of what ran at the
    large ones, which the ranges must not pass off as FLA beating FlashInfer there."""
    df = sr.rows()
    cut = (df["backend"] == "flashinfer-decode-pt") & (df["batch"] == 256) & (df["mode"] == "decode")
    s = build_serving(df[~cut])
    assert _winners(s, DECODE)[256] == "fla-recurrent [kv]"
    assert s.ranges.set_index("group").loc[DECODE, "winners"].endswith(
        "256: fla-recurrent [kv] (unranked: flashinfer-decode-pt [vk] not measured)")
    c = s.crossings[s.crossings["group"] == DECODE]
    assert list(zip(c["from_batch"], c["to_batch"])) == [(16, 64)]  # 64 -> 256 is the missing row, no crossing


def test_a_variant_absent_from_a_whole_group_is_named_where_it_ran_for_another_model():
    """A run cut short reached 27B at TP8 with FLA only; FlashInfer's pool kernel ran at 397B: the 27B
    winner is FLA among what ran there, and the range says FlashInfer was not measured."""
    df = sr.rows()
    other = [sr.serving_row("fla-recurrent", "kv", b, sr.fla_ms(b), model="qwen3.5-27b", h_qk=2, h_v=6)
             for b in (1, 16)]
    s = build_serving(pd.concat([df, pd.DataFrame(other)], ignore_index=True))
    ranges = s.ranges.set_index("group")["winners"]
    g27 = next(g for g in ranges.index if g.startswith("qwen3.5-27b"))
    assert ranges[g27] == "1-16: fla-recurrent [kv] (unranked: flashinfer-decode-pt [vk] not measured)"
    assert "not measured" not in ranges[DECODE]  # the 397B group ran both


def test_the_peak_text_names_the_kernel_that_set_each_peak():
    rows = sr.rows()
    rec = json.dumps({"l2_resident": False, "hbm_peaks": {"read_kernel": "sum-f64-view", "write_kernel": "zero"}})
    s = build_serving(rows.assign(extra_json=rec))
    assert "read 4.00 TB/s by `sum-f64-view`" in peak_text(s) and "write 4.00 TB/s by `zero`" in peak_text(s)
    assert "kernel not recorded" in peak_text(build_serving(rows))


def test_a_step_held_to_an_sm_budget_is_no_whole_gpu_step():
    # the SM-budget page reads those (analyze/sm_budget/); on the serving page a 16-SM step would be a
    # second time of the same point
    held = sr.serving_row("flashinfer-decode-pt", "vk", 256, 10 * sr.fi_ms(256), sm_budget=16)
    d = serving_frame(pd.concat([sr.rows(), pd.DataFrame([held])], ignore_index=True))
    at = d[(d["backend"] == "flashinfer-decode-pt") & (d["batch"] == 256) & (d["T"] == 1)]
    assert list(at["time_ms"]) == [pytest.approx(sr.fi_ms(256))]
