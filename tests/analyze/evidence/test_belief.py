"""What a view may believe (analyze/evidence/belief.py): one correctness rule and one rule for impossible
times, the same in show, advise and the serving page."""

from __future__ import annotations

import json
import math
import re

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import serving_rows as sr
from qlabench.analyze.advise import advise
from qlabench.analyze.answer import make_question
from qlabench.analyze.serving import build_serving
from qlabench.cli import app
from qlabench.store.files import write_rows

H = dict(h_qk=2, h_v=8, K=128, V=128, dtype="bfloat16", model="qwen3.5-397b", tp=8, layout="varlen", batch=1,
         seqlens=(32768,), num_seqs=1, total_tokens=32768, timer="graph", rel_noise=0.003,
         oracle="naive-chunk float32 @32768 tokens", check_tokens=32768, err_o=0.002,
         flash_qla_version="0.1.3", fla_version="0.6.0")


def prefill(make_row, backend, ms, **kw):
    return make_row(**{**H, "backend": backend, "median_ms": ms, **kw})


def edit(path, backend, column, value):
    """Rewrite one column of a backend's rows in a result file, as a hand edit would (a ResultRow refuses
    an ok row without a finite time, a file does not)."""
    t = pq.read_table(path)
    col = [value if b == backend else v for b, v in zip(t.column("backend").to_pylist(), t.column(column).to_pylist())]
    i = t.column_names.index(column)
    pq.write_table(t.set_column(i, t.schema.field(i), pa.array(col, t.schema.field(i).type)), path)


def ask(tmp_path, rows, stored=None):
    write_rows(tmp_path / "r.parquet", rows)
    if stored is not None:
        edit(tmp_path / "r.parquet", "flash_qla", "median_ms", stored)
    q = make_question("qwen3.5-397b", 8, "prefill", "32768", None, "fla")
    return advise(q, [tmp_path / "r.parquet"])


def test_advise_never_recommends_a_row_over_its_tolerance_that_show_marks(tmp_path, make_row):
    # bf16 err_o tolerance 0.02: 5.0 is 250x it, while the row still says ok.
    rows = [prefill(make_row, "fla", 0.9), prefill(make_row, "flash_qla", 0.4, err_o=5.0)]
    c = ask(tmp_path, rows).cases[0]
    assert c.fastest.backend == "fla"
    bad = next(e for e in c.entries if e.backend == "flash_qla")
    assert bad.status == "incorrect" and bad.time_ms is None and "250x its tolerance" in bad.reason
    shown = CliRunner().invoke(app, ["show", str(tmp_path / "r.parquet"), "--baseline", "fla", "--no-other-evidence",
                                     "--format", "markdown"])
    assert shown.exit_code == 0, shown.output
    assert "(2.25x)" not in shown.output and "✗ o 2.5e+02x tol" in shown.output


@pytest.mark.parametrize("stored", [0.0, -1.0, math.nan])
def test_advise_ranks_no_impossible_time_and_its_json_holds_no_nan(tmp_path, make_row, stored):
    rows = [prefill(make_row, "fla", 0.9), prefill(make_row, "flash_qla", 0.4)]
    c = ask(tmp_path, rows, stored).cases[0]
    assert c.fastest.backend == "fla" and c.fastest.speedup == pytest.approx(1.0)
    bad = next(e for e in c.entries if e.backend == "flash_qla")
    assert bad.status == "error" and bad.time_ms is None and "not a time" in bad.reason
    r = CliRunner().invoke(app, ["advise", str(tmp_path / "r.parquet"), "--model", "qwen3.5-397b", "--tp", "8",
                                 "--seqlens", "32768", "--format", "json"])
    assert r.exit_code == 0, r.output
    json.loads(r.output, parse_constant=lambda c: pytest.fail(f"{c} in advise's JSON"))


def test_a_stored_median_that_is_not_the_median_of_its_samples_is_not_believed(tmp_path, make_row):
    # An edit to 1e-9 ms would print a 9e8x speedup; the row's own samples say 0.4 ms.
    rows = [prefill(make_row, "fla", 0.9), prefill(make_row, "flash_qla", 1e-9, samples_ms=(0.4, 0.41, 0.39))]
    c = ask(tmp_path, rows).cases[0]
    assert c.fastest.backend == "fla"
    bad = next(e for e in c.entries if e.backend == "flash_qla")
    assert bad.status == "error" and "not the median of its own 3 samples" in bad.reason


