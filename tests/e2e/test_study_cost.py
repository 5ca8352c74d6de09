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
    tuning = out.split("## Of which per-point tuning")[1].split("## ")[0]
    assert "| fla |" in tuning and "| flash_qla |" not in tuning  # only the backends that autotune


def test_the_whole_suite_as_measured_counts_every_point_once_and_prices_the_unmeasured_apart():
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, str(root / "scripts" / "study_cost.py")], capture_output=True, text=True,
                         cwd=root, check=True).stdout
    whole = out.split("## The whole suite as measured")[1]
    table = [line.strip("|").split("|") for line in whole.splitlines() if line.startswith("| ") and "---" not in line]
    head, body = [c.strip() for c in table[0]], [[c.strip() for c in r] for r in table[1:]]
    col = {name: i for i, name in enumerate(head)}
    assert sum(int(r[col["suite points"]]) for r in body) == 2066  # the suite's every point, once
    for r in body:
        assert int(r[col["suite points"]]) == int(r[col["own row"]]) + int(r[col["at median"]]) + int(
            r[col["not priced"]])
    intracp = next(r for r in body if r[col["backend"]] == "fla-intracp")
    assert int(intracp[col["at median"]]) > 0  # the points without a row of their own are priced apart
    assert "points at their own row's seconds" in whole.splitlines()[-1]
