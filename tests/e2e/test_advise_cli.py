"""`qlabench advise` as a user runs it: the README's question answered from the committed evidence, its numbers
the ones `show` prints for the same rows, and a question the evidence cannot answer gets a suite, not a guess."""

from __future__ import annotations

import io
import json
import statistics
import tomllib
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from qlabench.backends.registry import REGISTRY
from qlabench.cli import app
from qlabench.core.backend_decl import candidates
from qlabench.core.select import parse_sequences
from qlabench.core.spec import load_suite

REPO = Path(__file__).resolve().parents[2]


def cli(*args, env=None):
    return CliRunner().invoke(app, [str(a) for a in args], env=env)


def _run_file(run_id: str) -> Path:
    (f,) = (REPO / "results").rglob(f"{run_id}.parquet")
    return f


def _replicate_times(run_id: str, case: str, backend: str) -> list[float]:
    """The device times (graph) of one backend's rows of 397B TP8's forward at `case` ('32768', '4x8192') in the
    run's file, a row per replicate."""
    lengths = list(parse_sequences(case))
    df = pd.read_parquet(_run_file(run_id))
    df = df[(df["backend"] == backend) & (df["mode"] == "fwd") & (df["h_qk"] == 2) & (df["h_v"] == 8)
            & (df["status"] == "ok") & df["seqlens"].map(lambda s: [int(x) for x in s] == lengths)]
    assert len(df) >= 1
    return [float(x) for x in df["device_ms"]]


def test_the_readme_question_from_committed_evidence_matches_show(monkeypatch):
    monkeypatch.chdir(REPO)
    # in the graph regime: the time `show` prints is the timer's median, the device time (an eager time is a column)
    # on the H200, as the README asks it: the H100's rows answer the same cases apart
    r = cli("advise", "--model", "qwen3.5-397b", "--tp", "8", "--workload", "prefill", "--seqlens", "32768,4x8192",
            "--launch", "graph", "--gpu", "H200", "--format", "json")
    assert r.exit_code == 0, r.output
    ans = json.loads(r.output)
    assert ans["from_catalog"] and [c["case"] for c in ans["cases"]] == ["32768", "4x8192"]
    for case in ans["cases"]:
        best = case["entries"][0]
        assert best["status"] == "ok" and best["backend"] == (case["recommended"] or case["provisional"]) and len(best["runs"]) == 1
        # advise's time is the one `show` prints for the run it names
        shown = cli("show", _run_file(best["runs"][0]), "--model", "qwen3.5-397b", "--tp", "8", "--gate", "fq",
                    "--format", "csv", "--mode", "fwd")
        assert shown.exit_code == 0, shown.output
        table = pd.read_csv(io.StringIO(shown.output))
        row = table[table["sequences"] == (f"{case['case']} packed" if "x" in case["case"] else case["case"])]
        assert len(row) == 1
        # a run measured as replicates (each in fresh processes) is one row in both views: the median of its
        # replicates' times, which advise ranks and show prints
        reps = _replicate_times(best["runs"][0], case["case"], best["backend"])
        assert abs(best["time_ms"] - statistics.median(reps)) < 1e-9
        assert abs(float(row[best["backend"]].iloc[0]) - best["time_ms"]) < 1e-9
        assert all(e["time_ms"] is None for e in case["entries"] if e["status"] != "ok")


def test_397b_tp8_ranks_flashinfer_beside_flashqla_from_the_current_evidence(monkeypatch):
    monkeypatch.chdir(REPO)
    r = cli("advise", "--model", "qwen3.5-397b", "--tp", "8", "--seqlens", "32768,4x8192,8x1024", "--format", "json")
    assert r.exit_code == 0, r.output
    cases = {c["case"]: c for c in json.loads(r.output)["cases"]}
    assert set(cases) == {"32768", "4x8192", "8x1024"}
    for case in cases.values():
        ranked = [e["backend"] for e in case["entries"]]
        assert {"flash_qla", "fla"} <= set(ranked)
        best = case["entries"][0]
        assert best["call"] and best["call"].split("(")[0].endswith("chunk_gated_delta_rule")  # the call to make
    # FlashInfer's rows answer where they exist (0.7.4 in the current evidence): its variants ranked beside FlashQLA's
    assert {"flashinfer", "flashinfer-nocp"} <= {e["backend"] for e in cases["32768"]["entries"]}
    assert all(e["version"] == "0.7.4" for e in cases["32768"]["entries"] if e["backend"].startswith("flashinfer"))
    # where its own CP choice loses to use_cp=False, the answer says by how much, from the rows
    c = cases["8x1024"]
    t = {e["backend"]: e["time_ms"] for e in c["entries"] if e["status"] == "ok"}
    if t["flashinfer"] > t["flashinfer-nocp"] * 1.02:
        auto = [n for n in c["caveats"] if n.startswith("auto CP: flashinfer")]
        assert auto and f"{t['flashinfer'] / t['flashinfer-nocp']:.2f}x slower than flashinfer-nocp" in auto[0]
    # a hole in the evidence is named, with the suite that fills it
    assert "flashinfer" in cases["4x8192"]["missing"] or "flashinfer" in {e["backend"] for e in cases["4x8192"]["entries"]}


def test_the_table_says_which_run_each_row_is_from(monkeypatch):
    monkeypatch.chdir(REPO)
    r = cli("advise", "--model", "qwen3.5-397b", "--tp", "8", "--seqlens", "8x1024")
    assert r.exit_code == 0, r.output
    out = " ".join(r.output.split())
    assert "runs: A = " in out and "call: " in out