def test_show_prints_no_time_and_no_tie_for_an_impossible_one(tmp_path, make_row):
    write_rows(tmp_path / "r.parquet", [prefill(make_row, "fla", 0.9), prefill(make_row, "flash_qla", 0.4)])
    edit(tmp_path / "r.parquet", "flash_qla", "median_ms", -1.0)
    r = CliRunner().invoke(app, ["show", str(tmp_path / "r.parquet"), "--baseline", "fla", "--no-other-evidence",
                                 "--format", "csv"])
    assert r.exit_code == 0, r.output
    assert "-1.0" not in r.output and "error" in r.output


def test_a_serving_row_edited_faster_does_not_win_at_a_share_its_bytes_deny():
    # FlashInfer's row at batch 256 edited to 0.1 of fla's time with its stored hbm_frac edited to 22%:
    # its bytes and the recorded peaks say it would run far above the limit.
    df = sr.rows()
    at = (df["backend"] == "flashinfer-decode-pt") & (df["batch"] == 256) & (df["mode"] == "decode")
    assert at.sum() == 1
    ms = sr.fla_ms(256) / 10
    df.loc[at, "median_ms"] = ms
    df.loc[at, "samples_ms"] = pd.Series([(ms,)], index=df.index[at])
    df.loc[at, "hbm_frac"] = 0.22
    s = build_serving(df)
    w = s.winners[(s.winners["group"] == "qwen3.5-397b TP8 (h2/8) · T=1 · state float32")].set_index("batch")
    assert w.loc[256, "winner"] == "fla-recurrent [kv]"
    over = s.over_peak.set_index("batch")
    assert over.loc[256, "pct_hbm"] > 100


@pytest.mark.parametrize("backend, ms, why", [
    ("flash_qla", 2.4e-7, "faster than the device allows"),  # 32768 tokens in a quarter of a nanosecond
    ("flash_qla", 1e29, "over an hour for one call"),
])
def test_a_time_the_device_cannot_run_is_not_believed_nor_ranked(tmp_path, make_row, backend, ms, why):
    # the row is self-consistent (its median is its samples'), on an H200: only physics refuses it
    rows = [prefill(make_row, "fla", 0.9, device="NVIDIA H200"), prefill(make_row, backend, ms, device="NVIDIA H200")]
    c = ask(tmp_path, rows).cases[0]
    ranked = c.best or c.provisional  # the other candidates have no row here: a provisional answer at best
    assert ranked.backend == "fla" and ranked.speedup == pytest.approx(1.0)
    bad = next(e for e in c.entries if e.backend == backend)
    assert bad.status == "error" and bad.time_ms is None and why in bad.reason
    shown = CliRunner().invoke(app, ["show", str(tmp_path / "r.parquet"), "--baseline", "fla", "--no-other-evidence",
                                     "--format", "markdown"])
    assert shown.exit_code == 0, shown.output
    # shown as what it is, never timed
    assert re.search(r"\| 0\.900 \(1\.00x\) [^|]*\| error \|", shown.output), shown.output


def test_an_ok_row_carrying_an_error_or_no_check_is_not_believed(make_row):
    from qlabench.analyze.evidence import believed

    rows = pd.DataFrame([prefill(make_row, "fla", 0.9).as_dict(),
                         {**prefill(make_row, "flash_qla", 0.4).as_dict(), "reason": "CUDA error: an illegal memory access"},
                         prefill(make_row, "flashinfer", 0.5, oracle=None, err_o=None).as_dict(),
                         prefill(make_row, "flash_qla-nocp", 0.5, err_o=math.nan).as_dict()])
    out = believed(rows).set_index("backend")
    assert out.at["fla", "status"] == "ok" and pd.isna(out.at["fla", "reason"])
    assert out.at["flash_qla", "status"] == "error" and "illegal memory access" in out.at["flash_qla", "reason"]
    for b in ("flashinfer", "flash_qla-nocp"):
        assert out.at[b, "status"] == "error" and out.at[b, "reason"].startswith("unverified"), b
