"""compare_frames: a row the evidence layer does not believe is what it is, never a pass; nothing timed is not a pass."""

from __future__ import annotations

import pandas as pd
import pytest

from qlabench.analyze.compare import Verdict, compare_frames
from qlabench.core.errors import StoreError


def _side(make_row, run_id="r", reps=3, **changes):
    return pd.DataFrame([make_row(run_id=run_id, seed=s, replicate=r, **changes).as_dict()
                         for s in range(2) for r in range(reps)])


def _spoil(df: pd.DataFrame, column: str, value) -> pd.DataFrame:
    """One ok row's time replaced as a damaged or hand-edited file holds it (ResultRow would refuse it)."""
    df = df.copy()
    df[column] = df[column].astype(object)
    df.at[1, column] = value
    return df


BAD_TIMES = {
    "a NaN sample": ("samples_ms", (1.0, float("nan"), 1.2)),
    "a null sample": ("samples_ms", (1.0, None, 1.2)),
    "a NaN median and no samples": ("median_ms", float("nan")),
    "a null median and no samples": ("median_ms", None),
}


@pytest.mark.parametrize("side", ["base", "head"])
@pytest.mark.parametrize("case", sorted(BAD_TIMES))
def test_a_nan_or_null_time_is_reported_not_a_crash(make_row, side, case):
    # the evidence layer's rule (evidence/belief.py): the row is what it is, an error with its reason; a head
    # that lost its time fails the comparison, a base that has none compares nothing at that point
    column, value = BAD_TIMES[case]
    good = _side(make_row)
    bad = _spoil(good, column, value)
    if column == "median_ms":
        bad = _spoil(bad, "samples_ms", ())
    base, head = (bad, good) if side == "base" else (good, bad)
    c = compare_frames(base, head)
    p = next(p for p in c.pairs if p.verdict is Verdict.STATUS_CHANGED)
    assert "not believed" in p.reason and p.stats is None
    assert (p.base_status, p.head_status) == (("error", "ok") if side == "base" else ("ok", "error"))
    assert (c.failures == [p]) == (side == "head")


def test_a_nan_time_in_the_history_is_left_out(make_row):
    good = _side(make_row)
    c = compare_frames(good, good, history=_spoil(good, "samples_ms", (float("nan"),)))
    assert c.exit_code == 0


HEAD_SPOILS = {
    "err_o 1e9": ("err_o", 1e9, "incorrect"),
    "median 0": ("median_ms", 0.0, "error"),
    "median inf": ("median_ms", float("inf"), "error"),
    "median -1": ("median_ms", -1.0, "error"),
    "median 2.4e-7 ms at 8192 tokens": ("median_ms", 2.4e-7, "error"),
    "median 1e29 ms": ("median_ms", 1e29, "error"),
    "an ok row with a CUDA error": ("reason", "CUDA error: an illegal memory access was encountered", "error"),
    "no check": ("oracle", None, "error"),
}


@pytest.mark.parametrize("case", sorted(HEAD_SPOILS))
def test_a_head_row_that_is_not_believed_fails_the_comparison_and_shows_no_change(make_row, case):
    # every replicate of one point spoiled, as a hand edit or a broken run leaves a file; the samples stay
    # sound, so only the rule shows what the row is
    column, value, status = HEAD_SPOILS[case]
    big = dict(seqlens=(8192,), total_tokens=8192, h_qk=16, h_v=32, K=128, V=128, dtype="bfloat16",
               device="NVIDIA H200")
    base, head = _side(make_row, **big), _side(make_row, **big)
    head = head.astype({column: object}) if column in head else head
    for i in head.index[head["seed"] == 1]:
        head.at[i, column] = value
        if column == "median_ms":
            head.at[i, "samples_ms"] = (value,) * 3
    c = compare_frames(base, head)
    p = next(p for p in c.pairs if p.head_status != "ok")
    assert p.head_status == status and p.verdict is Verdict.STATUS_CHANGED and p.change is None
    assert c.failures == [p] and c.exit_code == 1


