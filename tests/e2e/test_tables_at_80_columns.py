"""`show` and `compare` piped (not a terminal: 80 columns) read whole: a table too wide for 80 columns
becomes one block per row, each value on a line with its name, never folded one word per line."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.store.files import write_rows

REPO = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
BACKENDS = (("fla", 0.240), ("flash_qla", 0.124), ("flash_qla-nocp", 0.256), ("flash_qla-forcecp", 0.125),
            ("flashinfer", 0.300))


def _run(*args) -> str:
    got = CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "80"})
    assert got.exit_code == 0, got.output
    return got.output


def test_show_of_five_backends_reads_a_backend_and_its_time_on_one_line(tmp_path, make_row):
    rows = [make_row(backend=b, model="qwen3.5-397b", tp=8, h_qk=2, h_v=8, K=128, V=128, dtype="bfloat16",
                     layout="varlen", seqlens=s, num_seqs=len(s), total_tokens=sum(s), median_ms=ms * sum(s) / 8192)
            for s in ((8192,), (1024, 7168)) for b, ms in BACKENDS]
    f = write_rows(tmp_path / "r.parquet", rows)
    out = _run("show", f, "--baseline", "fla", "--no-other-evidence")
    assert max(map(len, out.splitlines())) <= 80
    lines = out.splitlines()
    for b, ms in BACKENDS:  # '  flash_qla-forcecp   0.125 (1.92x) ...': name, time and speedup together
        assert any(ln.split()[:2] == [b, f"{ms:.3f}"] for ln in lines), (b, out)
    assert any("qwen3.5-397b TP8 (h2/8)" in ln and "1024+7168" in ln for ln in lines), out


def test_compare_piped_keeps_its_reasons_whole():
    gate = REPO / "results" / "h200-gate"
    out = _run("compare", gate / "aa-a" / "flashqla-study-stack", gate / "aa-b" / "flashqla-study-stack",
               "--accept-inconclusive")
    assert max(map(len, out.splitlines())) <= 80
    assert "run-to-run noise" in out and "qwen3.5-397b TP8 (h2/8)" in out  # never 'run-to-ru' / 'n noise'


def test_advise_piped_answers_first_and_never_wraps_a_backend_name(monkeypatch):
    """The README's question from the committed evidence: the answer of each case in the first lines (the winner,
    its time and speedup, the call, each engine's switch), then the rankings, stacked at 80 columns with every
    backend's name whole on its line."""
    import json
    import re

    monkeypatch.chdir(REPO)
    ask = ["advise", "--model", "qwen3.5-397b", "--tp", "8", "--seqlens", "32768,4x8192,8x1024", "--gpu", "H200"]
    cases = json.loads(_run(*ask, "--format", "json"))["cases"]  # the H200's (the H100's are answered apart)
    out = _run(*ask)
    lines = out.splitlines()
    assert max(map(len, lines)) <= 80, out
    heads = [i for i, ln in enumerate(lines) if re.match(r"^\S+ on NVIDIA H200: ", ln)]
    # the answer first: every case's head before the first ranking (however many lines a tie set takes)
    first_rank = next(i for i, ln in enumerate(lines) if re.match(r"^ *1\. \S", ln))
    assert len(heads) == len(cases) == 3 and heads[0] == 1 and heads[-1] < first_rank, out
    ends = [*heads[1:], lines.index("", heads[-1])]  # each case's head runs to the next one (the last to a blank)
    for i, end, case in zip(heads, ends, cases):
        best = case["recommended"] or case["provisional"]
        ms = next(e["time_ms"] for e in case["entries"] if e["backend"] == best)
        # the answer's head: one winner, or a tie within the measured spread (its times a range from the first's),
        # wrapped onto indented lines where it runs past 80 columns
        call = next(j for j in range(i + 1, i + 4) if lines[j].startswith("  call: "))
        head = " ".join(ln.strip() for ln in lines[i:call])
        if case["tie"]:
            assert head.startswith(f"{case['case']} on NVIDIA H200: tie: {', '.join(case['tie'])}, {ms:.3f}-"), head
        else:
            assert head.startswith(f"{case['case']} on NVIDIA H200: use {best}, {ms:.3f} ms"), head
        assert "x vs fla" in head
        assert lines[call].split("(")[0].endswith("chunk_gated_delta_rule")
        assert any(ln.startswith("  vLLM: ") for ln in lines[call:end])  # after the call, however long it wraps
    names = {e["backend"] for c in cases for e in c["entries"]}
    for b in names:  # each ranked entry leads a line of its own, its name whole
        assert sum(bool(re.match(rf"^ ?\d+\. {re.escape(b)}\s+\d", ln)) for ln in lines) == 3, (b, out)
        for top, below in zip(lines, lines[1:]):  # and no name is cut at a line's end
            for k in range(1, len(b)):
                assert not (top.rstrip().endswith(b[:k]) and below.lstrip().startswith(b[k:])), (b, top, below)
