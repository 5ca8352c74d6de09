"""Auto-CP regret divides times of one run on one GPU; where the results hold no such set, the ratio says
which runs or GPUs it mixes."""

from __future__ import annotations

import pandas as pd
import pytest

from qlabench.analyze.study import build_study
from study_rows import FQ_CP, FQ_NOCP, row

S = (32768,)
OLD = dict(run_id="first", timestamp="2026-11-30T14:09:00+00:00")
NEW = dict(run_id="second", timestamp="2026-11-30T16:12:00+00:00")


def variant(backend, ms, *, run, gpu):
    kernels = FQ_NOCP if backend == "flash_qla-nocp" else FQ_CP
    return row(backend, "fwd", S, 2, 8, ms, kernels=kernels, device_index=gpu, **run)


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