def test_one_impossible_replicate_is_not_outvoted(make_row):
    base, head = _side(make_row), _side(make_row)
    head = _spoil(head, "err_o", 1e9)  # replicate 1 of seed 0 only
    c = compare_frames(base, head)
    assert [p.head_status for p in c.failures] == ["incorrect"] and c.exit_code == 1


def test_nothing_timed_on_both_sides_is_not_a_pass(make_row):
    ok = _side(make_row, "ok")
    error = _side(make_row, "err", status="error", samples_ms=(), median_ms=None)
    skipped = _side(make_row, "sk", status="skipped", samples_ms=(), median_ms=None)
    c = compare_frames(error, ok)  # a baseline whose rows all failed: error -> ok fails nothing
    assert {p.verdict for p in c.pairs} == {Verdict.STATUS_CHANGED} and not c.failures
    assert c.exit_code == 2 and any("nothing was compared" in n for n in c.notes)
    assert compare_frames(skipped, skipped).exit_code == 2
    assert compare_frames(ok, error).exit_code == 1  # a failure stays a failure
    c = compare_frames(ok, ok)
    assert c.exit_code == 0 and not any("nothing was compared" in n for n in c.notes)


def test_a_kernel_that_vanishes_fails_the_gate_by_default(make_row):
    base = pd.concat([_side(make_row, backend="naive-chunk"), _side(make_row, backend="naive-recurrent")])
    head = pd.concat([_side(make_row, run_id="h", backend="naive-chunk"),
                      _side(make_row, run_id="h", backend="naive-recurrent", status="skipped",
                            reason="backend not available")])
    c = compare_frames(base, head)
    assert c.exit_code == 1 and {p.verdict for p in c.failures} == {Verdict.STATUS_CHANGED}
    gone = compare_frames(base, _side(make_row, run_id="h", backend="naive-chunk"))  # not in head at all
    assert gone.exit_code == 1 and {p.verdict for p in gone.failures} == {Verdict.MISSING}


def test_a_baseline_of_another_suite_is_refused(make_row):
    base, head = _side(make_row, suite="study"), _side(make_row, run_id="h", suite="smoke")
    with pytest.raises(StoreError, match="another suite"):
        compare_frames(base, head)
    assert compare_frames(base, head, allow_other_suite=True).timed


def test_backends_keeps_one_librarys_rows_on_both_sides_and_refuses_a_name_a_side_lacks(make_row, tmp_path):
    """A version A/B of one library against a base run that also holds another library's rows: --backends leaves the
    other rows out instead of counting them missing (the H200 serving comparison of FlashInfer 0.7.2 and 0.7.4)."""
    from qlabench.analyze.compare.comparison import compare_paths
    from qlabench.core.errors import ConfigError
    from qlabench.store.files import write_rows

    base = [make_row(run_id="b", seed=s, replicate=r, backend=b) for b in ("naive-chunk", "naive-recurrent")
            for s, r in ((0, 0), (1, 1), (2, 2))]
    head = [make_row(run_id="h", seed=s, replicate=r, backend="naive-chunk") for s, r in ((0, 0), (1, 1), (2, 2))]
    write_rows(tmp_path / "base.parquet", base)
    write_rows(tmp_path / "head.parquet", head)
    whole = compare_paths([tmp_path / "base.parquet"], [tmp_path / "head.parquet"])
    assert any(p.verdict == Verdict.MISSING for p in whole.pairs)
    one = compare_paths([tmp_path / "base.parquet"], [tmp_path / "head.parquet"], backends=["naive-chunk"])
    assert one.pairs and all(p.verdict != Verdict.MISSING for p in one.pairs)
    assert {p.backend for p in one.pairs} == {"naive-chunk"}
    with pytest.raises(ConfigError, match="no row of naive-recurrent in the head"):
        compare_paths([tmp_path / "base.parquet"], [tmp_path / "head.parquet"], backends=["naive-recurrent"])
