"""docs/upstream/fla-intracp-packed/repro.py goes to FLA's maintainers as it is: it must stand alone (torch
and fla, no qlabench) and its float64 reference must be right. The GPU part runs on a CUDA host only."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPRO = Path(__file__).resolve().parents[2] / "docs" / "upstream" / "fla-intracp-packed" / "repro.py"


def test_repro_imports_only_torch_and_fla():
    tree = ast.parse(REPRO.read_text())
    roots = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    roots |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert roots - set(sys.stdlib_module_names) == {"torch", "fla", "triton"}


def test_repro_float64_reference_matches_the_token_loop():
    r = subprocess.run([sys.executable, str(REPRO), "--self-test"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "relative error" in r.stdout


def test_the_plan_marks_exactly_the_split_sequences_after_the_first_as_wrong():
    """FLA's own planner (no GPU): only the second and later split sequences of a call get wrong summaries."""
    import pytest

    pytest.importorskip("triton")
    pytest.importorskip("fla")
    r = subprocess.run([sys.executable, str(REPRO), "--plan", "132"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    verdicts = [ln.split(":")[0].strip() + (" WRONG" if "WRONG" in ln else " right")
                for ln in r.stdout.splitlines() if ln.startswith("  sequence ")]
    assert verdicts == ["sequence 1 (32768 tokens, 4 sub-sequences) right",
                        "sequence 2 (32768 tokens, 4 sub-sequences) WRONG",
                        "sequence 3 (32768 tokens, 4 sub-sequences) WRONG",
                        "sequence 4 (32768 tokens, 4 sub-sequences) WRONG",
                        "sequence 3 (56958 tokens, 7 sub-sequences) right",
                        "sequence 4 (26323 tokens, 4 sub-sequences) WRONG",
                        "sequence 1 (131072 tokens, 8 sub-sequences) right"]
