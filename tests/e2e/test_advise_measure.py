"""`advise --measure`: the rows the answer misses on this device measured in one command, then the answer from
them beside the evidence; nothing measured where nothing is missing; no GPU and rows missing is one clear line."""

from __future__ import annotations

import json

import pytest
from plugin_fixture import dist_info, on_path
from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.store.files import read_results

# A prefill candidate that runs on a CPU: the naive chunked form under a name of its own (as test_dummy_backend.py)
MODULE = '''
from qlabench.backends.naive import NaiveChunk
from qlabench.core.backend_decl import BackendDecl


class CpuGDN(NaiveChunk):
    """The naive chunked form under another name: a correct kernel of its own."""


DECL = BackendDecl("cpu-gdn", "CPU GDN, declared by a test", "cpu_gdn:CpuGDN", modes=frozenset({"fwd"}),
                   roles=frozenset({"prefill"}), call="cpu_gdn.run(q, k, v, g, beta)", compiles=False)
'''
ASK = ["advise", "--model", "qwen3.5-27b", "--tp", "4", "--seqlens", "64,2x32"]


@pytest.fixture(autouse=True)
def _forget_the_plugin():
    yield
    from qlabench.core.backend_decl import unregister

    unregister("cpu-gdn")


def cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "100"})


def test_measure_runs_what_is_missing_here_and_answers_from_it(tmp_path, monkeypatch):
    code = tmp_path / "code"
    code.mkdir()
    (code / "cpu_gdn.py").write_text(MODULE)
    on_path(monkeypatch, dist_info(tmp_path / "site", "cpu-gdn-dist", "1.0", {"cpu-gdn": "cpu_gdn:DECL"}), code)
    out = tmp_path / "r"
    r = cli(*ASK, "--measure", "--device", "cpu", "--out", out)
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    from qlabench.core.backend_decl import candidates

    every = len(candidates("prefill"))  # nothing of this model here: every candidate, the CPU's one among them
    assert f"measuring {2 * every} points missing on" in text and "estimate: " in text
    runs = list(out.glob("advise-qwen3.5-27b-tp4-prefill/*.parquet"))
    assert len(runs) == 1 and runs[0].with_suffix(".toml").is_file()  # the suite it ran, beside its rows
    rows = read_results([runs[0]])
    assert set(rows["backend"]) == set(candidates("prefill")) and len(rows) == 2 * every
    assert (rows.loc[rows["backend"] == "cpu-gdn", "status"] == "ok").all()  # the libraries: skipped, no CUDA
    assert "time " in text and "sampling" in text  # where the run's time went
    # the answer, after the run: the new rows ranked, the provisional winner the CPU candidate
    lines = r.output.splitlines()
    answer = [ln for ln in lines if ln.startswith("64 on ")]
    assert answer and "provisional, among those measured only: cpu-gdn, " in answer[0], r.output
    # and the same answer read back from the new run alone
    back = cli(*ASK, out, "--format", "json")
    cases = {c["case"]: c for c in json.loads(back.output)["cases"]}
    assert cases["64"]["provisional"] == "cpu-gdn"


def test_nothing_missing_on_a_host_without_a_gpu_measures_nothing(tmp_path, monkeypatch):
    from pathlib import Path

    repo = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
    monkeypatch.chdir(repo)
    r = cli("advise", "--model", "qwen3.5-397b", "--tp", "8", "--seqlens", "32768", "--measure", "--out", tmp_path)
    assert r.exit_code == 0, r.output
    assert r.output.startswith("nothing to measure: every candidate has a row for every case on NVIDIA H200")
    # the committed evidence's answer (a winner or, within the measured spread, a tie), and nothing written
    assert any(f"32768 on NVIDIA H200: {w}" in r.output for w in ("use ", "tie: ")), r.output
    assert not list(tmp_path.iterdir())


def test_rows_missing_and_no_gpu_is_one_line_that_says_how_to_go_on(tmp_path):
    r = cli(*ASK, "--measure", "--out", tmp_path)
    assert r.exit_code == 2 and "no GPU" not in r.output
    assert "measures on a CUDA GPU, and there is none here" in " ".join(r.output.split())
    assert not list(tmp_path.iterdir())  # nothing written
