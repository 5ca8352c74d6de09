"""Auto-CP regret divides times of one run on one GPU; where the results hold no such set, the ratio says
which runs or GPUs it mixes."""

from __future__ import annotations

import pandas as pd
import pytest

from qlabench.analyze.study import build_study
from study_rows import CP_RUN, CURRENT, FQ_CP, FQ_NOCP, fi, row

S = (32768,)
OLD = dict(run_id="first", timestamp="2026-11-30T14:09:00+00:00")
NEW = dict(run_id="second", timestamp="2026-11-30T16:12:00+00:00")


def variant(backend, ms, *, run, gpu, auto_split=False):
    # the auto call left unsplit by default: forcecp is then the other decision, and its time a regret's divisor
    kernels = FQ_CP if backend == "flash_qla-forcecp" or (backend == "flash_qla" and auto_split) else FQ_NOCP
    return row(backend, "fwd", S, 2, 8, ms, kernels=kernels, device_index=gpu, **run)


def test_the_pinned_setting_that_decides_as_auto_did_is_the_same_call_not_a_regret():
    # auto split, as forcecp does: 1.00 against 0.95 is the same call measured twice; nocp (1.20) is slower
    pairs = [variant("flash_qla", 1.00, run=OLD, gpu=0, auto_split=True), variant("flash_qla-nocp", 1.20, run=OLD, gpu=0),
             variant("flash_qla-forcecp", 0.95, run=OLD, gpu=0)]
    (r,) = regret(pairs).to_dict("records")
    assert r["auto_cp"] is True and r["best"] == "forcecp" and r["regret"] == 1.0
    # the other decision faster: that is the regret, whatever the same call's second time
    pairs = [variant("flash_qla", 1.00, run=OLD, gpu=0, auto_split=True), variant("flash_qla-nocp", 0.80, run=OLD, gpu=0),
             variant("flash_qla-forcecp", 0.95, run=OLD, gpu=0)]
    (r,) = regret(pairs).to_dict("records")
    assert r["best"] == "nocp" and r["regret"] == pytest.approx(1.00 / 0.80)
    # left unsplit, as nocp: nocp's faster time (0.97) is the same call, forcecp (1.10) no better
    pairs = [variant("flash_qla", 1.00, run=OLD, gpu=0), variant("flash_qla-nocp", 0.97, run=OLD, gpu=0),
             variant("flash_qla-forcecp", 1.10, run=OLD, gpu=0)]
    (r,) = regret(pairs).to_dict("records")
    assert r["auto_cp"] is False and r["best"] == "nocp" and r["regret"] == 1.0


def regret(pairs) -> pd.DataFrame:
    return build_study(pd.DataFrame([r.as_dict() for r, _ in pairs])).regret


def test_a_newer_run_of_auto_alone_does_not_enter_an_older_runs_ratio():
    pairs = [variant("flash_qla", 1.00, run=OLD, gpu=0), variant("flash_qla-nocp", 1.20, run=OLD, gpu=0),
             variant("flash_qla-forcecp", 0.95, run=OLD, gpu=0),
             variant("flash_qla", 1.06, run=NEW, gpu=1)]  # the same point, 6% slower in another run
    (r,) = regret(pairs).to_dict("records")
    assert r["auto_ms"] == 1.00 and r["regret"] == pytest.approx(1.00 / 0.95)
    assert r["run_id"] == "first" and r["mixes"] is None


def test_a_ratio_over_two_gpus_of_one_run_says_so():
    pairs = [variant("flash_qla", 1.00, run=OLD, gpu=0), variant("flash_qla-nocp", 1.20, run=OLD, gpu=1),
             variant("flash_qla-forcecp", 0.95, run=OLD, gpu=1)]
    (r,) = regret(pairs).to_dict("records")
    assert r["run_id"] == "first" and r["regret"] == pytest.approx(1.00 / 0.95)
    assert r["mixes"].startswith("GPUs of one run") and "auto GPU 0" in r["mixes"] and "nocp GPU 1" in r["mixes"]


