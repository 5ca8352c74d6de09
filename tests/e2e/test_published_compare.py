"""scripts/published_compare.py runs in a fresh environment: it needs no package qlabench does not declare."""

from __future__ import annotations


def test_published_compare_runs_with_declared_dependencies_only():
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    # tabulate is not a dependency: block it, as a fresh environment would not have it
    code = ("import sys, runpy; sys.modules['tabulate'] = None; sys.argv = sys.argv[1:]; "
            "runpy.run_path(sys.argv[0], run_name='__main__')")
    out = subprocess.run([sys.executable, "-c", code, str(root / "scripts" / "published_compare.py"),
                          str(root / "results" / "h200" / "20261129T184128Z-400a97.parquet")],
                         capture_output=True, text=True, cwd=root, check=True).stdout
    assert out.startswith("| h_qk/h_v | seqlens |") and "| pub flash_qla ms |" in out
    assert "| 16/32 | 32768 |" in out

