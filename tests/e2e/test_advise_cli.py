"""`qlabench advise` as a user runs it: the README's question answered from the committed evidence, its numbers
the ones `show` prints for the same rows, and a question the evidence cannot answer gets a suite, not a guess."""

from __future__ import annotations

import io
import json
import tomllib
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.core.spec import load_suite

REPO = Path(__file__).resolve().parents[2]
STUDY = REPO / "results" / "h200-study" / "flashqla-study"


def cli(*args, env=None):
    return CliRunner().invoke(app, [str(a) for a in args], env=env)


def test_the_readme_question_from_committed_evidence_matches_show(monkeypatch):
    monkeypatch.chdir(REPO)
    r = cli("advise", "--model", "qwen3.5-397b", "--tp", "8", "--workload", "prefill", "--seqlens", "32768,4x8192",
            "--format", "json")
    assert r.exit_code == 0, r.output
    ans = json.loads(r.output)
    assert [c["case"] for c in ans["cases"]] == ["32768", "4x8192"]
    shown = cli("show", STUDY, "--model", "qwen3.5-397b", "--tp", "8", "--gate", "fq", "--format", "csv")
    assert shown.exit_code == 0, shown.output
    table = pd.read_csv(io.StringIO(shown.output))
    for case in ans["cases"]:
        row = table[(table["mode"] == "fwd") & (table["sequences"] == case["case"].replace("4x8192", "8192+8192+8192+8192"))]
        assert len(row) == 1
        best = case["entries"][0]
        assert best["status"] == "ok" and best["backend"] == case["recommended"]
        # The study folder holds FlashQLA 0.1.3 only: advise's time is the one `show` prints for it.
        assert abs(best["time_ms"] - float(row[best["backend"]].iloc[0])) < 1e-9
        assert all(e["time_ms"] is None for e in case["entries"] if e["status"] != "ok")


def test_a_question_without_rows_gets_its_missing_points_and_a_suite(monkeypatch, tmp_path):
    monkeypatch.chdir(REPO)
    out = tmp_path / "advise.toml"
    r = cli("advise", "--model", "qwen3.5-27b", "--tp", "2", "--seqlens", "12345", "--suite-out", out)
    assert r.exit_code == 0, r.output
    assert "no backend has a correct time here" in r.output and "missing: flash_qla" in r.output
    suite = load_suite(str(out))
    assert {p.backend for p in suite.points} == {"flash_qla", "flash_qla-nocp", "flash_qla-forcecp", "fla", "flashinfer"}
    assert {(p.h_qk, p.h_v, p.seqlens) for p in suite.points} == {(8, 24, (12345,))}
    assert tomllib.loads(out.read_text())["device"] == "cuda"


def test_decode_and_bad_questions_are_one_line_errors(monkeypatch):
    monkeypatch.chdir(REPO)
    for args in (["--workload", "decode"], ["--tp", "3"], ["--gate", "zero=7"], ["--format", "yaml"]):
        r = cli("advise", "--model", "qwen3.5-397b", "--seqlens", "32768", *args)
        assert r.exit_code == 2, (args, r.output)
        if args[0] == "--workload":  # points to where decode is answered
            assert "report --serving" in " ".join(r.output.split())
