"""advise's first-call column: each ranked backend's cold and warm first calls from `qlabench cold-start`'s
records, found through results/catalog.toml (kind "cold-start") or given; "not measured" without them."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from qlabench.analyze.answer import answer_question, make_question
from qlabench.analyze.answer.first_call import NOT_MEASURED, first_call_label, load_cold_start
from qlabench.cli import app
from qlabench.core.spec import parse_suite
from qlabench.store.catalog import load_catalog
from qlabench.store.files import write_rows
from qlabench.workflows.cold_start import RECORDS, run_cold_start

H = dict(h_qk=2, h_v=8, K=128, V=128, dtype="bfloat16", model="qwen3.5-397b", tp=8, layout="varlen", batch=1,
         seqlens=(32768,), num_seqs=1, total_tokens=32768, timer="graph", rel_noise=0.003, run_id="r1",
         timestamp="2026-01-01T00:00:00+00:00", flash_qla_version="0.1.3", fla_version="0.6.0")
POINT = "flash_qla fwd qwen3.5-397b TP8 (h2/8) 32768 bfloat16 gate=flashqla"


def record(backend, phase, s, *, point=POINT, mode="fwd", status="ok", run_id="20261202T100000Z-aaaaaa"):
    """A record as workflows/cold_start.py writes it (its keys, in its order)."""
    return {"backend": backend, "mode": mode, "point": point.replace("flash_qla", backend, 1), "phase": phase,
            "first_calls_s": s if status == "ok" else None, "status": status,
            "reason": None if status == "ok" else "timed out", "cache_mib": 12.5, "device": "NVIDIA H200",
            "run_id": run_id}


def folder(tmp_path, name, records):
    out = tmp_path / name
    out.mkdir(parents=True)
    (out / RECORDS).write_text(json.dumps(records, indent=1))
    return out


def ask(tmp_path, make_row, cold_start=None, backends=("fla", "flash_qla")):
    rows = [make_row(**H, backend=b, median_ms=ms, samples_ms=(ms,) * 3) for b, ms in zip(backends, (0.9, 0.4))]
    write_rows(tmp_path / "r.parquet", rows)
    q = make_question("qwen3.5-397b", 8, "prefill", "32768", None, "fla")
    return answer_question(q, [tmp_path / "r.parquet"], cold_start=cold_start)


def test_one_point_gives_its_cold_and_warm_first_calls_and_where_they_were_measured():
    recs = [record("flash_qla", "cold", 41.23), record("flash_qla", "warm", 2.104)]
    label = first_call_label(recs, "flash_qla", ("fwd",))
    assert label == "cold 41.2 s, warm 2.1 s at fwd qwen3.5-397b TP8 (h2/8) 32768 bfloat16 gate=flashqla"
    assert first_call_label(recs, "fla", ("fwd",)) == NOT_MEASURED
    assert first_call_label(recs, "flash_qla", ("decode",)) == NOT_MEASURED  # another mode's record is not this one


def test_several_points_give_a_range_and_a_failed_phase_its_status_never_a_time():
    recs = [record("fla", "cold", 30.0), record("fla", "warm", 1.5),
            record("fla", "cold", 12.0, point=POINT + " x2"), record("fla", "warm", 0.0512, point=POINT + " x2"),
            record("flash_qla", "cold", None, status="error")]
    assert first_call_label(recs, "fla", ("fwd",)) == "cold 12-30 s, warm 0.0512-1.5 s over 2 points"
    assert first_call_label(recs, "flash_qla", ("fwd",)).startswith("cold error, warm not run at fwd")


def test_the_newest_run_of_a_point_counts_across_folders(tmp_path):
    old = folder(tmp_path, "old", [record("fla", "cold", 50.0, run_id="20261201T000000Z-a")])
    new = folder(tmp_path, "new", [record("fla", "cold", 20.0, run_id="20261202T000000Z-b")])
    cold = load_cold_start([new, old])
    assert first_call_label(cold.records, "fla", ("fwd",)).startswith("cold 20 s")


def test_advise_shows_each_ranked_backends_first_call_from_the_records_given(tmp_path, make_row):
    cold = folder(tmp_path, "cold", [record("flash_qla", "cold", 41.2), record("flash_qla", "warm", 2.1)])
    ans = ask(tmp_path, make_row, cold_start=[cold])
    by = {e.backend: e.first_call for e in ans.cases[0].entries}
    assert by["flash_qla"].startswith("cold 41.2 s, warm 2.1 s at fwd") and by["fla"] == NOT_MEASURED
    assert ans.first_call_sources == [str(cold)]
    assert {e["backend"]: e["first_call"] for e in ans.as_dict()["cases"][0]["entries"]} == by


def test_the_command_names_the_cold_start_folder_it_read(tmp_path, make_row, monkeypatch):
    results = tmp_path / "results"
    folder(results, "h200-cold-start", [record("fla", "cold", 33.0), record("fla", "warm", 1.0)])
    (results / "catalog.toml").write_text(
        'format = 1\n\n[[entry]]\npath = "h200-cold-start"\nkind = "cold-start"\nstatus = "current"\n'
        'date = 2026-12-02\nquestion = "first calls in a fresh process"\nstack = { fla = "0.6.0" }\n')
    monkeypatch.chdir(tmp_path)
    ask(tmp_path, make_row)  # writes r.parquet
    r = CliRunner().invoke(app, ["advise", "r.parquet", "--model", "qwen3.5-397b", "--tp", "8", "--seqlens", "32768"],
                           env={"COLUMNS": "250"})
    assert r.exit_code == 0, r.output
    assert f"from {results / 'h200-cold-start'}" in r.output and "cold 33 s, warm 1 s" in r.output


def test_advise_finds_the_cold_start_folder_through_the_catalog(tmp_path, make_row, monkeypatch):
    results = tmp_path / "results"
    folder(results, "h200-cold-start", [record("fla", "cold", 33.0), record("fla", "warm", 1.0)])
    (results / "catalog.toml").write_text(
        'format = 1\n\n[[entry]]\npath = "h200-cold-start"\nkind = "cold-start"\nstatus = "current"\n'
        'date = 2026-12-02\nquestion = "first calls in a fresh process"\nstack = { fla = "0.6.0" }\n')
    monkeypatch.chdir(tmp_path)  # ./results holds the catalog
    assert [e.path for e in load_catalog(results).current("cold-start")] == ["h200-cold-start"]
    ans = ask(tmp_path, make_row)
    by = {e.backend: e.first_call for e in ans.cases[0].entries}
    assert by["fla"].startswith("cold 33 s, warm 1 s") and by["flash_qla"] == NOT_MEASURED
    assert ans.first_call_sources == [str(results / "h200-cold-start")]


def test_without_cold_start_results_every_entry_says_not_measured_and_the_table_shows_the_column(tmp_path, make_row,
                                                                                                  monkeypatch):
    ans = ask(tmp_path, make_row, cold_start=[])
    assert {e.first_call for e in ans.cases[0].entries} == {NOT_MEASURED} and ans.first_call_sources == []
    # a results catalog with no cold-start entry (the checkout's has some now): ./results is read first
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "catalog.toml").write_text(
        'format = 1\n\n[[entry]]\npath = "timings"\nkind = "kernel-timings"\nstatus = "current"\n'
        'date = 2026-12-02\nquestion = "q"\nstack = { fla = "0.6.0" }\n')
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["advise", str(tmp_path / "r.parquet"), "--model", "qwen3.5-397b", "--tp", "8",
                                 "--seqlens", "32768"], env={"COLUMNS": "250"})
    assert r.exit_code == 0, r.output
    assert "first call" in r.output and "first call: not measured (no cold-start results" in r.output


@pytest.mark.parametrize("backend", ["naive-recurrent"])
def test_the_records_qlabench_cold_start_writes_are_what_advise_reads(tmp_path, make_row, backend):
    suite = parse_suite({"name": "cold-tiny", "device": "cpu",
                         "sweep": {"backends": [backend], "modes": ["fwd"], "varlen": [[64]],
                                   "heads": [{"model": "qwen3.5-397b", "tp": 8}], "K": 16, "V": 16,
                                   "dtype": "float32"},
                         "timing": {"timer": "wall", "warmup": 0, "min_samples": 2, "max_samples": 2}}, "c.toml")
    run_cold_start(suite, tmp_path / "cold")
    ans = ask(tmp_path, make_row, cold_start=[tmp_path / "cold"], backends=("fla", backend))
    label = {e.backend: e.first_call for e in ans.cases[0].entries}[backend]
    assert label.startswith("cold ") and ", warm " in label and " s at fwd qwen3.5-397b TP8 (h2/8) 64 " in label
