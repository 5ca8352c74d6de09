"""`qlabench report --large-batch RESULTS --out DIR` end to end: the page and its figures from a results folder, a
row over its tolerance shown as incorrect and never as a time, and one clear error (exit 2) for a bare call or a
flag of another page."""

from __future__ import annotations

import subprocess
import sys

H = dict(h_qk=2, h_v=8, K=16, V=16, dtype="float32", layout="varlen", batch=1, timer="graph", device="NVIDIA H200")
QLA = ("tilelang_chunk_local_cumsum_kernel_kernel", "tilelang_kkt_solve_kernel_kernel",
       "tilelang_fused_chunk_gdr_fwd_kernel_kernel")
FI = ("kernel_cutlass_kernel_flashinfergdn_FullyFusedDeltaRuleSm90_object_at__t",)


def _qlabench(*args, cwd):
    return subprocess.run([sys.executable, "-m", "qlabench", *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def test_report_large_batch_writes_the_page_from_a_results_folder(tmp_path, make_row):
    from qlabench.store.files import write_rows

    def row(backend, n, length, ms, us, run, **kw):
        kernels = QLA if backend.startswith("flash_qla") else FI
        when = {"run-qla": "2026-12-02T07:01:43+00:00", "run-fi": "2026-12-02T07:02:44+00:00"}[run]
        return make_row(**H, backend=backend, seqlens=(length,) * n, num_seqs=n, total_tokens=n * length,
                        median_ms=ms, rel_noise=0.001, run_id=run, timestamp=when, kernels=kernels[: len(us)],
                        kernel_dur_us=us, **kw)

    write_rows(tmp_path / "r" / "large-batch" / "a.parquet", [
        row("flash_qla-nocp", 4, 256, 0.300, (5.0, 100.0, 190.0), "run-qla"),
        row("flash_qla-nocp", 16, 64, 0.340, (5.0, 100.0, 230.0), "run-qla"),
        # its check over tolerance: believed incorrect, and its 0.111 ms is never shown
        row("flash_qla", 16, 64, 0.111, (5.0, 100.0, 5.0), "run-qla", err_o=1.0)])
    write_rows(tmp_path / "r" / "large-batch" / "b.parquet", [
        row("flashinfer-nocp", 4, 256, 0.200, (195.0,), "run-fi"),
        row("flashinfer-nocp", 16, 64, 0.240, (235.0,), "run-fi")])
    out = tmp_path / "page"
    proc = _qlabench("report", "--large-batch", tmp_path / "r", "--out", out, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "5 rows (4 ok, 1 incorrect) of 2 problems, 3 backends, 2 runs" in proc.stdout
    assert "wrote" in proc.stdout and "2 figures" in proc.stdout
    text = (out / "large-batch.md").read_text()
    assert text.startswith("# Large packed batches: does FlashQLA's split cost it?")
    assert f"`qlabench report --large-batch {tmp_path / 'r'} --out {out}`" in text
    assert "- A: run run-qla: 2026-12-02" in text and "- B: run run-fi: 2026-12-02" in text  # each run, by letter
    assert "Those ratios are across runs: flash_qla-nocp from A `run-qla`, flashinfer-nocp from B `run-fi`" in text
    assert "**The split's passes do not grow with the batch.**" in text
    assert "| h2/8 | 64x16 packed |" not in text and "| h2/8 | 16x64 packed | 1024 | incorrect | 0.340 | **0.240** |" in text
    assert "0.111" not in text
    assert (out / "large_batch_time.png").is_file() and (out / "large_batch_kernels.png").is_file()


def test_report_large_batch_needs_results_and_no_other_page(tmp_path):
    bare = _qlabench("report", "--large-batch", "--out", tmp_path / "p", cwd=tmp_path)
    assert bare.returncode == 2 and "give the large-batch result folders" in bare.stderr, bare.stderr
    assert "Traceback" not in bare.stderr
    both = _qlabench("report", "--large-batch", "--serving", tmp_path, "--out", tmp_path / "p", cwd=tmp_path)
    assert both.returncode == 2 and "--large-batch is a page of its own" in both.stderr, both.stderr
    assert not (tmp_path / "p").exists()
