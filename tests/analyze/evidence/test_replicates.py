"""A replicated run's point as one row (analyze/evidence/replicates.py): the median of its replicates' times, their
spread as noise, a failed or unbelievable replicate as the row; and every view that keeps one row per point
(newest_per_point, show) reads it, so show prints the time advise ranks."""

from __future__ import annotations

import statistics

import pandas as pd
import pytest

from qlabench.analyze.evidence import fold_replicates, newest_per_point
from qlabench.analyze.evidence.replicates import REPLICATES


def frame(rows) -> pd.DataFrame:
    return pd.DataFrame([r.as_dict() for r in rows])


def rep(make_row, k, ms, *, run="run-1", at=None, **kw):
    """Replicate k of a run: samples around `ms` whose median is `ms`, timestamped in replicate order."""
    return make_row(run_id=run, replicate=k, median_ms=ms, samples_ms=(ms * 0.99, ms, ms * 1.01), rel_noise=0.01,
                    timestamp=at or f"2025-01-01T00:0{k}:00+00:00", **kw)


def test_two_replicates_are_one_row_at_their_median_with_their_spread_as_noise(make_row):
    rows = frame([rep(make_row, 0, 1.0, tflops=10.0, noise_target_met=True),
                  rep(make_row, 1, 1.2, tflops=10.0 / 1.2, noise_target_met=True)])
    out = fold_replicates(rows)
    assert len(out) == 1
    r = out.iloc[0]
    assert r["median_ms"] == pytest.approx(1.1)
    assert r["rel_noise"] == pytest.approx(0.2 / 1.1)  # the spread between processes, above each one's 1%
    assert r[REPLICATES] == 2 and pd.isna(r["replicate"])
    assert r["tflops"] == pytest.approx(10.0 / 1.1)  # the rate follows the folded time
    assert list(r["samples_ms"]) == [] and r["n_samples"] == 6
    assert r["status"] == "ok"


def test_replicates_that_agree_keep_their_own_noise(make_row):
    out = fold_replicates(frame([rep(make_row, k, 1.0 + k * 0.001) for k in range(3)]))
    assert out.iloc[0]["median_ms"] == pytest.approx(1.001)
    assert out.iloc[0]["rel_noise"] == pytest.approx(0.01)  # the replicates' own noise is the larger


def test_a_failed_replicate_is_the_point_row(make_row):
    bad = make_row(run_id="run-1", replicate=1, status="error", reason="CUDA error: out of memory",
                   timestamp="2025-01-01T00:01:00+00:00")
    out = fold_replicates(frame([rep(make_row, 0, 1.0), bad, rep(make_row, 2, 1.1)]))
    assert len(out) == 1
    assert out.iloc[0]["status"] == "error" and out.iloc[0]["reason"] == "CUDA error: out of memory"
    assert out.iloc[0][REPLICATES] == 3


def test_a_replicate_whose_time_is_not_its_samples_median_is_not_folded_into_a_time(make_row):
    edited = rep(make_row, 1, 1.0).as_dict() | {"median_ms": 0.5}  # edited after it was written
    rows = pd.concat([frame([rep(make_row, 0, 1.0)]), pd.DataFrame([edited])], ignore_index=True)
    out = fold_replicates(rows)
    assert out.iloc[0]["status"] == "error"
    assert "not the median of its own 3 samples" in out.iloc[0]["reason"]


def test_rows_without_replicates_pass_unchanged(make_row):
    rows = frame([make_row(backend="naive-chunk"), make_row(backend="naive-recurrent")])
    out = fold_replicates(rows)
    assert out is rows and REPLICATES not in out


def test_replicates_of_two_runs_or_two_gpu_models_are_never_one_row(make_row):
    rows = frame([rep(make_row, 0, 1.0), rep(make_row, 1, 1.2), rep(make_row, 0, 3.0, run="run-2"),
                  rep(make_row, 1, 3.2, run="run-2"), rep(make_row, 0, 5.0, device="NVIDIA H200"),
                  rep(make_row, 1, 5.2, device="NVIDIA H200")])
    out = fold_replicates(rows)
    assert sorted(out["median_ms"]) == pytest.approx([1.1, 3.1, 5.1])
    assert (out[REPLICATES] == 2).all()


def test_newest_per_point_folds_the_newest_run_only(make_row):
    old = [rep(make_row, k, 9.0, run="old", at=f"2024-06-01T00:0{k}:00+00:00") for k in range(2)]
    new = [rep(make_row, k, 1.0 + 0.2 * k, run="new") for k in range(2)]
    out = newest_per_point(frame(old + new))
    assert len(out) == 1 and out.iloc[0]["run_id"] == "new"
    assert out.iloc[0]["median_ms"] == pytest.approx(1.1)
    # a newer run of one replicate replaces the folded one as it is
    newer = make_row(run_id="newest", median_ms=2.0, timestamp="2026-01-01T00:00:00+00:00")
    out = newest_per_point(frame(old + new + [newer]))
    assert len(out) == 1 and out.iloc[0]["median_ms"] == 2.0


def test_show_prints_the_median_of_a_run_s_replicates(make_row, tmp_path):
    from qlabench.analyze.show.view import show_rows
    from qlabench.store.files import write_rows

    times = {"naive-chunk": (1.0, 1.3), "naive-recurrent": (2.0, 2.1)}
    rows = [rep(make_row, k, ms, backend=b) for b, pair in times.items() for k, ms in enumerate(pair)]
    path = write_rows(tmp_path / "run-1.parquet", rows)
    for all_runs in (False, True):
        shown = show_rows([path], baseline="naive-recurrent", all_runs=all_runs)
        (line,) = shown.table.to_dict("records")
        assert line["naive-chunk"] == pytest.approx(statistics.median(times["naive-chunk"]))
        assert line["naive-recurrent"] == pytest.approx(2.05)
        assert any("each time the median of 2 replicates" in r for r in shown.runs)
