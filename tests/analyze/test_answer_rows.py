"""Which rows of a case an answer ranks (analyze/answer/rows.py): per backend its library's newest version, and
per backend and mode the replicates of its newest run, as the pandas groupings they replace chose them; and one run
of every candidate where one exists."""

from __future__ import annotations

import math

import pandas as pd

from qlabench.analyze.answer.rows import newest_run, newest_version, one_run


def _rows(*rows) -> pd.DataFrame:
    cols = ("backend", "mode", "timestamp", "run_id", "fla_version")
    return pd.DataFrame([dict(zip(cols, r)) for r in rows]).astype({"backend": "str", "run_id": "str"})


def test_newest_run_keeps_every_replicate_of_the_newest_run_of_each_backend_and_mode():
    df = _rows(("fla", "fwd", "2026-12-01T00:00:00", "old", "0.6.0"),
               ("fla", "fwd", "2026-12-02T00:00:00", "new", "0.6.0"),
               ("fla", "fwd", "2026-12-01T12:00:00", "new", "0.6.0"),  # an earlier replicate of the newest run
               ("fla", "fwd_bwd", "2026-12-01T00:00:00", "old", "0.6.0"),
               ("fla", "fwd", "2026-12-02T00:00:00", "tie", "0.6.0"))  # at the newest time too: the first met wins
    assert list(newest_run(df).index) == [1, 2, 3]


def test_newest_run_leaves_out_a_row_without_a_backend_or_a_time():
    df = _rows((None, "fwd", "2026-12-01T00:00:00", "a", "0.6.0"),
               ("fla", "fwd", math.nan, "b", "0.6.0"),
               ("fla", "fwd", "2026-11-01T00:00:00", "c", "0.6.0"))
    assert list(newest_run(df)["run_id"]) == ["c"]


def test_newest_version_keeps_each_backends_newest_version_in_the_one_version_order():
    df = _rows(("fla", "fwd", "t", "a", "0.6.0"), ("fla", "fwd", "t", "b", "0.10.0"),
               ("fla", "fwd", "t", "c", "0.10.0"), ("fla-recurrent", "fwd", "t", "d", None),
               (None, "fwd", "t", "e", "9.9"))
    assert list(newest_version(df)["run_id"]) == ["b", "c", "d"]


def _runs(*rows) -> pd.DataFrame:
    cols = ("backend", "mode", "timestamp", "run_id", "status", "checked_at_size")
    return pd.DataFrame([dict(zip(cols, r)) for r in rows])


def test_one_run_reads_the_newest_run_that_measured_every_candidate_over_a_newer_run_of_one():
    """TP8 on 2026-12-05: FlashInfer alone measured again later (the study's rows) must not pull its times out of
    the run that timed every candidate one after another."""
    df = _runs(("fla", "fwd", "2026-12-04T10", "all", "ok", True),
               ("flashinfer", "fwd", "2026-12-04T11", "all", "ok", True),
               ("flashinfer", "fwd", "2026-12-05T10", "fi-only", "ok", True),
               ("fla", "fwd", "2026-12-01T10", "older-all", "ok", True),
               ("flashinfer", "fwd", "2026-12-01T11", "older-all", "ok", True))
    assert set(one_run(df)["run_id"]) == {"all"}
    # without a complete run, each backend's newest run, as before
    split = _runs(("fla", "fwd", "2026-12-03T10", "fla-only", "ok", True),
                  ("flashinfer", "fwd", "2026-12-05T10", "fi-only", "ok", True))
    assert set(one_run(split)["run_id"]) == {"fi-only", "fla-only"}


def test_one_run_is_not_a_run_whose_row_is_bad_where_another_run_measured_that_candidate_well():
    """A run that failed a candidate, or checked it on a reduced problem only, does not stand for the answer where
    another run has a good row of it: the per-candidate newest runs answer instead."""
    for status, at_size in (("error", True), ("ok", False)):
        df = _runs(("fla", "fwd", "2026-12-04T10", "a", "ok", True),
                   ("flash_qla", "fwd", "2026-12-04T11", "a", status, at_size),
                   ("flash_qla", "fwd", "2026-12-05T10", "b", "ok", True))
        assert set(one_run(df)["run_id"]) == {"a", "b"}
        assert list(one_run(df)["backend"]) == ["fla", "flash_qla"]
    # where no run measured the candidate well, a complete run is still one run
    df = _runs(("fla", "fwd", "2026-12-04T10", "a", "ok", True),
               ("flash_qla", "fwd", "2026-12-04T11", "a", "error", True),
               ("fla", "fwd", "2026-12-05T10", "b", "ok", True))
    assert set(one_run(df)["run_id"]) == {"a"}


def test_a_run_that_lacks_only_a_backend_off_this_gpu_model_is_one_run_of_every_candidate():
    """H100, 2026-12-07: a newer run of every candidate that runs on SM90, with FlashInfer's training route (which
    does not) skipped as not installed there, stands for the answer; told nothing of the GPU model, the older run
    that holds that route's skipped row does."""
    df = _runs(("fla", "fwd_bwd", "2026-12-06T10", "old", "ok", True),
               ("flash_qla", "fwd_bwd", "2026-12-06T11", "old", "ok", True),
               ("flashinfer-train", "fwd_bwd", "2026-12-06T12", "old", "skipped", True),
               ("fla", "fwd_bwd", "2026-12-07T10", "new", "ok", True),
               ("flash_qla", "fwd_bwd", "2026-12-07T11", "new", "ok", True))
    assert set(one_run(df)["run_id"]) == {"old"}
    assert set(one_run(df, off_device={"flashinfer-train"})["run_id"]) == {"new"}
    # a backend that may run here is still wanted: a newer run without it does not stand for the answer
    assert set(one_run(df, off_device={"flash_qla"})["run_id"]) == {"old"}
    assert set(one_run(df.iloc[[0, 1, 2, 3]], off_device={"flashinfer-train"})["run_id"]) == {"old"}
