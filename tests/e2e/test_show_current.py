"""`qlabench show` with no results reads the current evidence results/catalog.toml names, as advise does."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.store.catalog import load_catalog

REPO = Path(__file__).resolve().parents[2]


def test_show_without_results_reads_the_current_evidence(monkeypatch):
    monkeypatch.chdir(REPO)
    r = CliRunner().invoke(app, ["show", "--model", "qwen3.5-397b", "--tp", "8", "--seqlen", "32768", "--mode", "fwd",
                                 "--baseline", "fla", "--no-other-evidence", "--format", "csv"])
    assert r.exit_code == 0, r.output
    table = pd.read_csv(io.StringIO(r.output))
    current = {b for e in load_catalog(REPO / "results").current("kernel-timings") for b in (e.backends or ())}
    assert "flashinfer-nocp" in table.columns  # FlashInfer 0.7.2's run is current
    assert current <= set(table.columns) | {"fla-intracp"}
