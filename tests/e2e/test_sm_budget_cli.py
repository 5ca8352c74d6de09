"""A suite with `sm_budget` on a machine without green contexts: one line and exit 2 before anything runs,
never a traceback nor an error row per point; its dry run still lists the points."""

from __future__ import annotations

import subprocess
import sys

SUITE = """
name = "budget-cpu"
device = "cpu"
[sweep]
backends = ["naive-chunk"]
seqlen = [64]
heads = [{ h_qk = 2, h_v = 4 }]
K = 16
V = 16
dtype = "float32"
sm_budget = [32, "all"]
"""


def _qlabench(*args, cwd):
    return subprocess.run([sys.executable, "-m", "qlabench", *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def test_a_cpu_suite_with_a_budget_is_one_clear_error(tmp_path):
    suite = tmp_path / "budget.toml"
    suite.write_text(SUITE)
    proc = _qlabench("run", "sweep", "--suite", suite, "--out", tmp_path / "r", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "error: the suite holds points to SM budgets (32 SMs), which need a CUDA GPU with green contexts; this "
        "run is on cpu: drop sm_budget from the suite, or run on a GPU"]
    assert not (tmp_path / "r").exists()  # nothing measured, nothing written
    dry = _qlabench("run", "sweep", "--suite", suite, "--dry-run", cwd=tmp_path)
    assert dry.returncode == 0 and "sm32" in dry.stdout and "2 points" in dry.stdout, dry.stdout + dry.stderr


def test_show_narrows_to_a_budget_and_prints_the_memory_beside_the_time(tmp_path, make_row):
    from qlabench.store.files import write_rows

    rows = [make_row(backend=b, sm_budget=budget, median_ms=ms, extra_mem_mib=mem)
            for b, budget, ms, mem in (("naive-chunk", None, 2.0, 3.0), ("fla", None, 1.0, 40.0),
                                       ("naive-chunk", 16, 8.0, 3.0), ("fla", 16, 4.0, 41.0))]
    write_rows(tmp_path / "r" / "t" / "run.parquet", rows)
    proc = _qlabench("show", tmp_path / "r", "--sm-budget", 16, "--format", "markdown", "--baseline", "naive-chunk",
                     cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    table = [line for line in proc.stdout.splitlines() if line.startswith("| fwd")]
    assert len(table) == 1 and "1x64 sm16" in table[0] and "4.000 (2.00x)" in table[0] and "+41 MiB" in table[0]
    none = _qlabench("show", tmp_path / "r", "--sm-budget", 32, cwd=tmp_path)
    assert none.returncode == 2 and "no rows left after the sm_budget filter" in none.stderr, none.stderr


def test_report_sm_budget_writes_the_page_from_the_rows(tmp_path, make_row):
    from qlabench.store.files import write_rows

    rows = [make_row(backend=b, sm_budget=budget, sm_granted=budget, num_sms=132, median_ms=ms, extra_mem_mib=8.0)
            for b, budget, ms in (("naive-chunk", None, 2.0), ("fla", None, 1.0), ("naive-chunk", 16, 8.0),
                                  ("fla", 16, 6.0))]
    write_rows(tmp_path / "r" / "t" / "run.parquet", rows)
    proc = _qlabench("report", "--sm-budget", tmp_path / "r", "--out", tmp_path / "page", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 rows (4 ok) of 1 problem" in proc.stdout and "wrote" in proc.stdout
    text = (tmp_path / "page" / "sm-budget.md").read_text()
    assert "| fwd h2/4 1x64 | 16 | fla |" in text and (tmp_path / "page" / "sm_budget_time_fwd.png").is_file()
    bare = _qlabench("report", "--sm-budget", "--out", tmp_path / "p2", cwd=tmp_path)
    assert bare.returncode == 2 and "give the SM-budget result folders" in bare.stderr


def test_advise_at_a_budget_answers_from_the_rows_at_it(tmp_path, make_row):
    from qlabench.store.files import write_rows

    h = dict(h_qk=8, h_v=32, K=128, V=128, dtype="bfloat16", model="qwen3.5-397b", tp=2, layout="varlen", batch=1,
             seqlens=(32768,), num_seqs=1, total_tokens=32768, timer="graph", flash_qla_version="0.1.3",
             fla_version="0.6.0")
    rows = [make_row(**h, backend=b, sm_budget=budget, median_ms=ms, extra_mem_mib=mem)
            for b, budget, ms, mem in (("flash_qla", None, 1.0, 40.0), ("fla", None, 2.0, 8.0),
                                       ("flash_qla", 32, 6.0, 40.0), ("fla", 32, 5.0, 8.0))]
    write_rows(tmp_path / "r" / "t" / "run.parquet", rows)
    args = ("advise", tmp_path / "r", "--model", "qwen3.5-397b", "--tp", 2, "--seqlens", 32768)
    proc = _qlabench(*args, "--sm-budget", 32, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = " ".join(proc.stdout.split())
    # ranked on the budget's rows alone (fla is faster there); the candidates are the backends these rows measured
    assert "held to 32 SMs" in out and "extra MiB" in out, out
    assert "32768 on cpu: use fla, 5.000 ms graph" in out, out
    none = _qlabench(*args, "--sm-budget", 16, cwd=tmp_path)
    assert none.returncode == 0 and "no row here was measured at an SM budget of 16" in " ".join(none.stdout.split())