def test_a_question_without_rows_gets_its_missing_points_and_a_suite(monkeypatch, tmp_path):
    monkeypatch.chdir(REPO)
    out = tmp_path / "advise.toml"
    r = cli("advise", "--model", "qwen3.5-27b", "--tp", "2", "--seqlens", "12345", "--suite-out", out)
    assert r.exit_code == 0, r.output
    assert "no winner: flash_qla" in r.output and "nothing here has a correct time" in " ".join(r.output.split())
    suite = load_suite(str(out))
    assert {p.backend for p in suite.points} == {b for b in candidates("prefill") if b in REGISTRY}
    assert {(p.h_qk, p.h_v, p.seqlens) for p in suite.points} == {(8, 24, (12345,))}
    assert tomllib.loads(out.read_text())["device"] == "cuda"


def test_decode_and_bad_questions_are_one_line_errors(monkeypatch):
    monkeypatch.chdir(REPO)
    for args in (["--workload", "decode"], ["--tp", "3"], ["--gate", "zero=7"], ["--format", "yaml"]):
        r = cli("advise", "--model", "qwen3.5-397b", "--seqlens", "32768", *args)
        assert r.exit_code == 2, (args, r.output)
        if args[0] == "--workload":  # points to where decode is answered
            assert "report --serving" in " ".join(r.output.split())


def test_suite_out_never_overwrites_silently_and_never_a_results_file(monkeypatch, tmp_path):
    monkeypatch.chdir(REPO)
    ask = ["advise", "--model", "qwen3.5-27b", "--tp", "2", "--seqlens", "12345", "--suite-out"]
    mine = tmp_path / "notes.toml"
    mine.write_text("mine\n")
    r = cli(*ask, mine)
    assert r.exit_code == 2 and "exists; pass --force" in " ".join(r.output.split())
    assert mine.read_text() == "mine\n"
    assert cli(*ask, mine, "--force").exit_code == 0 and load_suite(str(mine)).points
    results = tmp_path / "run.parquet"
    results.write_bytes(_run_file("20261201T162703Z-4e8e77").read_bytes())
    before = results.read_bytes()
    for extra in ((), ("--force",)):
        r = cli(*ask, results, *extra)
        assert r.exit_code == 2 and "is a results file" in " ".join(r.output.split())
    assert results.read_bytes() == before


def test_the_suite_written_reads_back_whatever_the_current_backend_or_gate_file_is_called(monkeypatch, tmp_path):
    monkeypatch.chdir(REPO)
    gate = tmp_path / "weird\nname = 1.toml"
    gate.write_text("gate_zero_frac = 0.5\ngate_scale = 8\n")
    out = tmp_path / "s.toml"
    r = cli("advise", "--model", "qwen3.5-27b", "--tp", "2", "--seqlens", "12345", "--current", 'x"y',
            "--gate", gate, "--suite-out", out)
    assert r.exit_code == 0, r.output
    text = out.read_text()
    data = tomllib.loads(text)
    assert data["baseline"] == 'x"y' and "name" in data and data["sweep"]["gate_zero_frac"] == 0.5
    assert all(line.startswith("#") for line in text.splitlines()[:3])  # the name's newline opened no line


# Runs advise as `qlabench advise` does, then says on stderr whether torch or a GPU library was loaded.
_NO_GPU_LIBRARIES = """
import sys
from qlabench.cli import main
sys.argv = ["qlabench", *sys.argv[1:]]
try:
    main()
except SystemExit as e:
    assert not e.code, e.code
loaded = sorted(m for m in ("torch", "triton", "flash_qla", "fla", "flashinfer") if m in sys.modules)
print("loaded:", ",".join(loaded) or "none", file=sys.stderr)
"""


def test_advise_answers_without_importing_torch_or_a_gpu_library():
    # The backends' declared facts (their calls, which autotune) come from core's table: the answer path needs
    # no torch, which alone took longer to import than the whole answer takes.
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", _NO_GPU_LIBRARIES, "advise", "--model", "qwen3.5-397b", "--tp", "8",
                        "--seqlens", "32768,4x8192,8x1024", "--format", "json"],
                       cwd=REPO, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    cases = json.loads(r.stdout)["cases"]
    assert any(e["call"] for c in cases for e in c["entries"])  # the calls were still told
    assert r.stderr.strip().splitlines()[-1] == "loaded: none", r.stderr


def test_show_prints_each_rows_eager_time_when_asked_and_counts_the_launch_bound(monkeypatch):
    monkeypatch.chdir(REPO)
    run = _run_file("20261204T172650Z-a81728")
    shown = cli("show", run, "--mode", "fwd", "--time", "eager", "--format", "csv")
    assert shown.exit_code == 0, shown.output
    table = pd.read_csv(io.StringIO(shown.output))
    rows = pd.read_parquet(run)
    want = rows[(rows["backend"] == "flash_qla") & (rows["mode"] == "fwd") & (rows["total_tokens"] == 8192)]
    got = table[table["sequences"] == "8x1024 packed"]["flash_qla"].iloc[0]
    assert abs(float(str(got).split()[0]) - want.sort_values("num_seqs")["eager_ms"].iloc[-1]) < 1e-3
    text = cli("show", run, "--mode", "fwd", "--no-other-evidence")
    assert "launch-bound: 27 of 27 rows that recorded both times" in " ".join(text.output.split())
    bad = cli("show", run, "--time", "wall")
    assert bad.exit_code == 2 and "--time must be one of timer, device, eager, host" in bad.output
