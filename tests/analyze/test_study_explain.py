"""An explanation names a cause only when a recorded comparison supports it; every other recorded
condition is labelled 'unverified', and the summary counts the two apart."""

from __future__ import annotations

import pandas as pd

from qlabench.analyze.study import build_study
from qlabench.analyze.study.explain import explain_value
from study_rows import FQ_CP, FQ_NOCP, STACK_012, published_ms, row

OURS = {"status": "ok", "backend": "flash_qla", "library": "flash_qla", "lib_version": "0.1.3",
        "stack": "flash-qla 0.1.3", "ours_ms": 1.2, "published_ms": 1.0, "ratio": 1.2, "cp_launched": True,
        "gate_label": "flashqla", "timer": "graph"}


def other(ms: float, **kw) -> dict:
    """A row of the same published value on the published stack (flash-qla 0.1.2)."""
    return {"lib_version": "0.1.2", "stack": "flash-qla 0.1.2", "ours_ms": ms, "ratio": ms, "cp_launched": True, **kw}


def test_a_version_with_no_run_on_the_published_one_is_unverified():
    e = explain_value(OURS, 0.10)
    assert e.verified is False and e.label.startswith("slower: unverified: ")
    assert "flash-qla 0.1.3 (published 0.1.2; no 0.1.2 run)" in e.label


def test_a_version_is_a_cause_when_the_published_version_re_ran_within_the_tolerance():
    e = explain_value(OURS, 0.10, others=[other(1.03)])
    assert e.verified is True
    assert e.label == "slower: flash-qla 0.1.3 (published 0.1.2; 0.1.2 re-run within 10%)"


def test_a_cp_decision_is_a_cause_only_where_the_other_version_decided_otherwise():
    # Both versions launched CP and both are slow: the CP state is a condition, not a cause.
    same = explain_value(OURS, 0.10, others=[other(1.25)])
    assert same.verified is False and "unverified" in same.label and "intra-CP on" in same.label
    # 0.1.3 left CP off where 0.1.2 turned it on: a recorded difference between the two.
    changed = explain_value({**OURS, "cp_launched": False}, 0.10, others=[other(1.25, cp_launched=True)])
    assert changed.verified is True and changed.label == "slower: intra-CP off (on in 0.1.2)"


def test_a_small_clock_drop_is_not_a_cause():
    # 1980 -> 1965 MHz cannot stretch a 1.2x gap, and the other stack shows the same flag and time.
    small = {**OURS, "clock_drop": True, "clock_drop_reason": "sm_power_cap", "sm_clock_mhz_before": 1980.0,
             "sm_clock_mhz_after": 1965.0}
    e = explain_value(small, 0.10, others=[other(1.2, clock_drop=True)])
    assert e.verified is False and e.label.startswith("slower: unverified: ")
    assert "clocks dropped" in e.label and "size of the gap" not in e.label
    assert any(f.startswith("clocks dropped: sm_power_cap") for f in e.factors)


def test_a_clock_drop_the_size_of_the_gap_is_a_cause():
    big = {**OURS, "clock_drop": True, "clock_drop_reason": "sm_power_cap", "sm_clock_mhz_before": 1980.0,
           "sm_clock_mhz_after": 1980.0 / 1.2}
    e = explain_value(big, 0.10)
    assert e.verified is True and "clocks dropped by the size of the gap" in e.label


def test_the_summary_counts_verified_and_unverified_apart():
    fq8 = published_ms("fwd", 2, 8, "flash_qla_ms", (8192,))
    fq32 = published_ms("fwd", 2, 8, "flash_qla_ms", (32768,))
    old = dict(stack=STACK_012, run_id="old", timestamp="2026-11-30T10:00:00+00:00")
    pairs = [row("flash_qla", "fwd", (32768,), 2, 8, fq32 * 1.3, kernels=FQ_CP),  # 0.1.2 within: verified
             row("flash_qla", "fwd", (32768,), 2, 8, fq32 * 1.02, kernels=FQ_CP, **old),
             row("flash_qla", "fwd", (8192,), 2, 8, fq8 * 1.3, kernels=FQ_NOCP)]  # no 0.1.2 run: unverified
    df = pd.DataFrame([r.as_dict() for r, _ in pairs])
    s = build_study(df)
    outside = s.comparison[(s.comparison["status"] == "ok") & ~s.comparison["within"].astype(bool)]
    assert sorted(outside["verified"]) == [False, True]
    assert (s.summary.n_verified, s.summary.n_unverified) == (1, 1)
    assert "1 with a cause a recorded comparison supports, 1 unverified" in s.summary.line


def test_a_version_is_no_cause_when_another_run_of_our_version_meets_the_published_value():
    # fla 0.6.0 outside 10% in its newest run, but its earlier run of the same point is within, and the
    # published stack's re-run is within too: the runs disagree, so the version is not what the rows show.
    pub = published_ms("fwd", 2, 8, "fla_ms", (32768,))
    runs = [row("fla", "fwd", (32768,), 2, 8, pub * 1.2, run_id="late", timestamp="2026-12-01T12:00:00+00:00"),
            row("fla", "fwd", (32768,), 2, 8, pub * 1.02, run_id="early", timestamp="2026-12-01T08:00:00+00:00"),
            row("fla", "fwd", (32768,), 2, 8, pub * 1.01, stack=STACK_012, run_id="old",
                timestamp="2026-11-30T10:00:00+00:00")]
    s = build_study(pd.DataFrame([r.as_dict() for r, _ in runs]))
    v = s.comparison[(s.comparison["backend"] == "fla") & (s.comparison["sequences"] == "32768")
                     & (s.comparison["heads"] == "h2/8")].iloc[0]
    assert v["run_id"] == "late" and not v["within"]
    assert v["verified"] is False and "fla 0.6.0 (published" not in v["explanation"].replace("unverified: ", "")
    assert "runs of fla 0.6.0 disagree (run early within 10%)" in v["explanation"]


def test_the_version_stays_a_cause_when_no_run_of_our_version_meets_it():
    e = explain_value(OURS, 0.10, others=[other(1.03)], reruns={"r2": 1.19})
    assert e.verified is True and e.label == "slower: flash-qla 0.1.3 (published 0.1.2; 0.1.2 re-run within 10%)"
    assert any(f.startswith("run r2 on the same stack: 1.190 ms") for f in e.factors)
