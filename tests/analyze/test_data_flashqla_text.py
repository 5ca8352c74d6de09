"""FlashQLA's benchmark output read into a published table (qlabench/analyze/data/flashqla_text.py), on an excerpt
of its GB200 file and of the benchmark script (tests/data/flashqla/), and the converter script end to end on a
repository made of them."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from qlabench.analyze.data.flashqla_text import parse_results, script_layouts, to_csv
from qlabench.core.errors import QlabenchError

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "flashqla"
RESULTS = (DATA / "benchmark_results_excerpt.txt").read_text()
SCRIPT = (DATA / "bench_script_excerpt.txt").read_text()


def printed_rows(section: str) -> list[list[str]]:
    """The excerpt's rows of one section, split into words, as a reader of the text sees them."""
    body = RESULTS.split(f">>> {section} BENCHMARKS", 1)[1].split("=====", 1)[0]
    return [s.split() for s in body.splitlines()[3:] if s.strip() and re.fullmatch(r"\d+\.\d+x", s.split()[-1])]


def test_the_script_defines_what_each_label_packs():
    layouts = script_layouts(SCRIPT)
    # '1xN' is one sequence of N, but 'NxA' is A sequences of N: only the script tells them apart
    assert layouts["1x32768"].seqlens == (32768,)
    assert layouts["8192x4"].seqlens == (8192,) * 4 and layouts["8192x4"].total_tokens == 32768
    assert layouts["28672+4096"].seqlens == (28672, 4096)
    assert layouts["8k_2seq"].seqlens == () and (layouts["8k_2seq"].num_seqs, layouts["8k_2seq"].total_tokens) == (2, 8192)
    with pytest.raises(QlabenchError, match="cannot read the sequence lengths"):
        script_layouts('FWD_SEQLEN_CONFIGS = [SeqLenConfig("x", make_lens())]')


def test_the_header_says_gpu_stack_and_timer():
    b = parse_results(RESULTS, script_layouts(SCRIPT))
    assert b.gpu == RESULTS.splitlines()[0].removeprefix("GPU: ")
    assert b.header == tuple(RESULTS.splitlines()[:5])
    line = RESULTS.splitlines()[4]
    assert b.libraries and all(f"{k}: {v}" in line for k, v in b.libraries.items())
    assert set(b.libraries) == {"torch", "fla", "flashinfer", "tilelang"}
    assert b.config["Backend"] == "cudagraph"


def test_forward_rows_carry_the_printed_times_and_the_scripts_lengths():
    b = parse_results(RESULTS, script_layouts(SCRIPT))
    fwd = [r for r in b.rows if r["mode"] == "fwd"]
    printed = printed_rows("FORWARD")
    assert len(fwd) == len(printed)
    for row, words in zip(fwd, printed):
        assert row["model_config"] == " ".join(words[:-8])
        assert (row["h_qk"], row["h_v"]) == (words[-7], words[-6])
        # the times exactly as printed, never through a float
        assert [row["flash_qla_ms"], row["flashinfer_ms"], row["fla_ms"]] == [w.removesuffix("ms") for w in words[-5:-2]]
    packed = next(r for r in fwd if r["num_seqs"] == "4")
    assert packed["seqlens"] == "8192+8192+8192+8192" and packed["total_tokens"] == "32768"


def test_backward_rows_match_on_tokens_and_count_and_have_no_flashinfer():
    b = parse_results(RESULTS, script_layouts(SCRIPT))
    bwd = [r for r in b.rows if r["mode"] == "bwd"]
    printed = printed_rows("BACKWARD")
    assert len(bwd) == len(printed) and all(r["seqlens"] == "" and r["flashinfer_ms"] == "" for r in bwd)
    for row, words in zip(bwd, printed):
        assert row["num_seqs"] == words[-4] and [row["flash_qla_ms"], row["fla_ms"]] == [words[-3][:-2], words[-2][:-2]]
    assert {r["total_tokens"] for r in bwd} == {"8192", "32768"}


def test_a_backend_that_failed_is_an_empty_cell_and_its_warning_no_row():
    text = RESULTS.replace("0.407ms", "     N/A  ", 1).replace(
        "397B/122B TP4    1x16384", "[WARN] FI Fwd failed: boom\n397B/122B TP4    1x16384", 1)
    b = parse_results(text, script_layouts(SCRIPT))
    packed = next(r for r in b.rows if r["seqlens"] == "8192+8192+8192+8192")
    assert packed["flashinfer_ms"] == "" and packed["flash_qla_ms"] != ""
    assert b.notes == ("[WARN] FI Fwd failed: boom",)
    assert len(b.rows) == len(parse_results(RESULTS, script_layouts(SCRIPT)).rows)


@pytest.mark.parametrize("change, message", [
    (("FI [fwd]", "FI [bwd]"), "column header"),
    (("8192x4", "8192x3"), "defines no case '8192x3'"),
    (("0.762ms", "0.762"), "is not a bwd row"),
    (("GPU: NVIDIA GB200", "Card: NVIDIA GB200"), "names no GPU"),
])
def test_another_format_is_refused_with_the_line(change, message):
    with pytest.raises(QlabenchError, match=message):
        parse_results(RESULTS.replace(*change, 1), script_layouts(SCRIPT))


def test_the_csv_is_the_published_tables_format():
    b = parse_results(RESULTS, script_layouts(SCRIPT))
    text = to_csv(b.rows)
    shipped = (ROOT / "qlabench" / "analyze" / "data" / "flashqla_h200_published.csv").read_bytes()
    assert text.encode().split(b"\r\n", 1)[0] == shipped.split(b"\r\n", 1)[0]  # same columns, same line ends
    assert list(csv.DictReader(io.StringIO(text))) == [dict(r) for r in b.rows]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def test_the_converter_writes_each_table_with_its_source_commit_and_header(tmp_path):
    repo = tmp_path / "FlashQLA"
    (repo / "benchmark").mkdir(parents=True)
    (repo / "benchmark" / "bench_gated_delta_rule.py").write_text(SCRIPT)
    (repo / "benchmark" / "benchmark_results_GB200.txt").write_text(RESULTS)
    (repo / "setup.py").write_text('setup(name="flash-qla", version="9.8.7" + rev)\n')
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "results")
    commit = _git(repo, "rev-parse", "HEAD").strip()
    out = tmp_path / "data"
    out.mkdir()
    run = [sys.executable, str(ROOT / "scripts" / "flashqla_published.py"), str(repo / ".git"), "--out", str(out)]
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    subprocess.run(run, check=True, capture_output=True, env=env)
    (table,) = json.loads((out / "flashqla_published.json").read_text())["tables"]
    assert table["csv"] == "flashqla_gb200_published.csv" and table["commit"] == commit
    assert table["path"] == "benchmark/benchmark_results_GB200.txt" and table["header"] == RESULTS.splitlines()[:5]
    assert table["flash_qla_version"] == "9.8.7" and table["modes"] == ["fwd", "bwd"]
    assert (out / table["csv"]).read_bytes() == to_csv(parse_results(RESULTS, script_layouts(SCRIPT)).rows).encode()
    check = subprocess.run(run + ["--check"], capture_output=True, text=True, env=env)
    assert check.returncode == 0, check.stdout
    (out / table["csv"]).write_text("edited by hand\n")
    check = subprocess.run(run + ["--check"], capture_output=True, text=True, env=env)
    assert check.returncode == 1 and "differs" in check.stdout
