"""scripts/study_cost.py reads the committed study rows: FLA's per-point tuning is its first calls, and the
projection covers every point of the suite (the figures docs/BENCHMARKS.md quotes)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_study_cost_names_the_tuning_and_projects_the_whole_suite():
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, str(root / "scripts" / "study_cost.py")], capture_output=True, text=True,
                         cwd=root, check=True).stdout
    assert "| 1397cf | fla | 53 | 2 | 12.318 | 4.064 | 215.656 |" in out
    assert "in points per run:" in out and "1397cf 295 points 516.2 s" in out
    assert "## Suite flashqla-study: " in out
    tuning = out.split("## Of which per-point tuning")[1]
    assert "| fla |" in tuning and "| flash_qla |" not in tuning  # only the backends that autotune
