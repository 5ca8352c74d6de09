"""Every committed result folder and file reads with `qlabench show`, and compares with itself.

results/README.md promises that every command reads the committed files; a file written without
qlabench's schema metadata, or a derived table that a folder walk takes for results, breaks it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from qlabench.cli import app

REPO = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
RESULTS = REPO / "results"
FOLDERS = sorted(d for d in RESULTS.iterdir() if d.is_dir() and any(d.rglob("*.parquet")))
FILES = sorted(f for f in RESULTS.rglob("*.parquet") if not f.name.endswith(".kernels.parquet"))


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_the_results_tree_holds_committed_files():
    assert FOLDERS and FILES


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_show_and_compare_read_every_committed_folder(folder):
    # --no-other-evidence: each folder alone (the sibling-folder scan has its own tests, analyze/test_evidence.py)
    shown = invoke("show", folder, "--no-other-evidence")
    assert shown.exit_code == 0, shown.output
    # a folder against itself: the same times, but points too noisy for the threshold are inconclusive (exit 3)
    compared = invoke("compare", folder, folder, "--accept-inconclusive")
    assert compared.exit_code == 0, compared.output


def test_every_committed_results_file_reads_on_its_own():
    """What `show FILE` reads first (the folders above run the command itself)."""
    import pyarrow.parquet as pq

    from qlabench.core.errors import QlabenchError
    from qlabench.store.files import TABLE_KEY, read_table

    failed = {}
    for f in FILES:
        if TABLE_KEY in (pq.read_schema(f).metadata or {}):
            continue  # a derived table (selfbench medians), not result rows
        try:
            read_table(f)
        except QlabenchError as e:
            failed[str(f.relative_to(REPO))] = str(e)
    assert not failed, failed
