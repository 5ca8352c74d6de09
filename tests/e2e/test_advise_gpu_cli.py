"""`qlabench advise --gpu NAME` on the committed evidence (H200 rows only): a question about a card qlabench never
ran on names it, says nothing was measured there, and prints FlashQLA's figures for that card marked as
published, not measured; the default GPU is this machine's where CUDA is present."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from qlabench.analyze.data.published_tables import published_table, read_published_csv
from qlabench.cli import app

REPO = Path(__file__).resolve().parents[2]
QUESTION = ["advise", "--model", "qwen3.5-397b", "--tp", "8", "--seqlens", "32768"]


def cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def published_32768(gpu: str) -> dict:
    pub = read_published_csv(published_table(gpu).file)
    (row,) = pub[(pub["mode"] == "fwd") & (pub["h_qk"] == 2) & (pub["h_v"] == 8) & (pub["seqlens"] == "32768")].to_dict(
        "records")
    return row


def test_rtx_5090_gets_flashqlas_published_figures_marked_not_measured(monkeypatch):
    monkeypatch.chdir(REPO)
    r = cli(*QUESTION, "--gpu", "RTX 5090")
    assert r.exit_code == 0, r.output
    out = " ".join(r.stdout.split())  # rich wraps long lines
    assert "RTX 5090 (--gpu): qlabench measured nothing on this GPU model (no row of it in the current evidence)" in out
    t = published_table("RTX 5090")
    assert f"published by FlashQLA, not measured: FlashQLA's table for {t.gpu}, measured with {t.stack_text}" in out
    row = published_32768("RTX 5090")
    assert (f"32768 [published by FlashQLA, not measured]: forward at h 2/8 ({row['model_config']}), 32768: "
            f"flash_qla {row['flash_qla_ms']:.3f} ms, flashinfer {row['flashinfer_ms']:.3f} ms, "
            f"fla {row['fla_ms']:.3f} ms") in out
    assert "benchmark_results_5090.txt" in out and "use " not in out  # nothing is recommended from published rows


def test_the_json_answer_holds_the_published_section_apart(monkeypatch):
    monkeypatch.chdir(REPO)
    r = cli(*QUESTION, "--gpu", "GB200", "--format", "json")
    assert r.exit_code == 0, r.output
    ans = json.loads(r.stdout)
    assert ans["question"]["gpu"] == "GB200" and ans["devices"] == [] and not ans["cases"][0]["entries"]
    pub = ans["published"]
    assert pub["published_by"] == "FlashQLA" and pub["measured_by_qlabench"] is False and pub["measured_nothing"]
    assert pub["table"]["gpu"] == "NVIDIA GB200" and pub["table"]["source"].startswith("QwenLM/FlashQLA")
    (row,) = pub["cases"][0]["rows"]
    assert row["published_ms"]["fla"] == published_32768("GB200")["fla_ms"] and row["exact"]


def test_the_default_gpu_is_this_machines(monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.setattr("qlabench.measure.env.local_gpu", lambda: "NVIDIA GeForce RTX 5090")
    r = cli(*QUESTION, "--format", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["question"]["gpu"] == "NVIDIA GeForce RTX 5090"
    monkeypatch.setattr("qlabench.measure.env.local_gpu", lambda: None)  # no CUDA here: every GPU of the evidence
    ans = json.loads(cli(*QUESTION, "--format", "json").stdout)
    # every GPU model of the committed evidence (the H200's, and an H100's training rows since 2026-12-05)
    assert ans["question"]["gpu"] is None and ans["published"] is None and "NVIDIA H200" in ans["devices"]


def test_the_gpu_of_the_evidence_is_answered_from_its_rows(monkeypatch):
    monkeypatch.chdir(REPO)
    ans = json.loads(cli(*QUESTION, "--gpu", "H200", "--format", "json").stdout)
    assert ans["published"] is None and ans["cases"][0]["entries"] and ans["cases"][0]["device"] == "NVIDIA H200"


def test_no_local_gpu_where_cuda_shows_none(monkeypatch):
    from qlabench.measure.env import local_gpu

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert local_gpu() is None
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "-1")
    assert local_gpu() is None
