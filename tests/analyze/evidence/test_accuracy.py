"""Time and error together (analyze/evidence/accuracy.py): each row's check against the tolerance and its reference,
the numerics rows of another folder as evidence, and no speedup for a kernel over tolerance where it is the
faster side, in `show`'s table, the study's speedups and its page."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from typer.testing import CliRunner

from study_rows import row as study_row
from qlabench.analyze.evidence.accuracy import OVER, REDUCED, evidence_of, evidence_summary, row_check, speedup_allowed
from qlabench.analyze.kit.speedups import speedup_table
from qlabench.analyze.study import build_study
from qlabench.cli import app
from qlabench.store.files import write_rows

ORACLE_256 = "naive-recurrent float32 @256 tokens"


def frame(rows) -> pd.DataFrame:
    return pd.DataFrame([r.as_dict() for r in rows])


def timed(make_row, backend, ms, **kw):
    """A bf16 row of 4096 tokens, ok, checked against the oracle on 256 tokens (err_o 0.004: 0.2 of 0.02)."""
    fields = dict(backend=backend, median_ms=ms, dtype="bfloat16", seqlens=(4096,), total_tokens=4096,
                  oracle=ORACLE_256, check_tokens=256, err_o=0.004, err_ht=0.002)
    return make_row(**{**fields, **kw})


def fp64_row(make_row, backend, status="ok", **errors):
    """A numerics row of the same problem, checked against float64 at its size."""
    extra = {"reason": "vs fp64-full: dg rel err 0.07 > 0.035"} if status == "incorrect" else {}
    return make_row(backend=backend, mode="fwd", dtype="bfloat16", seqlens=(4096,), total_tokens=4096,
                    status=status, oracle="fp64-full float64 @4096 tokens", check_tokens=4096,
                    median_ms=1.0 if status == "ok" else None, **extra, **errors)


# -- one row's check -----------------------------------------------------------------------------------


def test_a_rows_check_is_its_worst_tensor_against_the_tolerance_and_its_reference(make_row):
    c = row_check(pd.Series(timed(make_row, "a", 1.0, err_dg=0.0175).as_dict()))
    assert c.tensor == "dg" and c.ratio == pytest.approx(0.5)  # bf16: dg 0.035, o 0.02 (0.004 -> 0.2)
    assert c.label == "oracle@256" and not c.full and c.tokens == 256 and not c.over
    full = row_check(pd.Series(fp64_row(make_row, "a", err_o=0.03, err_ht=0.001).as_dict()))
    assert full.label == "fp64@full" and full.fp64_full and full.over and full.ratio == pytest.approx(1.5)
    # full_size: the reduced oracle and naive-chunk in fp32 at the real size, both named.
    both = row_check(pd.Series(timed(make_row, "a", 1.0, oracle=ORACLE_256 + "; naive-chunk float32 @4096 tokens")
                               .as_dict()))
    assert both.label == "oracle@256+fp32-chunk@full" and both.full and not both.fp64_full
    assert row_check(pd.Series(make_row(backend="a", oracle=None).as_dict())) is None  # never checked: no evidence
    # the oracle variants of calls with other inputs (the gate outside; no final state) are the oracle in a mark
    for variant in ("naive-recurrent-gate-outside", "naive-recurrent-no-state"):
        c = row_check(pd.Series(timed(make_row, "a", 1.0, oracle=f"{variant} float32 @256 tokens").as_dict()))
        assert c.label == "oracle@256", variant
    # A NaN error reads back as a missing one (pandas), but its row is incorrect: over, whatever it recorded.
    nan = row_check(pd.Series(timed(make_row, "a", None, status="incorrect", err_ht=math.nan).as_dict()))
    assert nan.over and math.isinf(nan.ratio)


def test_the_faster_side_decides_whether_a_speedup_is_printed():
    assert speedup_allowed(2.0, backend_over=False, baseline_over=True)  # a correct kernel beat a wrong one
    assert not speedup_allowed(2.0, backend_over=True, baseline_over=False)
    assert not speedup_allowed(0.5, backend_over=False, baseline_over=True)  # the wrong baseline is faster
    assert speedup_allowed(0.5, backend_over=True, baseline_over=False)
    assert not speedup_allowed(None, False, False) and not speedup_allowed(math.nan, False, False)


# -- show's table -------------------------------------------------------------------------------------


@pytest.fixture
def timed_rows(make_row):
    return frame([timed(make_row, "base", 4.0), timed(make_row, "fast", 1.0), timed(make_row, "slow", 8.0)])


@pytest.fixture
def numerics(make_row):
    """fast is over tolerance at full size (dg at 2x); base inside it."""
    return frame([fp64_row(make_row, "fast", status="incorrect", err_o=0.004, err_dg=0.07),
                  fp64_row(make_row, "base", err_o=0.005, err_ht=0.004)])


def test_without_other_evidence_a_reduced_check_says_so(timed_rows):
    (rec,) = speedup_table(timed_rows, "base").to_dict("records")
    assert rec["fast x"] == 4.0 and rec["fast e"] == f"e0.20{REDUCED}" and rec["fast err"] == f"0.20 oracle@256 {REDUCED}"
    assert not rec["fast over"]
    line = evidence_summary(evidence_of(timed_rows))
    assert "0 against float64 at full size, 3 at a reduced size only" in line and "none over tolerance" in line


def test_a_kernel_over_tolerance_in_the_numerics_rows_gets_no_speedup(timed_rows, numerics):
    (rec,) = speedup_table(timed_rows, "base", numerics).to_dict("records")
    assert rec["fast"] == 1.0 and rec["fast x"] is None and rec["fast over"]
    assert rec["fast err"] == f"{OVER} dg 2x tol fp64@full" and rec["fast e"] == f"{OVER}dg 2"
    assert rec["slow x"] == 0.5  # slower than a correct baseline: printed
    assert rec["base err"] == "0.25 fp64@full"  # the full-size check is the one shown, not oracle@256
    line = evidence_summary(evidence_of(timed_rows, numerics))
    assert "2 against float64 at full size, 1 at a reduced size only" in line and f"{OVER} 1 over tolerance" in line


def test_a_speedup_over_a_wrong_baseline_is_kept_only_when_the_correct_side_is_faster(make_row):
    rows = frame([timed(make_row, "base", 2.0), timed(make_row, "fast", 1.0), timed(make_row, "slow", 4.0)])
    wrong_base = frame([fp64_row(make_row, "base", status="incorrect", err_o=0.05)])
    (rec,) = speedup_table(rows, "base", wrong_base).to_dict("records")
    assert rec["fast x"] == 2.0  # the faster side is correct
    assert rec["slow x"] is None and rec["base x"] is None  # the faster side (the baseline) is not


def test_numerics_rows_of_another_problem_are_no_evidence(timed_rows, make_row):
    other = frame([fp64_row(make_row, "fast", status="incorrect", err_o=0.05).__class__(
        **{**fp64_row(make_row, "fast", status="incorrect", err_o=0.05).as_dict(), "h_v": 8})])
    (rec,) = speedup_table(timed_rows, "base", other).to_dict("records")
    assert rec["fast x"] == 4.0 and not rec["fast over"]


def test_show_marks_the_kernel_and_prints_no_speedup_for_it(tmp_path, timed_rows, numerics, make_row):
    rows = [timed(make_row, b, ms) for b, ms in (("base", 4.0), ("fast", 1.0), ("slow", 8.0))]
    write_rows(tmp_path / "t" / "run.parquet", rows)
    write_rows(tmp_path / "n" / "run.parquet", [fp64_row(make_row, "fast", status="incorrect", err_dg=0.07)])
    plain = CliRunner().invoke(app, ["show", str(tmp_path / "t"), "--baseline", "base", "--no-other-evidence",
                                     "--format", "markdown"])
    assert plain.exit_code == 0, plain.output
    assert "(4.00x)" in plain.output and f"oracle@256 {REDUCED}" in plain.output
    assert "3 at a reduced size only" in plain.output
    r = CliRunner().invoke(app, ["show", str(tmp_path / "t"), "--baseline", "base", "--no-other-evidence",
                                 "--format", "markdown", "--numerics", str(tmp_path / "n")])
    assert r.exit_code == 0, r.output
    fast_cell = next(line for line in r.output.splitlines() if line.startswith("| fwd")).split("|")[-3]
    assert "(4.00x)" not in r.output and f"{OVER} dg 2x tol fp64@full" in fast_cell and "1.000" in fast_cell
    assert "(0.50x)" in r.output
    table = CliRunner().invoke(app, ["show", str(tmp_path / "t"), "--baseline", "base", "--no-other-evidence",
                                     "--numerics", str(tmp_path / "n")])
    assert table.exit_code == 0 and f"{OVER}dg 2" in table.output and "(4.00x)" not in table.output


# -- the study -----------------------------------------------------------------------------------------


def study_frame(pairs) -> pd.DataFrame:
    df = pd.DataFrame([r.as_dict() for r, _ in pairs])
    for axis in ("gate_zero_frac", "gate_scale"):
        df[axis] = pd.Series([g[axis] for _, g in pairs], dtype="float64")
    return df


def test_the_study_withholds_a_speedup_whose_faster_side_is_over_tolerance(tmp_path):
    s = (32768,)
    check = dict(oracle=ORACLE_256, check_tokens=256, err_o=0.004)
    rows = study_frame([study_row("flash_qla", "fwd", s, 2, 8, 0.4, **check),
                        study_row("fla", "fwd", s, 2, 8, 0.9, **check),
                        study_row("flashinfer", "fwd", s, 2, 8, 1.6, **check),
                        study_row("flash_qla", "bwd_train", s, 2, 8, 1.0, **check),
                        study_row("fla", "bwd_train", s, 2, 8, 2.0, **check)])
    plain = build_study(rows)
    assert set(plain.speedups.loc[plain.speedups["mode"] == "fwd", "speedup"].dropna().round(2)) == {2.25, 4.0}
    wrong = study_frame([study_row("flash_qla", "fwd", s, 2, 8, None, status="incorrect", reason="dg",
                                   oracle="fp64-full float64 @32768 tokens", check_tokens=32768, err_o=0.06,
                                   layout="dense"),
                         study_row("flash_qla", "bwd_train", s, 2, 8, None, status="incorrect", reason="dg",
                                   oracle="fp64-full float64 @32768 tokens", check_tokens=32768, err_dg=0.07)])
    st = build_study(rows, numerics=wrong)
    fwd = st.speedups[st.speedups["mode"] == "fwd"]
    assert fwd["speedup"].isna().all()  # flash_qla is the faster side of both, and over tolerance at full size
    assert sorted(fwd.loc[fwd["withheld"].notna(), "baseline"]) == ["fla", "flashinfer"]
    assert set(fwd["withheld"].dropna()) == {f"{OVER} o 3x tol fp64@full"}
    assert st.unpublished_modes()["bwd_train"].iloc[0]["speedup vs fla"] == f"{OVER} dg 2x tol fp64@full"
    wide = st.published_wide("fwd")
    assert wide["speedup vs fla"].iloc[0] == f"{OVER} o 3x tol fp64@full"  # the published row of 1x32768
    assert wide["speedup vs fla"].iloc[1:].isna().all()  # not measured
    from qlabench.analyze.study.page import render

    page = render(st, {})
    assert "## Correctness of the timed kernels" in page and "2 timed rows over tolerance" in page
    assert "speedups withheld" in page or "speedup withheld" in page
    assert "No timed row is over tolerance" in render(plain, {})
    assert "reduced size only" in render(plain, {})


def test_a_serving_row_is_read_against_its_state_dtype_and_an_exact_pool():
    """A bf16 pool's rows are held to bf16 tolerances, and err_pool (tolerance 0) reads 0 when exact, never a
    division by zero; a pool that moved is over tolerance."""
    from qlabench.analyze.evidence.accuracy import row_check

    base = {"oracle": "naive-recurrent float32 @64 tokens", "dtype": "float32", "state_dtype": "bfloat16",
            "status": "ok", "total_tokens": 64, "err_o": 1e-3, "err_ht": 2e-3, "err_pool": 0.0}
    c = row_check(base)
    assert c is not None and c.ratio < 1 and c.tensor == "ht"  # 2e-3 against bf16's 0.02, not fp32's 1e-4
    moved = row_check({**base, "err_pool": 1e-6})
    assert moved.ratio == float("inf") and moved.tensor == "pool"


def test_the_evidence_of_a_frame_reads_the_check_path_its_row_recorded(make_row):
    # evidence_of reads a few columns of each row: the traced paths of the check and the timed call
    # (extra_json's check_path) must be among them, or a reduced check of the timed path reads as any other
    import json

    row = timed(make_row, "fast", 1.0, extra_json=json.dumps({"check_path": {"checked": "cp", "timed": "cp"}}))
    (ev,) = evidence_of(frame([row]))
    assert ev.checks[0].same_path == "cp" and ev.checks[0] == row_check(pd.Series(row.as_dict()))


def test_numerics_rows_of_another_library_version_are_no_evidence(make_row):
    """FlashInfer 0.6.13's float64 checks (no CP) are no checks of a 0.7.2 row: another version is another kernel."""
    row = timed(make_row, "flashinfer", 0.5, flashinfer_version="0.7.2.post1")
    old = fp64_row(make_row, "flashinfer", flashinfer_version="0.6.13", err_o=0.001)
    (ev,) = evidence_of(frame([row]), frame([old]))
    assert len(ev.checks) == 1 and ev.reduced_only  # its own reduced check only
    same = fp64_row(make_row, "flashinfer", flashinfer_version="0.7.2.post1", err_o=0.001)
    (ev,) = evidence_of(frame([row]), frame([same]))
    assert len(ev.checks) == 2 and not ev.reduced_only
