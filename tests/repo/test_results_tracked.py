"""Every folder results/README.md lists as committed evidence is in git, and no rule of .gitignore hides it.

results/ ignores everything but the folders .gitignore lets through. A folder that was written, listed here
and cited by the docs, but never let through, stays on the machine that made it: the docs then describe
rows no clone has (it happened to h200-serving and h200-intracp)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
LISTED = re.compile(r"^\| `([\w.-]+)/`", re.M)  # a row of the folder table


def _git(*args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
    except OSError:
        pytest.skip("no git")


def listed_folders() -> list[str]:
    return LISTED.findall((REPO / "results" / "README.md").read_text())


def test_the_readme_lists_the_evidence_folders():
    assert {"h200-study", "h200-serving", "h200-intracp", "h200-numerics"} <= set(listed_folders())


@pytest.mark.parametrize("folder", listed_folders())
def test_a_listed_folder_is_tracked_and_not_ignored(folder):
    if _git("rev-parse", "--is-inside-work-tree").returncode != 0:
        pytest.skip("not a git checkout")
    probe = f"results/{folder}/x/run.parquet"
    assert _git("check-ignore", "-q", "--no-index", probe).returncode == 1, f"{probe} is ignored by .gitignore"
    assert _git("ls-files", f"results/{folder}").stdout.strip(), f"results/{folder} has no tracked file"
