"""One run read from two files (analyze/evidence/runs.py): identical rows count once, one folder's files
that disagree are refused, and one run id naming two runs in two folders is told apart."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from qlabench.analyze.advise import advise
from qlabench.analyze.answer import make_question
from qlabench.cli import app
from qlabench.store.files import write_rows

H = dict(h_qk=2, h_v=8, K=128, V=128, dtype="bfloat16", model="qwen3.5-397b", tp=8, layout="varlen", batch=1,
         seqlens=(32768,), num_seqs=1, total_tokens=32768, timer="graph", rel_noise=0.003, run_id="r1",
         flash_qla_version="0.1.3", fla_version="0.6.0")


def run_rows(make_row, fq_ms):
    return [make_row(**H, backend="fla", median_ms=0.9), make_row(**H, backend="flash_qla", median_ms=fq_ms)]


def question():
    return make_question("qwen3.5-397b", 8, "prefill", "32768", None, "fla")


def test_two_files_of_one_folder_that_disagree_on_a_run_are_refused(tmp_path, make_row):
    write_rows(tmp_path / "s" / "r1.parquet", run_rows(make_row, 0.4))
    write_rows(tmp_path / "s" / "r1-copy.parquet", run_rows(make_row, 1.5))  # an edited copy
    for args in (["show", str(tmp_path / "s")],
                 ["advise", str(tmp_path / "s"), "--model", "qwen3.5-397b", "--tp", "8", "--seqlens", "32768"]):
        r = CliRunner().invoke(app, args)
        assert r.exit_code == 2 and "run r1 is in 2 files that disagree" in r.output, r.output


def test_the_layer_refuses_and_names_the_files(tmp_path, make_row):
    from qlabench.analyze.evidence import read_evidence
    from qlabench.core.errors import EvidenceError

    write_rows(tmp_path / "s" / "r1.parquet", run_rows(make_row, 0.4))
    write_rows(tmp_path / "s" / "r1-copy.parquet", run_rows(make_row, 1.5))
    with pytest.raises(EvidenceError, match=r"disagree on 1 row.*r1-copy.parquet: ok 1.5 ms"):
        read_evidence([tmp_path / "s"])


def test_a_copy_of_a_run_counts_once_and_is_said(tmp_path, make_row):
    write_rows(tmp_path / "s" / "r1.parquet", run_rows(make_row, 0.4))
    write_rows(tmp_path / "s" / "r1-copy.parquet", run_rows(make_row, 0.4))
    ans = advise(question(), [tmp_path / "s"])
    fq = next(e for e in ans.cases[0].entries if e.backend == "flash_qla")
    assert fq.rows == 1 and len(ans.notes) == 1 and "run r1 is in 2 files with identical rows" in ans.notes[0]


def test_one_run_id_in_two_folders_is_two_runs_never_averaged(tmp_path, make_row):
    write_rows(tmp_path / "a" / "r1.parquet", run_rows(make_row, 0.4))
    write_rows(tmp_path / "b" / "r1.parquet", run_rows(make_row, 1.5))
    ans = advise(question(), [tmp_path / "a", tmp_path / "b"])
    fq = next(e for e in ans.cases[0].entries if e.backend == "flash_qla")
    # one run's time, not two runs' medians averaged into 1.15 ms; the other run is another measurement of the
    # same call, so the two runs' range is the entry's noise (analyze/answer/spread.py, between_processes)
    assert fq.rows == 1 and fq.time_ms in (0.4, 1.5) and fq.processes == 2 and fq.process_range == (0.4, 1.5)
    assert fq.rel_noise == pytest.approx(1.1 / 0.95)
    assert any("run id r1 names 2 different runs" in n for n in ans.notes)


def test_a_point_measured_again_under_the_same_run_id_counts_its_newest_row(tmp_path, make_row):
    write_rows(tmp_path / "s" / "r1.parquet", run_rows(make_row, 1.5))
    later = [make_row(**{**H, "timestamp": "2026-01-02T00:00:00+00:00"}, backend="flash_qla", median_ms=0.4)]
    write_rows(tmp_path / "s" / "r1-again.parquet", later)
    ans = advise(question(), [tmp_path / "s"])
    fq = next(e for e in ans.cases[0].entries if e.backend == "flash_qla")
    assert fq.rows == 1 and fq.time_ms == 0.4  # the newer row, never the mean of the two
    assert any("run r1 measured 1 point(s) again" in n for n in ans.notes)


def test_one_file_holding_a_row_twice_is_refused_or_counted_once(tmp_path, make_row):
    # A file holding one run's point twice with two times: show took one and advise averaged them.
    write_rows(tmp_path / "s" / "r1.parquet", run_rows(make_row, 0.4) + [make_row(**H, backend="flash_qla", median_ms=1.5)])
    for args in (["show", str(tmp_path / "s")],
                 ["advise", str(tmp_path / "s"), "--model", "qwen3.5-397b", "--tp", "8", "--seqlens", "32768"]):
        r = CliRunner().invoke(app, args)
        assert r.exit_code == 2 and "r1.parquet holds 1 row(s) of run r1 twice" in r.output, r.output
    # identical copies inside one file: one measurement
    write_rows(tmp_path / "t" / "r1.parquet", run_rows(make_row, 0.4) * 2)
    ans = advise(question(), [tmp_path / "t"])
    fq = next(e for e in ans.cases[0].entries if e.backend == "flash_qla")
    assert fq.time_ms == pytest.approx(0.4) and fq.rel_noise == pytest.approx(0.003)
    assert any("twice, identical: each counted once" in n for n in ans.notes)


def test_rounds_of_one_run_in_one_file_at_different_times_are_each_a_measurement(tmp_path, make_row):
    """A run written before rows recorded their replicate (an `ab` of several rounds, schema 3 and older) holds
    a point once per round, each at its own timestamp: rounds, read as they always were, never refused."""
    from qlabench.analyze.evidence import read_evidence

    rounds = [make_row(**{**H, "timestamp": f"2026-01-0{d}T00:00:00+00:00"}, backend="flash_qla", median_ms=ms)
              for d, ms in ((1, 0.40), (2, 0.41), (3, 0.39))]
    write_rows(tmp_path / "s" / "r1.parquet", rounds)
    ev = read_evidence([tmp_path / "s"], all_runs=True)
    assert sorted(ev.rows["median_ms"]) == [0.39, 0.40, 0.41] and not ev.notes