def test_a_ratio_across_runs_names_them():
    pairs = [variant("flash_qla-nocp", 1.20, run=OLD, gpu=0), variant("flash_qla-forcecp", 0.95, run=OLD, gpu=0),
             variant("flash_qla", 1.06, run=NEW, gpu=1)]
    (r,) = regret(pairs).to_dict("records")
    assert r["regret"] == pytest.approx(1.06 / 0.95)
    assert r["mixes"].startswith("runs:") and "auto second" in r["mixes"] and "forcecp first" in r["mixes"]
    assert set(r["run_id"].split(" + ")) == {"first", "second"}


# -- FlashInfer: the same table from its own three variants (core/libraries.py AUTO_CHOICES) ------------------


def test_flashinfer_gets_its_own_regret_rows_from_its_three_variants():
    eight = (1024,) * 8
    pairs = [fi("flashinfer", eight, 0.124, run=CURRENT), fi("flashinfer-nocp", eight, 0.052, run=CURRENT),
             fi("flashinfer-forcecp", eight, 0.125, run=CURRENT),
             # the older two-variant run of the same point: the complete set of one run wins
             fi("flashinfer", eight, 0.125, run=CP_RUN), fi("flashinfer-nocp", eight, 0.053, run=CP_RUN)]
    r = regret(pairs)
    assert list(r["library"]) == ["flashinfer"]
    (rec,) = r.to_dict("records")
    assert rec["regret"] == pytest.approx(0.124 / 0.052) and rec["best"] == "nocp"
    assert rec["auto_cp"] is True and rec["forcecp_ms"] == 0.125 and rec["unmeasured"] is None
    assert rec["run_id"] == "fi-current" and rec["mixes"] is None


def test_a_flashinfer_point_of_the_two_variant_run_is_a_lower_bound_that_says_so():
    pairs = [fi("flashinfer", (32768,), 0.39, run=CP_RUN, heads=(8, 32)),
             fi("flashinfer-nocp", (32768,), 1.42, run=CP_RUN, heads=(8, 32))]
    (rec,) = regret(pairs).to_dict("records")
    assert rec["regret"] == pytest.approx(0.39 / 1.42) and rec["forcecp_ms"] is None
    assert rec["unmeasured"] == "forcecp not measured: a lower bound" and rec["run_id"] == "fi-cp"


def test_flashinfer_times_of_two_runs_are_divided_only_with_both_run_ids_on_the_row():
    s = (4096,) * 8
    pairs = [fi("flashinfer", s, 0.331, run=CURRENT), fi("flashinfer-nocp", s, 0.186, run=CP_RUN),
             fi("flashinfer-forcecp", s, 0.330, run=CP_RUN, gpu=1)]
    (rec,) = regret(pairs).to_dict("records")
    assert rec["regret"] == pytest.approx(0.331 / 0.186)
    assert set(rec["run_id"].split(" + ")) == {"fi-current", "fi-cp"}
    assert rec["mixes"].startswith("runs:") and "auto fi-current" in rec["mixes"] and "nocp fi-cp" in rec["mixes"]


def test_both_libraries_are_one_table_and_the_page_shows_a_section_each(tmp_path):
    from qlabench.analyze.study.page import write_report

    fq = [variant("flash_qla", 1.00, run=OLD, gpu=0), variant("flash_qla-nocp", 1.20, run=OLD, gpu=0),
          variant("flash_qla-forcecp", 0.95, run=OLD, gpu=0)]
    fis = [fi("flashinfer", (2048,) * 4, 0.120, run=CURRENT), fi("flashinfer-nocp", (2048,) * 4, 0.096, run=CURRENT)]
    study = build_study(pd.DataFrame([r.as_dict() for r, _ in fq + fis]))
    assert list(study.regret["library"]) == ["flash-qla", "flashinfer"]
    text = write_report(study, tmp_path).page.read_text()
    assert "### flash-qla: `flash_qla` against" in text and "### flashinfer: `flashinfer` against" in text
    section = text.split("### flashinfer:")[1].split("##")[0]
    assert "fi-current" in section and "forcecp not measured" in section and "1.25" in section
    assert (tmp_path / "cp_regret.png").exists() and (tmp_path / "cp_regret_flashinfer.png").exists()

